import HuddleCore
import HuddleStore
import Logging

/// At start-up, before any upload: removes the photo files nobody owns. An account's deletion
/// removes its unshared photos off the core thread after logging; a crash in between leaves
/// their files, which this sweep takes (protocol.md, "Deletion and retention").
enum PhotoSweep {
    static func removeUnowned(from store: PhotoStore, keeping ownership: PhotoOwnership, logger: Logger) throws {
        var removed = 0
        for hash in try store.storedHashes() where ownership.size(of: hash) == nil {
            try store.remove(hash: hash)
            removed += 1
        }
        if removed > 0 { logger.notice("removed photos nobody owns", metadata: ["count": "\(removed)"]) }
    }
}
