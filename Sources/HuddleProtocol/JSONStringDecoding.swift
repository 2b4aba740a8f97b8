/// Decoding JSON strings (RFC 8259 §7) from the parser's bytes.
///
/// Most strings on the wire have no escapes, so the scan looks eight bytes at a time for the
/// only bytes that end an unescaped run (a quote, a backslash, a control character) and builds
/// the `String` from the whole slice in one go. A string with escapes is assembled in the
/// parser's scratch buffer, copying each unescaped run in bulk.
extension JSONDocumentParser {
    /// Decodes a string whose opening quote has been consumed; leaves the cursor after the
    /// closing quote.
    mutating func parseStringBody() throws(JSONError) -> String {
        let start = index
        if let content = try scanEscapeFreeStringBody() {
            return UTF8Validation.string(fromValidUTF8: content)
        }
        return try parseEscapedStringBody(from: start)
    }

    /// Scans a string whose opening quote has been consumed. When it has no escapes, returns
    /// its content (checked to be UTF-8) and leaves the cursor after the closing quote; when it
    /// has, returns nil with the cursor at the first backslash.
    mutating func scanEscapeFreeStringBody() throws(JSONError) -> UnsafeRawBufferPointer? {
        let start = index
        // The OR of every word scanned: its high bits say whether the string may be non-ASCII.
        // (It may include a few bytes past the closing quote; they only cost a needless check.)
        var highBits: UInt64 = 0
        while true {
            if let offset = skipToRunEnd(orInto: &highBits) {
                index &+= offset
            } else {
                guard index < bytes.count else {
                    throw .syntax("unterminated string starting at byte \(start &- 1)")
                }
                let byte = bytes[index]
                highBits |= UInt64(byte)
                if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    index &+= 1
                    continue
                }
            }
            // At a quote, a backslash or a control character.
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index &+= 1
                if highBits & 0x8080_8080_8080_8080 != 0 {
                    guard UTF8Validation.isValid(content) else {
                        throw .syntax("invalid UTF-8 in string starting at byte \(start &- 1)")
                    }
                }
                return content
            }
            guard byte == UInt8(ascii: "\\") else { throw controlCharacter() }
            return nil
        }
    }

    /// Scans whole words from the cursor for the end of an unescaped run. Returns the offset
    /// from the cursor of the first quote, backslash or control character when one turns up in
    /// a word (leaving the cursor at that word), or nil when fewer than eight bytes remain before
    /// one is found (the cursor then at the first byte not yet scanned).
    @inline(__always)
    private mutating func skipToRunEnd(orInto highBits: inout UInt64) -> Int? {
        while index &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            highBits |= word
            let stops = Self.runEnds(in: word)
            if stops != 0 { return stops.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        return nil
    }

    /// Continues a string at its first backslash, decoding into `scratch`.
    mutating func parseEscapedStringBody(from start: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        var unusedHighBits: UInt64 = 0
        while true {
            if let offset = skipToRunEnd(orInto: &unusedHighBits) {
                index &+= offset
            } else {
                guard index < bytes.count else {
                    throw .syntax("unterminated string starting at byte \(start &- 1)")
                }
                let byte = bytes[index]
                if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    index &+= 1
                    continue
                }
            }
            let byte = bytes[index]
            scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
            if byte == UInt8(ascii: "\"") {
                index &+= 1
                // Escapes always decode to whole, valid characters, so checking the assembled
                // bytes is the same as checking each raw run: a run's broken sequence cannot be
                // completed by an escape, whose bytes never start with a continuation byte.
                let valid = scratch.withUnsafeBytes { UTF8Validation.isValid($0) }
                guard valid else { throw .syntax("invalid UTF-8 in string starting at byte \(start &- 1)") }
                return scratch.withUnsafeBytes { UTF8Validation.string(fromValidUTF8: $0) }
            }
            guard byte == UInt8(ascii: "\\") else { throw controlCharacter() }
            try decodeEscape()
            runStart = index
        }
    }

    /// Decodes the escape at the cursor (a backslash) into `scratch`.
    private mutating func decodeEscape() throws(JSONError) {
        let escapeStart = index
        index &+= 1
        guard index < bytes.count else { throw endOfInput("an escape") }
        let letter = bytes[index]
        index &+= 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHexQuad()
            var scalarValue = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low one.
                guard index &+ 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index &+ 1] == UInt8(ascii: "u")
                else { throw .syntax("unpaired surrogate escape at byte \(escapeStart)") }
                index &+= 2
                let low = try parseHexQuad()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw .syntax("unpaired surrogate escape at byte \(escapeStart)")
                }
                scalarValue = 0x10000 &+ ((UInt32(unit) &- 0xD800) << 10) &+ (UInt32(low) &- 0xDC00)
            case 0xDC00...0xDFFF:
                throw .syntax("unpaired surrogate escape at byte \(escapeStart)")
            default:
                break
            }
            appendUTF8(scalarValue)
        default:
            throw .syntax("invalid escape at byte \(escapeStart)")
        }
    }

    private mutating func parseHexQuad() throws(JSONError) -> UInt16 {
        guard index &+ 4 <= bytes.count else { throw endOfInput("four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: throw unexpectedByte("where a hex digit should be")
            }
            value = value << 4 | UInt16(digit)
            index &+= 1
        }
        return value
    }

    /// Appends a scalar value (never a surrogate) as UTF-8.
    private mutating func appendUTF8(_ value: UInt32) {
        switch value {
        case ..<0x80:
            scratch.append(UInt8(value))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | value >> 6))
            scratch.append(UInt8(0x80 | value & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | value >> 12))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | value >> 18))
            scratch.append(UInt8(0x80 | value >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        }
    }

    private func controlCharacter() -> JSONError {
        .syntax("unescaped control character 0x\(String(bytes[index], radix: 16)) in string at byte \(index)")
    }

    /// Marks, in `word` (eight string bytes, the first in the low byte), the bytes that end an
    /// unescaped run: a quote, a backslash or a control character. These are the classic "has
    /// zero byte" / "has byte less than n" bit tricks; a borrow can mark a byte above a real
    /// match, never below one, so the lowest mark is always exact. Bytes with the high bit set
    /// are never marked, so UTF-8 text goes eight bytes at a time too.
    @inline(__always)
    static func runEnds(in word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl) & highs
    }
}
