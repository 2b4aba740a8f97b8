/// Strict RFC 8259 JSON parsing: no trailing commas, comments, NaN, leading zeros or unescaped
/// control characters; `\u` escapes must pair surrogates; strings must be UTF-8 whatever the
/// caller checked. Duplicate object keys are kept (lookup finds the first).
///
/// Depth is the nesting of arrays and objects (a top-level object is depth 1). A container that
/// would go past `maxDepth` fails with `.tooDeep` before it is entered, and the parser keeps its
/// own stack of open containers instead of recursing, so no input can exhaust the thread's stack:
/// a megabyte of `[` fails at byte `maxDepth`.
public enum JSONParser {
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(JSONError) -> JSONValue {
        var parser = JSONDocumentParser(bytes: bytes, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int) throws(JSONError) -> JSONValue {
        // `withUnsafeBytes` rethrows untyped errors; carry the typed one out in a Result.
        try bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }.get()
    }

    /// Parses like `parse`, except that the value of the top-level object's members named
    /// `compactedMember` comes back as `.raw` holding its compact serialization, written while
    /// parsing instead of built as a tree and written afterwards (a publication's `data`). The
    /// accepted inputs and the errors are the same as `parse`'s.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int, compactingTopLevelMember compactedMember: StaticString
    ) throws(JSONError) -> JSONValue {
        var parser = JSONDocumentParser(bytes: bytes, maxDepth: maxDepth, compactedMember: compactedMember)
        return try parser.parseDocument()
    }
}

/// The cursor over one document's bytes.
struct JSONDocumentParser {
    let bytes: UnsafeRawBufferPointer
    let maxDepth: Int
    /// The top-level member whose value is compacted rather than built (see `JSONParser`).
    let compactedMember: StaticString?
    var index = 0
    /// Holds a string's decoded bytes while it has escapes; unused by escape-free strings.
    var scratch: [UInt8] = []

