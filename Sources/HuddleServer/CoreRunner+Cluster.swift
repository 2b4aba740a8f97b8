import Glibc
import HuddleCore
import HuddleIO

/// The turn in cluster mode (docs/ARCHITECTURE.md, "Cluster mode"): requests are decided as in
/// a single node, against this node's copy, which is current up to the shared log's position
/// P; at the turn's end its commands go to Redis as one entry at P+1 and its outputs are held
/// until the outcome. Acknowledged: the outputs go out. Position taken by another node: the turn
/// is taken back, the missed entries applied, the turn's writes decided again and appended at
/// the new top. Redis unreachable or the outcome unknown: the turn is taken back and its writes
/// answered `unavailable` until the writer is back (an append that did land is applied later
/// like any other node's entry: clients retry idempotently with `client_id`).
extension CoreRunner {
    func startCluster() {
        guard let cluster else { return }
        cluster.onEntries = { [unowned self] in
            guard !clusterTurn.appending, turn.isEmpty else { return }  // applied when the turn ends
            applyLogEntries()
            sendOutbox()
        }
        cluster.onWriterStatus = { [unowned self] connected in
            if connected, writesRefused != nil {
                writesRefused = nil
                logger.notice("the shared log takes writes again; accepting writes")
            } else if !connected {
                refuseWrites(because: "the shared log (Redis) is unreachable")
            }
        }
        cluster.start()
    }

    /// Whether `request` is handled now; false when an append is in flight (it waits for the
    /// next turn). Takes the checkpoint before a turn's first request.
    func admitToClusterTurn(_ request: CoreRequest, op: String?, submitted: UInt64) -> Bool {
        if clusterTurn.appending {
            clusterTurn.waiting.append(ClusterTurnState.WaitingRequest(request: request, op: op, submitted: submitted))
            return false
        }
        if clusterTurn.checkpoint == nil { clusterTurn.checkpoint = core.turnCheckpoint() }
        return true
    }

    func endClusterTurn() {
        if !clusterTurn.appending {
            let commands = turn.flatMap(\.step.commands)
            if commands.isEmpty, !answersFromKeptResults {
                if !turn.isEmpty { finishTurn(logged: true) }
                clusterTurn.checkpoint = nil
                applyLogEntries()
                snapshotIfDue()
            } else {
                appendTurn(commands)
            }
        }
        sendOutbox()
        continueErasure(afterChunk: true)
    }

    /// With `--redis-wait-replicas`, a write answered from its kept result (a retry by
    /// `client_id`: `duplicate`, `alreadyPublished`) is acknowledged like a first one: the turn appends an entry
    /// (with no commands when nothing else wrote) and its WAIT decides. The kept result may come
    /// from an entry whose WAIT fell short, applied here from the log: a failover can still lose
    /// it, and an ok sent without the WAIT would be an acknowledged write lost (seen in
    /// `ClusterFailoverTests`). Replicas that have the new entry have everything before it.
    private var answersFromKeptResults: Bool {
        guard let cluster, cluster.settings.waitReplicas > 0 else { return false }
        return turn.contains { $0.step.outputs.contains(where: \.isDuplicateReply) }
    }

    private func appendTurn(_ commands: [CoreCommand]) {
        guard let cluster else { return }
        clusterTurn.appending = true
        cluster.append(commands) { [unowned self] outcome in
            switch outcome {
            case .appended:
                countDeletions(in: commands)
                finishTurn(logged: true)
                turnDone()
            case .positionTaken:
                decideAgain()
            case .rebuilding:
                takeTurnBack(because: "this node's state is rebuilt from a snapshot and the log first")
            case .failed(let error):
                takeTurnBack(because: "\(error)")
            }
        }
    }

    /// Another node appended first: the turn is taken back whole (its outputs were all held),
    /// the entries this node missed applied, and every request of the turn decided again in
    /// its order on top of them.
    private func decideAgain() {
        guard let cluster, let checkpoint = clusterTurn.checkpoint else { return }
        cluster.fetchMissed { [unowned self] error in
            if let error {
                takeTurnBack(because: "\(error)")
                return
            }
            core.restore(checkpoint)
            applyLogEntries()
            if cluster.rebuild != nil {
                // Deciding again on this copy would only meet taken positions, or land on
                // entries it does not hold: rebuild first.
                takeTurnBack(because: "this node's state is rebuilt from a snapshot and the log first")
                return
            }
            clusterTurn.checkpoint = core.turnCheckpoint()
            let now = WallClock.milliseconds()
            for index in turn.indices where turn[index].refusal == nil {
                turn[index].step = core.handle(turn[index].request, at: now)
                if turn[index].routed != nil { turn[index].routed = routeRead(turn[index]) }
            }
            let commands = turn.flatMap(\.step.commands)
            if commands.isEmpty, !answersFromKeptResults {
                finishTurn(logged: true)
                turnDone()
            } else {
                clusterTurn.appending = false
                appendTurn(commands)
                sendOutbox()  // the missed entries' events
            }
        }
    }

