/// Compact JSON serialization: no whitespace, object members in order, numbers and `raw` values
/// as written.
///
/// Strings are escaped minimally, so any `String` becomes valid JSON: `"` and `\`, and the
/// control characters U+0000–U+001F (as `\b \f \n \r \t` or `\u00XX`). Everything else,
/// including `/` and non-ASCII characters, is copied as UTF-8, so the output is as short as
/// the value allows and what gets size-checked is what goes out.
///
/// Writing recurses once per level of nesting; parsed values are bounded by the parser's
/// `maxDepth`, and values the server builds are shallow.
public enum JSONWriter {
    public static func append(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let bool):
            output.append(contentsOf: bool ? "true".utf8 : "false".utf8)
        case .number(let literal):
            output.append(contentsOf: literal.utf8)
        case .string(let string):
            appendString(string, to: &output)
        case .raw(let json):
            output.append(contentsOf: json.utf8)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                append(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, (key, member)) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                appendString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                append(member, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    public static func serialize(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// `value` as the bytes of one message.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        append(value, to: &output)
        return output
    }

    /// Appends `string` quoted and escaped. Runs of bytes that need no escape are copied whole.
    public static func appendString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        // Native strings are contiguous UTF-8 already, so this does not copy.
        string.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            var runStart = 0
            var index = 0
            while true {
                // Find the next byte to escape: a word at a time, then byte by byte at the end.
                while index &+ 8 <= bytes.count {
                    let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    let stops = JSONDocumentParser.runEnds(in: word)
                    if stops != 0 {
                        index &+= stops.trailingZeroBitCount &>> 3
                        break
                    }
                    index &+= 8
                }
                while index < bytes.count, !needsEscape(bytes[index]) { index &+= 1 }
                guard index < bytes.count else { break }
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
                appendEscape(for: bytes[index], to: &output)
                index &+= 1
                runStart = index
            }
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func appendEscape(for byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            let hexDigits: StaticString = "0123456789abcdef"
            output.append(contentsOf: "u00".utf8)
            output.append(hexDigits.utf8Start[Int(byte >> 4)])
            output.append(hexDigits.utf8Start[Int(byte & 0x0F)])
        }
    }
}

extension JSONWriter {
    /// Appends a fixed piece of JSON: from the binary's constant bytes, with no `String` to
    /// walk (appending a literal's `utf8` view cost more than the memcpy).
    @inlinable @inline(__always)
    public static func appendLiteral(_ literal: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Writes an integer in decimal without going through a `String`.
    @inlinable
    public static func appendInteger<Integer: FixedWidthInteger>(_ value: Integer, to output: inout [UInt8]) {
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