    init(bytes: UnsafeRawBufferPointer, maxDepth: Int, compactedMember: StaticString? = nil) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.compactedMember = compactedMember
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw unexpectedByte("after the JSON value") }
        return value
    }

    /// Parses one value, containers included, with an explicit stack of the open containers.
    /// Each open array or object collects its elements in its own array on the stack; closing it
    /// moves that array into the value handed to the container around it.
    mutating func parseValue() throws(JSONError) -> JSONValue {
        var open: [OpenContainer] = []

        nextValue: while true {
            var value: JSONValue
            skipWhitespace()
            if open.count == 1, open[0].isObject, let compactedMember,
                hasCodeUnits(open[0].pendingKey, of: compactedMember)
            {
                value = .raw(try parseCompactValue(depth: 1))
            } else {
                guard index < bytes.count else { throw endOfInput("a value") }
                switch bytes[index] {
                case UInt8(ascii: "{"):
                    guard open.count < maxDepth else { throw .tooDeep }
                    index &+= 1
                    skipWhitespace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                        index &+= 1
                        value = .object([])
                    } else {
                        let key = try parseKeyAndColon()
                        if open.isEmpty { open.reserveCapacity(4) }
                        open.append(OpenContainer(objectWithFirstKey: key))
                        continue nextValue
                    }
                case UInt8(ascii: "["):
                    guard open.count < maxDepth else { throw .tooDeep }
                    index &+= 1
                    skipWhitespace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                        index &+= 1
                        value = .array([])
                    } else {
                        if open.isEmpty { open.reserveCapacity(4) }
                        open.append(OpenContainer(array: ()))
                        continue nextValue
                    }
                case UInt8(ascii: "\""):
                    index &+= 1
                    value = .string(try parseStringBody())
                case UInt8(ascii: "t"):
                    try expectLiteral("true")
                    value = .bool(true)
                case UInt8(ascii: "f"):
                    try expectLiteral("false")
                    value = .bool(false)
                case UInt8(ascii: "n"):
                    try expectLiteral("null")
                    value = .null
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    value = .number(try parseNumber())
                default:
                    throw unexpectedByte("where a value should start")
                }
            }

            // Hand the value to the innermost open container; every container that ends right
            // after it becomes in turn the value for the one around it.
            while let innermost = open.indices.last {
                let isObject = open[innermost].isObject
                skipWhitespace()
                guard index < bytes.count else { throw endOfInput(isObject ? "',' or '}'" : "',' or ']'") }
                let separator = bytes[index]
                if isObject {
                    open[innermost].members.append((open[innermost].pendingKey, value))
                    if separator == UInt8(ascii: ",") {
                        index &+= 1
                        skipWhitespace()
                        open[innermost].pendingKey = try parseKeyAndColon()
                        continue nextValue
                    }
                    guard separator == UInt8(ascii: "}") else { throw unexpectedByte("where ',' or '}' should be") }
                    value = .object(open.removeLast().members)
                } else {
                    open[innermost].elements.append(value)
                    if separator == UInt8(ascii: ",") {
                        index &+= 1
                        continue nextValue
                    }
                    guard separator == UInt8(ascii: "]") else { throw unexpectedByte("where ',' or ']' should be") }
                    value = .array(open.removeLast().elements)
                }
                index &+= 1
            }
            return value
        }
    }

    /// An object member's key and the colon after it; the cursor is at the key's opening quote
    /// (whitespace before it already skipped).
    mutating func parseKeyAndColon() throws(JSONError) -> String {
        guard index < bytes.count else { throw endOfInput("an object key") }
        guard bytes[index] == UInt8(ascii: "\"") else { throw unexpectedByte("where an object key should start") }
        index &+= 1
        let key = try parseStringBody()
        skipWhitespace()
        guard index < bytes.count else { throw endOfInput("':'") }
        guard bytes[index] == UInt8(ascii: ":") else { throw unexpectedByte("where ':' should be") }
        index &+= 1
        return key
    }

    /// RFC 8259 whitespace: space, tab, line feed, carriage return.
    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index &+= 1
            default: return
            }
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let start = index
        for offset in 0..<literal.utf8CodeUnitCount {
            guard index < bytes.count else { throw endOfInput("'\(literal)'") }
            guard bytes[index] == literal.utf8Start[offset] else {
                throw .syntax("invalid literal at byte \(start) (expected '\(literal)')")
            }
            index &+= 1
        }
    }

    private mutating func parseNumber() throws(JSONError) -> String {
        let start = index
        try skipNumber()
        // Only ASCII digits, signs, '.', 'e' and 'E' got here: always valid UTF-8.
        return UTF8Validation.string(fromValidUTF8: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
    }

    /// Moves past `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func skipNumber() throws(JSONError) {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index &+= 1 }
        guard index < bytes.count else { throw endOfInput("a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index &+= 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw .syntax("leading zero in number at byte \(start)")
            }
        } else {
            guard isDigit(bytes[index]) else { throw unexpectedByte("where a digit should be") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index &+= 1
            try expectDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index &+= 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index &+= 1
            }
            try expectDigits()
        }
    }

    private mutating func expectDigits() throws(JSONError) {
        guard index < bytes.count else { throw endOfInput("a digit") }
        guard isDigit(bytes[index]) else { throw unexpectedByte("where a digit should be") }
        skipDigits()
    }

    @inline(__always)
    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index &+= 1 }
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    func endOfInput(_ expected: String) -> JSONError {
        .syntax("unexpected end of input at byte \(index) (expected \(expected))")
    }

    func unexpectedByte(_ context: String) -> JSONError {
        let byte = bytes[index]
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(byte))"
        return .syntax("unexpected \(shown) at byte \(index) \(context)")
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}

/// An array or object the parser is inside, with what it has collected so far. Modified in
/// place on the parser's stack (`open[innermost].members.append`), so nothing is copied.
private struct OpenContainer {
    let isObject: Bool
    var elements: [JSONValue] = []
    var members: [(String, JSONValue)] = []
    /// The key of the member whose value is being parsed (objects only).
    var pendingKey = ""

    init(array: Void) {
        isObject = false
    }

    init(objectWithFirstKey key: String) {
        isObject = true
        pendingKey = key
        // Room for a typical request's members, so they do not regrow 1, 2, 4, 8.
        members.reserveCapacity(8)
    }
}
