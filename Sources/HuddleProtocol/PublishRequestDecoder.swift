/// The request a busy server decodes most, a well-formed `publish`, read straight from its
/// bytes: the members are matched by name as they are scanned, `data` is compacted in the same
/// pass, and no generic tree (`[(String, JSONValue)]`, a `String` per key) is built.
///
/// It only ever accepts: anything it does not take as plainly valid (another op, a key with
/// escapes, a field twice, a field of the wrong type, a value over a limit, bad JSON) gives nil,
/// and `RequestDecoder` then decodes the request the general way, which makes every error reply.
/// So what this accepts, it must decode exactly as the general decoder does (a test compares
/// the two on many inputs), and it never decides an error.
enum PublishRequestDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, limits: ProtocolLimits) -> ClientRequest? {
        // The top-level object is depth 1: the general parser refuses it when maxDepth < 1.
        guard limits.maxDepth >= 1 else { return nil }
        var parser = JSONDocumentParser(bytes: bytes, maxDepth: limits.maxDepth)
        do {
            return try parser.parsePublishRequest(limits: limits)
        } catch {
            return nil
        }
    }
}

/// The fields of a publish request, each seen at most once.
private struct PublishFields {
    var id: String?
    var isPublish = false
    var channel: String?
    var type: String?
    var data: String?
    var clientID: String?
}

/// Why the fast path steps aside (never an error reply: the general decoder makes those).
private struct NotThePlainPublish: Error {}

extension JSONDocumentParser {
    fileprivate mutating func parsePublishRequest(limits: ProtocolLimits) throws -> ClientRequest? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index &+= 1
        var fields = PublishFields()
        members: while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index &+= 1
            // A key with escapes could spell a field's name another way: the general path.
            guard let key = try scanEscapeFreeStringBody() else { return nil }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index &+= 1
            skipWhitespace()
            try parseMember(named: key, into: &fields)
            skipWhitespace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: ","): index &+= 1
            case UInt8(ascii: "}"): index &+= 1; break members
            default: return nil
            }
        }
        skipWhitespace()
        guard index == bytes.count, fields.isPublish,
              let id = fields.id, RequestDecoder.isValidID(id, limits: limits),
              let channel = fields.channel,
              let data = fields.data, data.utf8.count <= limits.maxDataBytes
        else { return nil }
        if let type = fields.type, !RequestArguments.isPublicationType(type) { return nil }
        let type = fields.type ?? RequestDefaults.publicationType
        if let clientID = fields.clientID, !RequestArguments.hasLength(clientID, in: 1...limits.maxIDLength) { return nil }
        return ClientRequest(id: id, operation: .publish(channel: channel, type: type, data: data), clientID: fields.clientID)
    }

    /// One member's value, the cursor at its first byte. The fields a publish reads must be
    /// strings (a null optional is left to the general path); any other member is checked as
    /// JSON and skipped, as the general decoder ignores it.
    private mutating func parseMember(named key: UnsafeRawBufferPointer, into fields: inout PublishFields) throws {
        if Self.key(key, is: "data") {
            guard fields.data == nil else { throw NotThePlainPublish() }
            fields.data = try compactData()
            return
        }
        let isString = index < bytes.count && bytes[index] == UInt8(ascii: "\"")
        if Self.key(key, is: "op") {
            guard isString, !fields.isPublish else { throw NotThePlainPublish() }
            index &+= 1
            guard let op = try scanEscapeFreeStringBody(), Self.key(op, is: "publish") else { throw NotThePlainPublish() }
            fields.isPublish = true
        } else if Self.key(key, is: "id") {
            fields.id = try stringField(isString, fields.id)
        } else if Self.key(key, is: "channel") {
            fields.channel = try stringField(isString, fields.channel)
        } else if Self.key(key, is: "type") {
            fields.type = try stringField(isString, fields.type)
        } else if Self.key(key, is: "client_id") {
            fields.clientID = try stringField(isString, fields.clientID)
        } else {
            _ = try parseCompactValue(depth: 1)
        }
    }

    /// `data` in compact form. An escape-free string already is (it holds no quote, backslash
    /// or control character), so it is taken as it stands, quotes included, as the compaction
    /// copies it; any other value is compacted as the general parser does, inside the
    /// top-level object.
    private mutating func compactData() throws -> String {
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            let quote = index
            index &+= 1
            if try scanEscapeFreeStringBody() != nil {
                return UTF8Validation.string(fromValidUTF8: UnsafeRawBufferPointer(rebasing: bytes[quote..<index]))
            }
            index = quote
        }
        return try parseCompactValue(depth: 1)
    }

    private mutating func stringField(_ isString: Bool, _ earlier: String?) throws -> String {
        guard isString, earlier == nil else { throw NotThePlainPublish() }
        index &+= 1
        return try parseStringBody()
    }

    /// Byte by byte: the generic `elementsEqual` cost ~130 instructions a comparison here.
    private static func key(_ bytes: UnsafeRawBufferPointer, is name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let spelled = name.utf8Start
        for offset in 0..<bytes.count where bytes[offset] != spelled[offset] { return false }
        return true
    }
}
