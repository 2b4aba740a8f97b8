/// The server's messages to clients (protocol.md, "Reply" and "Events"), each returned as the
/// bytes of one text message.
///
/// Fields come in the order protocol.md shows them. The builders write bytes directly rather
/// than building a `JSONValue` first: a publication event is encoded once and fanned out to
/// every subscriber, and its `data` is spliced in as the stored compact JSON.
public enum ServerMessage {
    /// `{"id":…,"ok":true,"result":…}`
    public static func success(id: String, result: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.appendString(id, to: &output)
        output.append(contentsOf: #","ok":true,"result":"#.utf8)
        JSONWriter.append(result, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"id":…|null,"ok":false,"error":{"code":…,"message":…[,"retry_after_ms":…]}}`
    public static func failure(id: String?, code: String, message: String, retryAfterMilliseconds: Int64? = nil) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64 &+ code.utf8.count &+ message.utf8.count &+ (id?.utf8.count ?? 0))
        output.append(contentsOf: #"{"id":"#.utf8)
        if let id {
            JSONWriter.appendString(id, to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(contentsOf: #","ok":false,"error":{"code":"#.utf8)
        JSONWriter.appendString(code, to: &output)
        output.append(contentsOf: #","message":"#.utf8)
        JSONWriter.appendString(message, to: &output)
        if let retryAfterMilliseconds {
            output.append(contentsOf: #","retry_after_ms":"#.utf8)
            appendInteger(retryAfterMilliseconds, to: &output)
        }
        output.append(contentsOf: "}}".utf8)
        return output
    }

    /// `{"event":"publication","channel":…,"epoch":…,"offset":…,"type":…,"from":…|null,"data":…,"time":…}`;
    /// `data` is JSON already (the stored compact serialization) and goes in verbatim.
    public static func publicationEvent(
        channel: String, epoch: String, offset: UInt64, type: String, from: String?, data: String, time: Int64,
        clientID: String? = nil
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(
            128 &+ channel.utf8.count &+ epoch.utf8.count &+ type.utf8.count &+ (from?.utf8.count ?? 0)
                &+ data.utf8.count)
        output.append(contentsOf: #"{"event":"publication","channel":"#.utf8)
        JSONWriter.appendString(channel, to: &output)
        output.append(contentsOf: #","epoch":"#.utf8)
        JSONWriter.appendString(epoch, to: &output)
        output.append(contentsOf: #","offset":"#.utf8)
        appendInteger(offset, to: &output)
        output.append(contentsOf: #","type":"#.utf8)
        JSONWriter.appendString(type, to: &output)
        output.append(contentsOf: #","from":"#.utf8)
        if let from {
            JSONWriter.appendString(from, to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(contentsOf: #","data":"#.utf8)
        output.append(contentsOf: data.utf8)
        output.append(contentsOf: #","time":"#.utf8)
        appendInteger(time, to: &output)
        if let clientID {
            output.append(contentsOf: #","client_id":"#.utf8)
            JSONWriter.appendString(clientID, to: &output)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"typing","channel":…,"user":…,"time":…}`
    public static func typingEvent(channel: String, user: String, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"event":"typing","channel":"#.utf8)
        JSONWriter.appendString(channel, to: &output)
        output.append(contentsOf: #","user":"#.utf8)
        JSONWriter.appendString(user, to: &output)
        output.append(contentsOf: #","time":"#.utf8)
        appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// A publication inside a `subscribe` or `history` result: the event's fields without
    /// `event`, `channel` and `epoch`, which the result states once.
    public static func publicationObject(
        offset: UInt64, type: String, from: String?, data: String, time: Int64, clientID: String? = nil
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("offset", .integer(offset)),
            ("type", .string(type)),
            ("from", from.map(JSONValue.string) ?? .null),
            ("data", .raw(data)),
            ("time", .integer(time)),
        ]
        if let clientID { members.append(("client_id", .string(clientID))) }
        return .object(members)
    }

    /// `{"event":"presence","user":…,"online":…,"time":…}`
    public static func presenceEvent(user: String, online: Bool, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"event":"presence","user":"#.utf8)
        JSONWriter.appendString(user, to: &output)
        output.append(contentsOf: online ? #","online":true,"time":"#.utf8 : #","online":false,"time":"#.utf8)
        appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"session","user":{"username":…,"email":…},"expires_at":…,"time":…}`
    public static func sessionEvent(username: String, email: String, expiresAt: Int64, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"event":"session","user":{"username":"#.utf8)
        JSONWriter.appendString(username, to: &output)
        output.append(contentsOf: #","email":"#.utf8)
        JSONWriter.appendString(email, to: &output)
        output.append(contentsOf: #"},"expires_at":"#.utf8)
        appendInteger(expiresAt, to: &output)
        output.append(contentsOf: #","time":"#.utf8)
        appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"auth_failed","error":{"code":…,"message":…},"time":…}`
    public static func authFailedEvent(code: String, message: String, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"event":"auth_failed","error":{"code":"#.utf8)
        JSONWriter.appendString(code, to: &output)
        output.append(contentsOf: #","message":"#.utf8)
        JSONWriter.appendString(message, to: &output)
        output.append(contentsOf: #"},"time":"#.utf8)
        appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Writes an integer in decimal without going through a `String`.
    private static func appendInteger<Integer: FixedWidthInteger>(_ value: Integer, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        // The magnitude as UInt64 (Int64.min's too), digits produced least significant first.
        var magnitude = UInt64(value.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64.max's 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count &+= 1
                buffer[24 &- count] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 &- count)...]))
        }
    }
}
