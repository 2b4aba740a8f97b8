import HuddleProtocol

/// What `memory_update` and `point_update` do with a position: leave it, replace it, or
/// remove it (sent as `null`).
public enum MemoryPositionChange: Sendable, Equatable {
    case keep
    case set(MemoryPosition)
    case remove
}
