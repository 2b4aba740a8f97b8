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
        JSONWriter.appendLiteral(#"{"id":"#, to: &output)
        JSONWriter.appendString(id, to: &output)
        JSONWriter.appendLiteral(#","ok":true,"result":"#, to: &output)
        JSONWriter.append(result, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"id":…,"ok":true,"result":{"epoch":…,"offset":…,"time":…[,"duplicate":true]}}`: the
    /// reply to a publish, the one every acknowledged write gets, written directly (the bytes
    /// of `success(id:result:)` with `PublishResult.result`, without building the tree).
    public static func published(id: String, _ result: PublishResult) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(96 &+ id.utf8.count &+ result.epoch.utf8.count)
        JSONWriter.appendLiteral(#"{"id":"#, to: &output)
        JSONWriter.appendString(id, to: &output)
        JSONWriter.appendLiteral(#","ok":true,"result":{"epoch":"#, to: &output)
        JSONWriter.appendString(result.epoch, to: &output)
        JSONWriter.appendLiteral(#","offset":"#, to: &output)
        JSONWriter.appendInteger(result.offset, to: &output)
        JSONWriter.appendLiteral(#","time":"#, to: &output)
        JSONWriter.appendInteger(result.time, to: &output)
        JSONWriter.appendLiteral(result.duplicate ? #","duplicate":true}}"# : "}}", to: &output)
        return output
    }

    /// `{"id":…|null,"ok":false,"error":{"code":…,"message":…[,"retry_after_ms":…]}}`
    public static func failure(id: String?, code: String, message: String, retryAfterMilliseconds: Int64? = nil) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64 &+ code.utf8.count &+ message.utf8.count &+ (id?.utf8.count ?? 0))
        JSONWriter.appendLiteral(#"{"id":"#, to: &output)
        if let id {
            JSONWriter.appendString(id, to: &output)
        } else {
            JSONWriter.appendLiteral("null", to: &output)
        }
        JSONWriter.appendLiteral(#","ok":false,"error":{"code":"#, to: &output)
        JSONWriter.appendString(code, to: &output)
        JSONWriter.appendLiteral(#","message":"#, to: &output)
        JSONWriter.appendString(message, to: &output)
        if let retryAfterMilliseconds {
            JSONWriter.appendLiteral(#","retry_after_ms":"#, to: &output)
            JSONWriter.appendInteger(retryAfterMilliseconds, to: &output)
        }
        JSONWriter.appendLiteral("}}", to: &output)
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
        JSONWriter.appendLiteral(#"{"event":"publication","channel":"#, to: &output)
        JSONWriter.appendString(channel, to: &output)
        JSONWriter.appendLiteral(#","epoch":"#, to: &output)
        JSONWriter.appendString(epoch, to: &output)
        JSONWriter.appendLiteral(#","offset":"#, to: &output)
        JSONWriter.appendInteger(offset, to: &output)
        JSONWriter.appendLiteral(#","type":"#, to: &output)
        JSONWriter.appendString(type, to: &output)
        JSONWriter.appendLiteral(#","from":"#, to: &output)
        if let from {
            JSONWriter.appendString(from, to: &output)
        } else {
            JSONWriter.appendLiteral("null", to: &output)
        }
        JSONWriter.appendLiteral(#","data":"#, to: &output)
        output.append(contentsOf: data.utf8)
        JSONWriter.appendLiteral(#","time":"#, to: &output)
        JSONWriter.appendInteger(time, to: &output)
        if let clientID {
            output.append(contentsOf: #","client_id":"#.utf8)
            JSONWriter.appendString(clientID, to: &output)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"publication_removed","channel":…,"epoch":…,"offset":…,"time":…}`: the
    /// publication at `offset` is a tombstone now; `time` is when it was removed.
    public static func publicationRemovedEvent(channel: String, epoch: String, offset: UInt64, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        JSONWriter.appendLiteral(#"{"event":"publication_removed","channel":"#, to: &output)
        JSONWriter.appendString(channel, to: &output)
        JSONWriter.appendLiteral(#","epoch":"#, to: &output)
        JSONWriter.appendString(epoch, to: &output)
        JSONWriter.appendLiteral(#","offset":"#, to: &output)
        JSONWriter.appendInteger(offset, to: &output)
        JSONWriter.appendLiteral(#","time":"#, to: &output)
        JSONWriter.appendInteger(time, to: &output)
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
        JSONWriter.appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"presence","user":…,"online":…,"time":…}`
    public static func presenceEvent(user: String, online: Bool, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        JSONWriter.appendLiteral(#"{"event":"presence","user":"#, to: &output)
        JSONWriter.appendString(user, to: &output)
        JSONWriter.appendLiteral(online ? #","online":true,"time":"# : #","online":false,"time":"#, to: &output)
        JSONWriter.appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"session","user":{"username":…,"email":…},"expires_at":…,"time":…}`
    public static func sessionEvent(username: String, email: String, expiresAt: Int64, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        JSONWriter.appendLiteral(#"{"event":"session","user":{"username":"#, to: &output)
        JSONWriter.appendString(username, to: &output)
        JSONWriter.appendLiteral(#","email":"#, to: &output)
        JSONWriter.appendString(email, to: &output)
        JSONWriter.appendLiteral(#"},"expires_at":"#, to: &output)
        JSONWriter.appendInteger(expiresAt, to: &output)
        JSONWriter.appendLiteral(#","time":"#, to: &output)
        JSONWriter.appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"event":"auth_failed","error":{"code":…,"message":…},"time":…}`
    public static func authFailedEvent(code: String, message: String, time: Int64) -> [UInt8] {
        var output: [UInt8] = []
        JSONWriter.appendLiteral(#"{"event":"auth_failed","error":{"code":"#, to: &output)
        JSONWriter.appendString(code, to: &output)
        JSONWriter.appendLiteral(#","message":"#, to: &output)
        JSONWriter.appendString(message, to: &output)
        JSONWriter.appendLiteral(#"},"time":"#, to: &output)
        JSONWriter.appendInteger(time, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
