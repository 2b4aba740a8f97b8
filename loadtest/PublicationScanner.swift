/// Reads the fields the harness needs from a `publication` event — epoch, offset and the
/// stamp in `data` — straight from the bytes, without building a JSON tree: at a hundred
/// thousand deliveries a second, parsing every event whole cost the harness more CPU than the
/// server spent sending them.
///
/// It reads the server's own encoding (protocol.md, `publication`; the key order of
/// `ServerMessage.publicationEvent`) and the compact `data` the harness published
/// (`{"p":…,"s":…,"t":…,…}`). Anything else — another event, another key order, a `data` not
/// from the harness — returns nil, and the caller parses the message the slow, general way.
struct PublicationScanner {
    struct Fields: Equatable {
        var epoch: String
        var offset: UInt64
        var stamp: Stamp
    }

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func scan(_ bytes: [UInt8]) -> Fields? {
        var scanner = PublicationScanner(bytes)
        return scanner.fields()
    }

    private mutating func fields() -> Fields? {
        guard literal(#"{"event":"publication","channel":"#), skipString(),
              literal(#","epoch":"#), let epoch = string(),
              literal(#","offset":"#), let offset = integer(),
              literal(#","type":"#), skipString(),
              literal(#","from":"#), literal("null") || skipString(),
              literal(#","data":{"p":"#), let publisher = integer(),
              literal(#","s":"#), let sequence = integer(),
              literal(#","t":"#), let intended = integer(),
              publisher <= UInt64(Int.max), sequence <= UInt64(Int.max)
        else { return nil }
        return Fields(epoch: epoch, offset: offset, stamp: Stamp(publisher: Int(publisher), sequence: Int(sequence), intended: intended))
    }

    /// Consumes `text` if the bytes continue with it.
    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = text.withUTF8Buffer { expected in
            var offset = 0
            while offset < count {
                if bytes[index + offset] != expected[offset] { return false }
                offset += 1
            }
            return true
        }
        if matches { index += count }
        return matches
    }

    /// Consumes a JSON string (its opening quote included) and returns it; only strings
    /// without escapes, which is what the server's epochs are.
    private mutating func string() -> String? {
        let start = index + 1
        guard skipString() else { return nil }
        let content = bytes[start..<(index - 1)]
        guard !content.contains(UInt8(ascii: "\\")) else { return nil }
        return String(decoding: content, as: UTF8.self)
    }

    /// Consumes a JSON string whatever it holds, escapes included.
    private mutating func skipString() -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return true
            default: index += 1
            }
        }
        return false
    }

    /// Consumes a non-negative integer of at most 19 digits.
    private mutating func integer() -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        while index < bytes.count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
            guard digits < 19 else { return nil }
            value = value * 10 + UInt64(digit)
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }
}
