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

    /// Counts a logged turn's deletions on /metrics (`DeletionMetrics`), on the node that
    /// decided them.
    func countDeletions(in commands: [CoreCommand]) {
        for command in commands {
            switch command {
            case .eraseUser: metrics.deletions.accountsDeleted.add(1, ordering: .relaxed)
            case .removePublication: metrics.deletions.publicationsRemoved.add(1, ordering: .relaxed)
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

extension CoreCommand {
    /// A deletion whose content must leave the disk soon: the runner then snapshots twice.
    var erasesContent: Bool {
        switch self {
        case .eraseUser, .removePublication, .removeComment: true
        default: false
        }
    }
}
