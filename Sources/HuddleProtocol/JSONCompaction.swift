/// Writing one value's compact serialization while parsing it, with no tree in between: what
/// a publication's `data` needs, since it is stored and sent as text.
///
/// The output is byte for byte what `JSONWriter` writes for the parsed value: whitespace goes,
/// numbers stay as written, an escape-free string is already in minimal form (it cannot hold a
/// quote, a backslash or a control character) and is copied as it is, and a string with
/// escapes is decoded and written again by `JSONWriter`. The grammar, depth rule and error
/// messages are those of the tree parser, which fails on the same byte for the same input.
extension JSONDocumentParser {
    /// Parses the value at the cursor, which sits inside `depth` open containers, and returns
    /// its compact serialization.
    mutating func parseCompactValue(depth: Int) throws(JSONError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(min(bytes.count &- index, 1024))
        // Which open containers are objects, innermost last.
        var openIsObject: [Bool] = []

        nextValue: while true {
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput("a value") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth &+ openIsObject.count < maxDepth else { throw .tooDeep }
                let isObject = byte == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index &+= 1
                output.append(byte)
                skipWhitespace()
                if index < bytes.count, bytes[index] == close {
                    index &+= 1
                    output.append(close)
                } else {
                    if isObject { try compactKeyAndColon(into: &output) }
                    openIsObject.append(isObject)
                    continue nextValue
                }
            case UInt8(ascii: "\""):
                index &+= 1
                try compactStringBody(into: &output)
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                output.append(contentsOf: "true".utf8)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                output.append(contentsOf: "false".utf8)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                output.append(contentsOf: "null".utf8)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let start = index
                try skipNumber()
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            default:
                throw unexpectedByte("where a value should start")
            }

            // After a value: the next one in its container, or the end of containers.
            while let isObject = openIsObject.last {
                skipWhitespace()
                guard index < bytes.count else { throw endOfInput(isObject ? "',' or '}'" : "',' or ']'") }
                let separator = bytes[index]
                if separator == UInt8(ascii: ",") {
                    index &+= 1
                    output.append(separator)
                    if isObject {
                        skipWhitespace()
                        try compactKeyAndColon(into: &output)
                    }
                    continue nextValue
                }
                if isObject {
                    guard separator == UInt8(ascii: "}") else { throw unexpectedByte("where ',' or '}' should be") }
                } else {
                    guard separator == UInt8(ascii: "]") else { throw unexpectedByte("where ',' or ']' should be") }
                }
                index &+= 1
                output.append(separator)
                openIsObject.removeLast()
            }
            // Every byte written came from a checked string, a literal or a number: valid UTF-8.
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// As `parseKeyAndColon`, writing the key and the colon.
    private mutating func compactKeyAndColon(into output: inout [UInt8]) throws(JSONError) {
        guard index < bytes.count else { throw endOfInput("an object key") }
        guard bytes[index] == UInt8(ascii: "\"") else { throw unexpectedByte("where an object key should start") }
        index &+= 1
        try compactStringBody(into: &output)
        skipWhitespace()
        guard index < bytes.count else { throw endOfInput("':'") }
        guard bytes[index] == UInt8(ascii: ":") else { throw unexpectedByte("where ':' should be") }
        index &+= 1
        output.append(UInt8(ascii: ":"))
    }

    /// Writes the string whose opening quote has been consumed, quoted, in minimal form.
    private mutating func compactStringBody(into output: inout [UInt8]) throws(JSONError) {
        let start = index
        if let content = try scanEscapeFreeStringBody() {
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: content)
            output.append(UInt8(ascii: "\""))
        } else {
            JSONWriter.appendString(try parseEscapedStringBody(from: start), to: &output)
        }
    }
}
