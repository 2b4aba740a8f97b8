import HuddleClient
import HuddleProtocol

/// Memories: `[memories] 12 2025-06-14 "Lisbon" (2 points)`, `[point 12.3] 10:42 "tram 28"`,
/// and live `[memory] …` lines for changes made on another device.
extension ChatLines {
    /// `12 2025-06-14 "Lisbon" at Alfama (2 points)`.
    static func memory(_ memory: Memory) -> String {
        let place = memory.placeName.isEmpty ? "" : " at \(clean(memory.placeName))"
        let points = memory.pointCount == 1 ? "1 point" : "\(memory.pointCount) points"
        return "\(memory.id) \(clean(memory.date)) \(quoted(memory.title))\(place)\(memory.position.map { " " + position($0) } ?? "") (\(points))"
    }

    static func memories(_ memories: [Memory]) -> String {
        memories.isEmpty ? "[memories] none yet: /memory-new DATE TITLE" : "[memories] " + memories.map(memory).joined(separator: "; ")
    }

    /// `10:42 "tram 28" at Miradouro (38.7139, -9.1334), 1 photo`.
    static func point(_ point: MemoryPoint, now: Int64 = ChatClock.nowMilliseconds()) -> String {
        var line = "\(ChatClock.time(point.time, now: now)) \(quoted(point.note))"
        if !point.placeName.isEmpty { line += " at \(clean(point.placeName))" }
        if let place = point.position { line += " " + position(place) }
        if !point.photos.isEmpty { line += point.photos.count == 1 ? ", 1 photo" : ", \(point.photos.count) photos" }
        return line
    }

    /// `(38.7223, -9.1393)`.
    static func position(_ position: MemoryPosition) -> String { "(\(position.latitude), \(position.longitude))" }

    /// A change to one of the user's memories, as another device made it.
    static func memoryChange(_ change: MemoryChange, now: Int64 = ChatClock.nowMilliseconds()) -> String {
        switch change {
        case .created(let memory): return "[memory] new: \(self.memory(memory))"
        case .updated(let memory): return "[memory] changed: \(self.memory(memory))"
        case .deleted(let id): return "[memory] \(id) deleted"
        case .pointAdded(let memory, let point):
            return "[memory] point \(memory.id).\(point.id) added to \(quoted(memory.title)): " + self.point(point, now: now)
        case .pointUpdated(let memory, let point):
            return "[memory] point \(memory.id).\(point.id) changed in \(quoted(memory.title)): " + self.point(point, now: now)
        case .pointDeleted(let memory, let point): return "[memory] point \(memory.id).\(point) deleted from \(quoted(memory.title))"
        }
    }

    /// The server's message for a memory error, with the command that helps.
    static func memoryHint(code: String, message: String) -> String? {
        switch code {
        case "memory_not_found": return "\(message) (/memories lists yours)"
        case "point_not_found": return "\(message) (/memory ID lists its points)"
        case "too_many_memories": return "\(message) (/memories, then /memory-delete ID)"
        case "too_many_points": return "\(message) (a memory holds no more points)"
        case "photo_not_found": return "\(message) (upload it first: PUT /api/v1/photos)"
        default: return nil
        }
    }
}
