import HuddleCore
import HuddleCrypto
import HuddleIO
import HuddleStore

/// Account deletion's work off the core thread: the password check of `account_delete` (in the
/// login lane, like a login's) and the removal of the photos nobody owns any more.
extension CoreRunner {
    func verifyAccountDeletion(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username, _ credentials: Credentials, _ password: String, _ address: String
    ) {
        passwordHashes.run(.login) { [self] in
            let hash = Crypto.pbkdf2SHA256(password: password, salt: credentials.salt, iterations: credentials.iterations, length: credentials.hash.count)
            let matched = Crypto.constantTimeEquals(hash, credentials.hash)
            let finish = CoreRequestBody.finishAccountDeletion(username: username, passwordMatched: matched, address: address)
            // Counted in the op's latency once, by its first half.
            submit(CoreRequest(connection: ref, requestID: requestID, finish), op: nil)
        }
    }

    /// Asks the core for the next chunk of a pending erasure (`HuddleCore+ErasureChunks`),
    /// queued behind the requests already waiting, so other users' requests go between chunks.
    /// After a turn that had a chunk the next follows at once; otherwise (a deletion just
    /// logged, a restart, this node just became the ticker, a chunk not logged) from the tick.
    /// Cluster mode: the ticker decides, as it decides the other durable work of ticks.
    func continueErasure(afterChunk: Bool) {
        if afterChunk {
            guard erasureChunkAsked else { return }
            erasureChunkAsked = false
        }
        guard core.hasPendingErasure, !erasureChunkQueued, writesRefused == nil, cluster?.isTicker ?? true else { return }
        erasureChunkQueued = true
        let interval = configuration.erasureChunkIntervalMilliseconds
        guard interval > 0 else {
            loop.execute { [self] in askForErasureChunk() }
            return
        }
        _ = loop.schedule(after: interval) { [unowned self] in askForErasureChunk() }
    }

    private func askForErasureChunk() {
        erasureChunkQueued = false
        process(.continueErasure, op: nil, submitted: 0)
    }

    /// How long the core took for a request that erased an account or a chunk of its channels
    /// (its `handle`, where the work is done): an info line and `DeletionMetrics`' longest turn,
    /// so the stall a deletion causes everyone else is seen (BENCHMARKS.md, "Issue 16").
    func observeErasure(_ commands: [CoreCommand], since began: UInt64) {
        var event: String?
        var channels = 0
        for command in commands {
            switch command {
            case .eraseUser: event = "account erased"
            case .eraseChannels(_, let names, _):
                event = event ?? "erasure chunk"
                channels += names.count
            case .finishErasure: event = event == "account erased" ? event : "erasure finished"
            default: break
            }
        }
        guard let event else { return }
        erasureChunkAsked = true  // the first chunk follows the deletion's turn at once too
        let nanoseconds = MonotonicClock.nanoseconds() - began
        metrics.deletions.observeCoreTurn(nanoseconds: nanoseconds)
        logger.info("\(event)", metadata: ["core_us": "\(nanoseconds / 1000)", "channels": "\(channels)", "pending": "\(core.durableState.erasures.count)"])
    }

    /// Counts a logged turn's deletions on /metrics (`DeletionMetrics`), on the node that
    /// decided them.
    func countDeletions(in commands: [CoreCommand]) {
        for command in commands {
            switch command {
            case .eraseUser: metrics.deletions.accountsDeleted.add(1, ordering: .relaxed)
            case .removePublication: metrics.deletions.publicationsRemoved.add(1, ordering: .relaxed)
            case .eraseChannels: metrics.deletions.erasureChunks.add(1, ordering: .relaxed)
            default: break
            }
        }
    }

    /// Unlinks the files on a photo worker; a failure is logged and left for the next start's
    /// sweep of unowned photos.
    func removePhotoFiles(_ hashes: [String]) {
        guard let (store, workers) = photoRemoval else { return }
        let logger = logger
        let deletions = metrics.deletions
        workers.run {
            for hash in hashes {
                do {
                    try store.remove(hash: hash)
                    deletions.photosRemoved.add(1, ordering: .relaxed)
                } catch {
                    logger.warning("could not remove an unowned photo; the next start removes it", metadata: ["hash": "\(hash)", "error": "\(error)"])
                }
            }
        }
    }
}

extension CoreRequestBody {
    /// Whether handling this may erase an account (`observeErasure` times those alone, so the
    /// other requests pay no clock reads).
    var mayErase: Bool {
        switch self {
        case .deleteUser, .finishAccountDeletion, .continueErasure: true
        case .identityVerified(let proof): proof.purpose == .deleteAccount
        default: false
        }
    }
}

extension CoreCommand {
    /// A deletion: counted by `countDeletions`.
    var erasesContent: Bool {
        switch self {
        case .eraseUser, .eraseChannels, .finishErasure, .removePublication, .removeComment: true
        default: false
        }
    }

    /// A deletion whose content must leave the disk soon: the runner then snapshots twice. An
    /// account's, once its last chunk is erased (`finishErasure`), which follows the deletion
    /// by as many turns as its channels take.
    var owesSnapshot: Bool {
        switch self {
        case .finishErasure, .removePublication, .removeComment: true
        default: false
        }
    }
}
