import Foundation
import HuddleProtocol
import Testing

/// Every JSON example in protocol.md read by the wire model and written back: a reply, an
/// event or an object must come out as the document shows it (compacted), so the document
/// cannot drift from the code. A request must decode.
@Suite struct ProtocolDocumentExampleTests {
    struct Example: CustomTestStringConvertible, Sendable {
        var line: Int
        var text: String
        var testDescription: String { "protocol.md:\(line)" }
    }

    static let examples: [Example] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol.md")
        guard let document = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        var examples: [Example] = []
        var current: (line: Int, lines: [String])?
        for (index, line) in document.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if current == nil, line == "```json" {
                current = (index + 2, [])
            } else if let block = current, line == "```" {
                examples.append(Example(line: block.line, text: block.lines.joined(separator: "\n")))
                current = nil
            } else if current != nil {
                current!.lines.append(String(line))
            }
        }
        return examples
    }()

    @Test func theDocumentHasItsExamples() {
        #expect(Self.examples.count >= 20)
    }

    @Test(arguments: examples) func roundTrips(_ example: Example) throws {
        let value = try JSONParser.parse(Array(example.text.utf8), maxDepth: 64)
        let compact = JSONWriter.serialize(value)
        if value["op"] != nil {
            let decoded = RequestDecoder.decode(Array(example.text.utf8), limits: ProtocolLimits())
            guard case .success = decoded else { throw WireFormatError("the request does not decode: \(decoded)") }
            return
        }
        let writings = Self.writings(of: value)
        #expect(writings.contains(compact), "no reading writes it back; the readings give \(writings)")
    }

    /// What each reading of `value` the wire model has writes back.
    static func writings(of value: JSONValue) -> [String] {
        if let reply = try? ServerReply(json: value) {
            var writings = [String(decoding: reply.message, as: UTF8.self)]
            // The result must be one the model knows too, not any JSON.
            if case .success(let result) = reply.outcome {
                writings = ReplyResult.decodings(of: result).isEmpty ? [] : writings
            }
            return writings
        }
        if let event = try? ServerEvent(json: value) { return [String(decoding: event.message, as: UTF8.self)] }
        var readings: [JSONValue] = ReplyResult.decodings(of: value).map(\.json)
        readings += [
            try? FeedPost(json: value).json, try? Memory(json: value).json, try? MemoryPoint(json: value).json,
            (try? Whereabouts(json: value, user: "")).map { .object($0.members) }, try? PushNotice(json: value).json,
        ].compactMap { $0 }
        return readings.map(JSONWriter.serialize)
    }
}
