/// Finds the top-level `id` of a request that was refused as too deep, so the `too_deep` reply
/// can carry it ("replies are matched by id").
///
/// The full parse stopped at the depth limit, so this walks the top-level object member by
/// member, skipping each value by counting brackets (a counter cannot overflow the way a stack
/// can), until it meets `id`. It answers only when the walk up to there is well-formed and the
/// id is a valid one; anything else gives nil, the reply's `"id": null`.
enum RequestIDRecovery {
    static func topLevelID(in bytes: UnsafeRawBufferPointer, limits: ProtocolLimits) -> String? {
        var parser = JSONDocumentParser(bytes: bytes, maxDepth: 0)
        parser.skipWhitespace()
        guard parser.consume(UInt8(ascii: "{")) else { return nil }
        while true {
            parser.skipWhitespace()
            guard let key = try? parser.parseKeyAndColon() else { return nil }
            parser.skipWhitespace()
            if hasCodeUnits(key, of: "id") {
                // The first `id` decides, as in a full decode.
                guard parser.consume(UInt8(ascii: "\"")), let id = try? parser.parseStringBody(),
                    RequestDecoder.isValidID(id, limits: limits)
                else { return nil }
                return id
            }
            guard parser.skipValueByCounting() else { return nil }
            parser.skipWhitespace()
            guard parser.consume(UInt8(ascii: ",")) else { return nil }
        }
    }
}

extension JSONDocumentParser {
    /// Consumes `byte` if it is next.
    fileprivate mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index &+= 1
        return true
    }

    /// Moves past one value, tracking only how many containers are open. Strings are decoded
    /// (so brackets inside them do not count); scalars are skipped to the next delimiter. False
    /// if the value does not end before the input does.
    fileprivate mutating func skipValueByCounting() -> Bool {
        var open = 0
        repeat {
            skipWhitespace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                open &+= 1
                index &+= 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard open > 0 else { return false }
                open &-= 1
                index &+= 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                guard open > 0 else { return false }
                index &+= 1
            case UInt8(ascii: "\""):
                index &+= 1
                guard (try? parseStringBody()) != nil else { return false }
            default:
                let start = index
                while index < bytes.count, !Self.endsScalar(bytes[index]) { index &+= 1 }
                guard index > start else { return false }
            }
        } while open > 0
        return true
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["),
            UInt8(ascii: "]"), UInt8(ascii: "\""), 0x20, 0x09, 0x0A, 0x0D:
            return true
        default:
            return false
        }
    }
}
