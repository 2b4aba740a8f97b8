import HuddleProtocol

/// What `memory_update` and `point_update` do with a position: leave it, replace it, or
/// remove it (sent as `null`).
public enum MemoryPositionChange: Sendable, Equatable {
    case keep
    case set(MemoryPosition)
    case remove
}

extension MemoryPositionChange {
    /// A position to create with, or none.
    init(_ position: MemoryPosition?) {
        self = position.map(Self.set) ?? .keep
    }

    /// The op argument it is sent as.
    var argument: MemoryPositionArgument {
        switch self {
        case .keep: .absent
        case .set(let position): .coordinates(latitude: position.latitude, longitude: position.longitude)
        case .remove: .null
        }
    }
}
