/// A change to one of a user's memories (protocol.md, "Events": `memory_changed`), sent to all
/// of the owner's live connections — the one that made it too, after its reply. The memories
/// here are as after the change, without their points (a point change carries the point).
///
/// Live only: nothing replays them after a drop. A client that was away reads `memories` again
/// and fetches with `memory` each one whose `updatedAt` is newer than its copy.
public enum MemoryChange: Sendable, Equatable {
    /// A new memory (it has no points yet).
    case created(Memory)
    /// Its title, date, place name or position changed.
    case updated(Memory)
    /// The memory and its points are gone.
    case deleted(memory: UInt64)
    /// `memory` has its new `pointCount` and `updatedAt`.
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

    /// `{"event":"memory_changed","action":…,"memory_id":…[,"memory":…][,"point":…][,"point_id":…],"time":…}`
    public func event(time: Int64) -> JSONValue {
        var members: [(String, JSONValue)] = [("event", .string(ServerEvent.memoryChanged))]
        func add(_ action: String, _ memory: Memory?, point: MemoryPoint? = nil, pointID: UInt64? = nil) {
            members.append(("action", .string(action)))
            members.append(("memory_id", .integer(memoryID)))
            if let memory { members.append(("memory", memory.json)) }
            if let point { members.append(("point", point.json)) }
            if let pointID { members.append(("point_id", .integer(pointID))) }
        }
        switch self {
        case .created(let memory): add("created", memory)
        case .updated(let memory): add("updated", memory)
        case .deleted: add("deleted", nil)
        case .pointAdded(let memory, let point): add("point_added", memory, point: point)
        case .pointUpdated(let memory, let point): add("point_updated", memory, point: point)
        case .pointDeleted(let memory, let point): add("point_deleted", memory, pointID: point)
        }
        members.append(("time", .integer(time)))
        return .object(members)
    }

    /// The change a `memory_changed` event tells, and its server time; nil for an action this
    /// version does not know.
    public static func decode(event: JSONValue) throws(WireFormatError) -> (change: MemoryChange, time: Int64)? {
        let time = try event.requiredInt64("time")
        func memory() throws(WireFormatError) -> Memory { try Memory(json: try event.requiredObject("memory")) }
        func point() throws(WireFormatError) -> MemoryPoint { try MemoryPoint(json: try event.requiredObject("point")) }
        switch try event.requiredString("action") {
        case "created": return (.created(try memory()), time)
        case "updated": return (.updated(try memory()), time)
        case "deleted": return (.deleted(memory: try event.requiredUInt64("memory_id")), time)
        case "point_added": return (.pointAdded(try memory(), try point()), time)
        case "point_updated": return (.pointUpdated(try memory(), try point()), time)
        case "point_deleted": return (.pointDeleted(try memory(), point: try event.requiredUInt64("point_id")), time)
        default: return nil
        }
    }
}
