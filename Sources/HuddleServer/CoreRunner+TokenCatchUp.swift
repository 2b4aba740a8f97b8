import HuddleCore
import HuddleIO

/// Token sign-ins in cluster mode that name a session this node has not applied yet
/// (`TokenCatchUp`).
extension CoreRunner {
    /// Whether `request` waits for this node to catch up with the log instead of being decided
    /// now: a token sign-in this node does not know, met for the first time.
    func waitsForTokenCatchUp(_ request: CoreRequest, op: String?, submitted: UInt64) -> Bool {
        guard cluster != nil, case .authenticate(let tokenHash) = request.body, let ref = request.connection else { return false }
        if let waiting = tokenCatchUp.waiting[ref] {
            return !waiting.released  // one per connection: the endpoint holds the rest
        }
        guard core.durableState.sessions[tokenHash] == nil else { return false }
        tokenCatchUp.waiting[ref] = TokenCatchUp.Waiting(request: request, op: op, submitted: submitted, since: MonotonicClock.milliseconds())
        countTokenCatchUps()
        readLogTop()
        return true
    }

    /// The request was admitted to a turn: it is decided now, on a state caught up or not.
    func tokenSignInDecided(_ request: CoreRequest) {
        guard case .authenticate = request.body, let ref = request.connection,
              tokenCatchUp.waiting.removeValue(forKey: ref) != nil else { return }
        countTokenCatchUps()
    }

    /// Reads the log after this node's position up to its top (on the writer's connection);
    /// every sign-in waiting without a target then takes the top read as its own.
    private func readLogTop() {
        guard let cluster else { return }
        if tokenCatchUp.reading {
            tokenCatchUp.readAgain = true
            return
        }
        tokenCatchUp.reading = true
        let asking = Set(tokenCatchUp.waiting.filter { $0.value.target == nil }.keys)
        cluster.fetchMissed { [unowned self] error in
            tokenCatchUp.reading = false
            for ref in asking where tokenCatchUp.waiting[ref] != nil {
                // Unreadable: decided as it stands (refused, as without the wait).
                if error != nil { tokenCatchUp.waiting[ref]?.released = true }
                tokenCatchUp.waiting[ref]?.target = cluster.knownTop
            }
            if tokenCatchUp.readAgain {
                tokenCatchUp.readAgain = false
                readLogTop()
            }
            // Entries are applied only between turns; otherwise the turn's end applies them.
            if !clusterTurn.appending, turn.isEmpty {
                applyLogEntries()
                sendOutbox()
            }
            releaseCaughtUpSignIns()
        }
    }

    /// After entries were applied, and each tick (the deadline): those caught up, or out of
    /// time, are decided again in a task of their own.
    func releaseCaughtUpSignIns() {
        guard let cluster, !tokenCatchUp.waiting.isEmpty else { return }
        let now = MonotonicClock.milliseconds()
        for (ref, waiting) in tokenCatchUp.waiting where !waiting.released {
            let caughtUp = waiting.target.map { cluster.position >= $0 } ?? false
            guard caughtUp || now - waiting.since >= TokenCatchUp.deadlineMilliseconds else { continue }
            tokenCatchUp.waiting[ref]?.released = true
            loop.execute { [self] in process(waiting.request, op: waiting.op, submitted: waiting.submitted) }
        }
    }

    private func countTokenCatchUps() {
        metrics.cluster?.tokenSignInsWaiting.store(tokenCatchUp.waiting.count, ordering: .relaxed)
    }
}
