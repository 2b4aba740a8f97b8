extension ServerMessage {
    /// `{"event":"memory_changed","action":…,"memory_id":…[,"memory":…][,"point":…][,"point_id":…],"time":…}`
    /// (protocol.md, "memory_changed"). `memory` and `point` are the objects the memory ops
    /// return; the memory comes without its points.
    public static func memoryChangedEvent(
        action: String, memoryID: UInt64, memory: JSONValue?, point: JSONValue?, pointID: UInt64?, time: Int64
    ) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("event", .string("memory_changed")), ("action", .string(action)), ("memory_id", .integer(memoryID)),
        ]
        if let memory { members.append(("memory", memory)) }
        if let point { members.append(("point", point)) }
        if let pointID { members.append(("point_id", .integer(pointID))) }
        members.append(("time", .integer(time)))
        var output: [UInt8] = []
        JSONWriter.append(.object(members), to: &output)
        return output
    }
}
