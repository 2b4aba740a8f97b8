/// When appended records are forced to the disk, as Redis's `appendfsync`.
public enum SyncPolicy: String, Sendable, CaseIterable {
    /// Every batch: the caller syncs after each append and before replying, so an ok reply
    /// survives power loss. One fdatasync per loop turn (group commit), not per record.
    case always
    /// At most once a second: a power loss (not a process crash) loses up to about a second.
    case everySecond
    /// The kernel decides (typically within 30 s); explicit `sync()`, rotation and `close()` still sync.
    case never
}
