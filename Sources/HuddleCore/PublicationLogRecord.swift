import HuddleProtocol

/// The log record of a publication, written directly: the bytes `PersistedRecord.encode` makes
/// of the command's `persisted` tree (format byte, then `{"publish":{…}}` with the members in
/// byte order, a nil `from` left out), without building the tree. Every acknowledged write is
/// one of these, and the tree and its generic writing were a quarter of the core's work per
/// write (BENCHMARKS.md, "Acknowledged writes"). Any other command takes the generic path.
enum PublicationLogRecord {
    static func encode(_ command: CoreCommand) -> [UInt8]? {
        switch command {
        case .publish(let channel, let from, let type, let data, let time):
            return encode(variant: #"{"publish":{"channel":"#, channel: channel, clientID: nil, from: from, type: type, data: data, time: time)
        case .publishWithClientID(let channel, let from, let type, let data, let clientID, let time):
            return encode(
                variant: #"{"publishWithClientID":{"channel":"#, channel: channel, clientID: clientID, from: from, type: type, data: data, time: time)
        default:
            return nil
        }
    }

    /// Members in byte order: channel, clientID, data, from, time, type.
    private static func encode(
        variant: StaticString, channel: String, clientID: String?, from: String?, type: String, data: String, time: Int64
    ) -> [UInt8] {
        var output: [UInt8] = [PersistedRecord.format]
        // Escapes aside (rare: `data` is compact JSON, whose quotes are escaped once more).
        output.reserveCapacity(
            96 &+ channel.utf8.count &+ (clientID?.utf8.count ?? 0) &+ (from?.utf8.count ?? 0) &+ type.utf8.count &+ data.utf8.count &* 5 / 4)
        JSONWriter.appendLiteral(variant, to: &output)
        JSONWriter.appendString(channel, to: &output)
        if let clientID {
            JSONWriter.appendLiteral(#","clientID":"#, to: &output)
            JSONWriter.appendString(clientID, to: &output)
        }
        JSONWriter.appendLiteral(#","data":"#, to: &output)
        JSONWriter.appendString(data, to: &output)
        if let from {
            JSONWriter.appendLiteral(#","from":"#, to: &output)
            JSONWriter.appendString(from, to: &output)
        }
        JSONWriter.appendLiteral(#","time":"#, to: &output)
        JSONWriter.appendInteger(time, to: &output)
        JSONWriter.appendLiteral(#","type":"#, to: &output)
        JSONWriter.appendString(type, to: &output)
        JSONWriter.appendLiteral("}}", to: &output)
        return output
    }
}
