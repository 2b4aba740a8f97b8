import HuddleClient
import HuddleProtocol

/// The `memory_changed` events this device's own commands will cause. The server sends every
/// change to all of the user's connections, the one that made it included (after its reply,
/// which huddle-chat has already shown): those are recognised here and not shown twice, so a
/// `[memory]` line always means another device. A command expects its echo in its reply's
/// completion, which the client runs before it reads the event that follows the reply.
struct MemoryEchoes {
    /// A change's identity: what it did and to which memory and point (a memory's id, and a
    /// point's within it, are never reused, so another device's change cannot look the same).
    struct Key: Hashable {
        var action: String
        var memory: UInt64
        var point: UInt64?
    }

    /// Oldest first. An echo lost with a dropped connection never comes: past this many the
    /// oldest are forgotten, so the list stays small.
    private var expected: [Key] = []
    static let limit = 32

    mutating func expect(_ key: Key) {
        expected.append(key)
        if expected.count > Self.limit { expected.removeFirst(expected.count - Self.limit) }
    }

    /// Whether `change` is the echo of one of this device's commands (then it is forgotten).
    mutating func isEcho(_ change: MemoryChange) -> Bool {
        guard let index = expected.firstIndex(of: Self.key(change)) else { return false }
        expected.remove(at: index)
        return true
    }

    static func key(_ change: MemoryChange) -> Key {
        switch change {
        case .created(let memory): return Key(action: "created", memory: memory.id)
        case .updated(let memory): return Key(action: "updated", memory: memory.id)
        case .deleted(let id): return Key(action: "deleted", memory: id)
        case .pointAdded(let memory, let point): return Key(action: "point_added", memory: memory.id, point: point.id)
        case .pointUpdated(let memory, let point): return Key(action: "point_updated", memory: memory.id, point: point.id)
        case .pointDeleted(let memory, let point): return Key(action: "point_deleted", memory: memory.id, point: point)
        }
    }
}
