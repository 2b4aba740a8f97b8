import HuddleCore
import HuddleProtocol

/// Memories and their points in their wire form (protocol.md, "Memories and photos"): the
/// objects the memory ops return and the `memory_changed` event carries.
enum MemoryEncoding {
    /// `{"id","title","date","place_name","position","created_at","updated_at","point_count"[,"points"]}`;
    /// `pointCount` for a memory kept without its points.
    static func memory(_ memory: Memory, includingPoints: Bool, pointCount: Int? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .integer(memory.id)),
            ("title", .string(memory.title)),
            ("date", .string(memory.date)),
            ("place_name", .string(memory.placeName)),
            ("position", position(memory.position)),
            ("created_at", .integer(memory.createdAt)),
            ("updated_at", .integer(memory.updatedAt)),
            ("point_count", .integer(pointCount ?? memory.points.count)),
        ]
        if includingPoints { members.append(("points", .array(memory.points.map(point)))) }
        return .object(members)
    }

    /// `{"id","time","position","place_name","note","photos"}`
    static func point(_ point: MemoryPoint) -> JSONValue {
        .object([
            ("id", .integer(point.id)),
            ("time", .integer(point.time)),
            ("position", position(point.position)),
            ("place_name", .string(point.placeName)),
            ("note", .string(point.note)),
            ("photos", .array(point.photos.map(JSONValue.string))),
        ])
    }

    /// `{"lat": …, "lon": …}` or null. Swift writes a `Double` as the shortest decimal that
    /// reads back as the same value (`38.7223`, `1e-05`): valid JSON, and exactly what came in.
    static func position(_ position: MemoryPosition?) -> JSONValue {
        guard let position else { return .null }
        return .object([("lat", .number(String(position.latitude))), ("lon", .number(String(position.longitude)))])
    }

    static func changedEvent(_ change: MemoryChange, time: Int64) -> [UInt8] {
        switch change {
        case .created(let memory):
            return event("created", memory, point: nil, pointID: nil, time: time)
        case .updated(let memory):
            return event("updated", memory, point: nil, pointID: nil, time: time)
        case .deleted(let id):
            return ServerMessage.memoryChangedEvent(action: "deleted", memoryID: id, memory: nil, point: nil, pointID: nil, time: time)
        case .pointAdded(let memory, let point):
            return event("point_added", memory, point: point, pointID: nil, time: time)
        case .pointUpdated(let memory, let point):
            return event("point_updated", memory, point: point, pointID: nil, time: time)
        case .pointDeleted(let memory, let pointID):
            return event("point_deleted", memory, point: nil, pointID: pointID, time: time)
        }
    }

    private static func event(_ action: String, _ memory: Memory, point: MemoryPoint?, pointID: UInt64?, time: Int64) -> [UInt8] {
        ServerMessage.memoryChangedEvent(
            action: action, memoryID: memory.id, memory: self.memory(memory, includingPoints: false), point: point.map(self.point),
            pointID: pointID, time: time)
    }
}
