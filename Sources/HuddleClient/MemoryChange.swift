import HuddleProtocol

/// A change to one of the signed-in user's memories (protocol.md, "Events": `memory_changed`),
/// sent to all of the user's live connections — the one that made it too, after its reply.
///
/// Live only: nothing replays them after a drop. When `HuddleEvent.connected` says `resumed`,
/// read `memories` again and fetch with `memory` each one whose `updatedAt` is newer than the
/// copy; one missing from the list was deleted.
public enum MemoryChange: Sendable, Equatable {
    /// A new memory (it has no points yet).
    case created(Memory)
    /// Its title, date, place name or position changed.
    case updated(Memory)
    /// The memory and its points are gone.
    case deleted(memory: UInt64)
    /// `memory` (without points) has its new `pointCount` and `updatedAt`.
    case pointAdded(Memory, MemoryPoint)
    case pointUpdated(Memory, MemoryPoint)
    case pointDeleted(Memory, point: UInt64)

    /// The memory the change is about.
    public var memoryID: UInt64 {
        switch self {
        case .created(let memory), .updated(let memory), .pointAdded(let memory, _), .pointUpdated(let memory, _), .pointDeleted(let memory, _):
            return memory.id
        case .deleted(let id):
            return id
        }
    }

    /// The change a `memory_changed` event tells, and its server time; nil for an action this
    /// client does not know or an event of the wrong shape.
    static func decode(_ message: JSONValue) -> (change: MemoryChange, time: Int64)? {
        do throws(HuddleClientError) {
            let time = try message.requiredInt64("time")
            func memory() throws(HuddleClientError) -> Memory { try Memory.decode(try message.requiredObject("memory")) }
            func point() throws(HuddleClientError) -> MemoryPoint { try MemoryPoint.decode(try message.requiredObject("point")) }
            switch try message.requiredString("action") {
            case "created": return (.created(try memory()), time)
            case "updated": return (.updated(try memory()), time)
            case "deleted": return (.deleted(memory: try message.requiredUInt64("memory_id")), time)
            case "point_added": return (.pointAdded(try memory(), try point()), time)
            case "point_updated": return (.pointUpdated(try memory(), try point()), time)
            case "point_deleted": return (.pointDeleted(try memory(), point: try message.requiredUInt64("point_id")), time)
            default: return nil
            }
        } catch {
            return nil
        }
    }
}
