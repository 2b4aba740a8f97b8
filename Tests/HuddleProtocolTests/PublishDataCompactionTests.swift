import HuddleProtocol
import Testing

/// A publish's `data` is written in compact form while the request is parsed, not built as a
/// tree and written afterwards; these tests hold that path to the tree parser and the writer:
/// the same text out, the same errors on the same bytes.
@Suite struct PublishDataCompactionTests {
    static func publishing(_ data: [UInt8]) -> [UInt8] {
        Array(#"{"id":"c","op":"publish","channel":"x","data":"#.utf8) + data + Array("}".utf8)
    }

    static func decodedData(_ message: [UInt8]) throws -> String {
        let request = try RequestDecoder.decode(message, limits: ProtocolLimits()).get()
        guard case .publish(_, _, let data) = request.operation else { throw DecodeFailure.notPublish }
        return data
    }

    enum DecodeFailure: Error { case notPublish }

    static func writtenTree(_ json: [UInt8]) throws -> String {
        JSONWriter.serialize(try JSONParser.parse(json, maxDepth: 31))
    }

    @Test(arguments: JSONParserTests.accepted)
    func compactsAsTheWriterWritesTheParsedTree(_ sample: JSONParserTests.Accepted) throws {
        let json = Array(sample.json.utf8)
        #expect(try Self.decodedData(Self.publishing(json)) == Self.writtenTree(json))
    }

    @Test func compactsGeneratedValuesWrittenWithWhitespaceAndEscapes() throws {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let value = JSONWriterTests.randomValue(depth: 0, using: &generator)
            let loose = Self.looseJSON(JSONWriter.serialize(value), using: &generator)
            #expect(try Self.decodedData(Self.publishing(loose)) == JSONWriter.serialize(value),
                    "data \(String(decoding: loose, as: UTF8.self))")
        }
    }

    @Test(arguments: JSONParserTests.rejected)
    func failsOnTheSameByteWithTheSameErrorAsTheTreeParser(_ sample: JSONParserTests.Rejected) {
        let message = Self.publishing(sample.bytes)
        let expected: RequestError
        do {
            _ = try JSONParser.parse(message, maxDepth: 32)
            // Some rejected samples become valid after the prefix (e.g. a lone "]" closes nothing
            // there, but a number followed by "}" is fine): nothing to compare then.
            return
        } catch {
            switch error {
            case .syntax(let problem): expected = RequestError(id: nil, code: "bad_json", message: "not valid JSON: \(problem)")
            case .tooDeep: expected = RequestError(id: "c", code: "too_deep", message: "JSON nested deeper than 32 levels")
            }
        }
        #expect(RequestDecoder.decode(message, limits: ProtocolLimits()) == .failure(expected))
    }

    @Test func depthInsideDataCountsFromTheRequestObject() throws {
        for depth in [30, 31, 32] {
            let data = Array((String(repeating: #"{"k":["#, count: depth / 2) + (depth % 2 == 1 ? "[]" : "0")
                + String(repeating: "]}", count: depth / 2)).utf8)
            let result = RequestDecoder.decode(Self.publishing(data), limits: ProtocolLimits())
            if depth <= 31 {
                #expect(try result.get().operation == .publish(channel: "x", type: "message", data: Self.writtenTree(data)))
            } else {
                #expect(result == .failure(RequestError(id: "c", code: "too_deep", message: "JSON nested deeper than 32 levels")))
            }
        }
    }

    /// `compact` (the writer's output) re-spelled as a sender might: whitespace between tokens,
    /// and some characters in strings escaped where they need not be.
    static func looseJSON(_ compact: String, using generator: inout SplitMix64) -> [UInt8] {
        let whitespace: [String] = ["", " ", "\n", "\t", "\r\n  "]
        var output: [UInt8] = []
        var inString = false
        // Scalars still to copy as they are: the rest of an escape the writer wrote.
        var escapeRemaining = 0
        for scalar in compact.unicodeScalars {
            if inString {
                if escapeRemaining > 0 {
                    escapeRemaining -= 1
                    if escapeRemaining == 4 && scalar != "u" { escapeRemaining = 0 }
                } else if scalar == "\\" {
                    escapeRemaining = 5  // the letter, and four hex digits if it is 'u'
                } else if scalar == "\"" {
                    inString = false
                } else if generator.next() % 3 == 0 {
                    output.append(contentsOf: Self.escaped(scalar).utf8)
                    continue
                }
                output.append(contentsOf: String(scalar).utf8)
                continue
            }
            if scalar == "\"" { inString = true }
            // Whitespace may go before a string or a structural character, not inside a
            // literal or a number.
            if "\"{}[],:".unicodeScalars.contains(scalar) {
                output.append(contentsOf: whitespace[Int(generator.next() % UInt64(whitespace.count))].utf8)
            }
            output.append(contentsOf: String(scalar).utf8)
        }
        return output
    }

    /// `\uXXXX` (a surrogate pair beyond the BMP), or `\/` for a slash.
    static func escaped(_ scalar: Unicode.Scalar) -> String {
        if scalar == "/" { return "\\/" }
        func hex(_ unit: UInt16) -> String {
            let digits = String(unit, radix: 16, uppercase: unit % 2 == 0)
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }
        return String(decoding: String(scalar).utf16, as: UTF16.self).utf16.map(hex).joined()
    }
}