    /// The append failed, its outcome is unknown, or too few replicas have it: the turn's
    /// writes are taken back and answered `unavailable`; with the writer down, later writes
    /// too, until it reconnects.
    private func takeTurnBack(because reason: String) {
        if let checkpoint = clusterTurn.checkpoint { core.restore(checkpoint.durable) }
        if cluster?.writerConnected == true {
            logger.warning("a turn was not logged; its writes are answered unavailable", metadata: ["reason": "\(reason)"])
        } else {
            refuseWrites(because: "the shared log (Redis) did not take a turn: \(reason)")
        }
        if answersFromKeptResults {
            // Their ok waited on this turn's WAIT, like a first write's.
            for index in turn.indices where turn[index].step.commands.isEmpty {
                turn[index].step.outputs = turn[index].step.outputs.map { output in
                    guard output.isDuplicateReply, case .reply(let ref, let requestID, _) = output else { return output }
                    return .reply(ref, requestID: requestID, .failure(CoreError(.unavailable, "the write is not on enough replicas yet; try again later")))
                }
            }
        }
        finishTurn(logged: false)
        turnDone()
    }

    /// After a turn's outcome: its outputs go out, entries that came meanwhile are applied, and
    /// the requests that waited form the next turn (ended by the loop's turn end).
    private func turnDone() {
        clusterTurn.appending = false
        clusterTurn.checkpoint = nil
        applyLogEntries()
        sendOutbox()
        snapshotIfDue()
        let waiting = clusterTurn.waiting
        clusterTurn.waiting.removeAll()
        for next in waiting { process(next.request, op: next.op, submitted: next.submitted) }
    }

    /// Applies the log's entries this node has not applied yet (other nodes' turns, and its own
    /// that landed although their outcome was lost), routing what its connections are owed.
    func applyLogEntries() {
        guard let cluster else { return }
        let now = WallClock.milliseconds()
        for entry in cluster.takeApplicable() {
            for output in core.applyReplicated(entry.commands, at: now) { route(output) }
        }
        if let rebuild = cluster.rebuild, !clusterTurn.appending { rebuildFromSnapshot(rebuild) }
        releaseCaughtUpSignIns()
    }

    /// Between turns only (no append in flight, no turn open): the state is exactly the log's
    /// position, which is what a snapshot must hold.
    private func snapshotIfDue() {
        guard let cluster, let clusterSnapshots, !clusterTurn.appending, turn.isEmpty else { return }
        clusterSnapshots.snapshotIfDue(state: core.durableState, position: cluster.position, coreLoop: loop)
    }

    /// This node's state can no longer go on from the log (`ClusterLog.Rebuild`): its durable
    /// state is replaced by the newest shared snapshot's at or below the last position it shares
    /// with the log (empty at 0 without one), its connections and subscriptions kept (their
    /// clients resume), and reading goes on from there; what the log holds after it is applied
    /// as any entry. Trimmed: the log lost nothing, this node missed what is behind the trim.
    /// Lost entries: a Redis failover promoted a replica without entries this node had applied;
    /// WAIT had refused them, so no client was answered ok for them, but their events may have
    /// gone out; after the rebuild this node holds what every other node holds.
    private func rebuildFromSnapshot(_ rebuild: ClusterLog.Rebuild) {
        guard let cluster, let configuration = configuration.cluster else { return }
        // A snapshot above the log's top (written by a node that held entries the log later
        // lost) is not the others' state: never loaded here.
        let bound: UInt64
        switch rebuild {
        case .trimmed(_, let top): bound = top
        case .lostEntries(let keptUpTo): bound = keptUpTo
        }
        let loaded: (state: CoreDurableState, position: UInt64)?
        do {
            loaded = try ClusterSnapshots.loadNewest(sharedDirectory: configuration.sharedDirectory, atOrBelow: bound, logger: logger)
        } catch {
            logger.critical("cannot rebuild: the shared snapshots cannot be read; exiting", metadata: ["error": "\(error)"])
            exit(70)
        }
        if case .trimmed(let firstInLog, _) = rebuild {
            // The log is trimmed only behind the older of the two kept snapshots, so the newest
            // always reaches it; short of that, applying on would make this copy differ from all.
            guard let loaded, !ClusterSnapshots.isTrimmed(after: loaded.position, firstLogPosition: firstInLog) else {
                logger.critical("behind the log's trim and no shared snapshot reaches the log; exiting", metadata: [
                    "position": "\(cluster.position)", "first-in-log": "\(firstInLog)", "snapshot": "\(loaded?.position ?? 0)",
                ])
                exit(70)
            }
        }
        // Lost entries and no snapshot at or below: the log from its start (if it is trimmed
        // there, the read finds it and the trimmed case takes over).
        let (state, position) = loaded ?? (CoreDurableState(), 0)
        logger.notice("rebuilt from the shared snapshot; applying the log after it", metadata: [
            "position": "\(cluster.position)", "snapshot": "\(position)", "reason": "\(rebuild)",
        ])
        core.restoreDurableState(state)
        cluster.restart(at: position)
        catchUpAfterRebuild()
    }

    /// Requests wait, as behind an append, until the log after the rebuilt state is read (on
    /// the writer's connection, not behind the reader's blocked XREAD) and applied: this node's
    /// clients never see the state in between.
    private func catchUpAfterRebuild() {
        guard let cluster else { return }
        clusterTurn.appending = true
        cluster.fetchMissed { [unowned self] error in
            if let error {
                logger.warning("the log after the rebuilt state could not be read; the reader brings it", metadata: ["error": "\(error)"])
            }
            turnDone()
        }
    }
}
