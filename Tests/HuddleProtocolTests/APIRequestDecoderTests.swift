import HuddleProtocol
import Testing

@Suite struct APIRequestDecoderTests {
    static func publish(_ json: String, limits: ProtocolLimits = ProtocolLimits()) -> Result<(channel: String, type: String, data: String), RequestError> {
        APIRequestDecoder.publish(Array(json.utf8), limits: limits)
    }

    @Test func publishReadsChannelTypeAndCompactData() throws {
        let body = try Self.publish(#"{"channel": "inbox:alice", "data": {"title": "hi", "n": [1, 2]}, "type": "notice"}"#).get()
        #expect(body.channel == "inbox:alice")
        #expect(body.type == "notice")
        #expect(body.data == #"{"title":"hi","n":[1,2]}"#)
        let defaulted = try Self.publish(#"{"channel":"c","data":0,"id":5}"#).get()
        #expect(defaulted.type == "message")
        #expect(defaulted.data == "0")
    }

    @Test(arguments: [
        (#"{"data":1}"#, "bad_request", "channel is required"),
        (#"{"channel":1,"data":1}"#, "bad_request", "channel must be a string"),
        (#"{"channel":"c"}"#, "bad_request", "data is required"),
        (#"{"channel":"c","data":1,"type":"A"}"#, "bad_request", "type must be 1 to 32 characters from a-z, 0-9, '_' and '.'"),
        (#"["channel"]"#, "bad_json", "the message must be a JSON object"),
        (#"{"channel":"c","data":1"#, "bad_json", "not valid JSON: unexpected end of input at byte 23 (expected ',' or '}')"),
        (#"{"channel":"c","data":[[[[]]]]}"#, "too_deep", "JSON nested deeper than 4 levels"),
        (#"{"channel":"c","data":"12345678"}"#, "payload_too_large", "data is 10 bytes serialized, over the limit of 9"),
    ] as [(String, String, String)])
    func publishRefusals(json: String, code: String, message: String) {
        var limits = ProtocolLimits()
        limits.maxDepth = 4
        limits.maxDataBytes = 9
        #expect(throws: RequestError(id: nil, code: code, message: message)) { try Self.publish(json, limits: limits).get() }
    }

    @Test func publishTooDeepNeverCarriesAnID() {
        var limits = ProtocolLimits()
        limits.maxDepth = 1
        #expect(throws: RequestError(id: nil, code: "too_deep", message: "JSON nested deeper than 1 levels")) {
            try Self.publish(#"{"id":"7","channel":"c","data":[]}"#, limits: limits).get()
        }
    }

    @Test func disconnectReadsTheUser() throws {
        #expect(try APIRequestDecoder.disconnect(Array(#"{"user": "alice"}"#.utf8), limits: ProtocolLimits()).get() == "alice")
        #expect(throws: RequestError(id: nil, code: "bad_request", message: "user is required")) {
            try APIRequestDecoder.disconnect(Array("{}".utf8), limits: ProtocolLimits()).get()
        }
        #expect(throws: RequestError(id: nil, code: "bad_request", message: "user must be a string")) {
            try APIRequestDecoder.disconnect(Array(#"{"user":["alice"]}"#.utf8), limits: ProtocolLimits()).get()
        }
        #expect(throws: RequestError(id: nil, code: "bad_json", message: "not valid JSON: unexpected end of input at byte 0 (expected a value)")) {
            try APIRequestDecoder.disconnect([], limits: ProtocolLimits()).get()
        }
    }

    struct Query: Sendable, CustomTestStringConvertible {
        var query: String
        var items: [Pair]
        var testDescription: String { query }
    }

    struct Pair: Sendable, Equatable {
        var name: String
        var value: String
        init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    static let queries: [Query] = [
        Query(query: "", items: []),
        Query(query: "channel=room:lobby&before=40&limit=20",
              items: [Pair("channel", "room:lobby"), Pair("before", "40"), Pair("limit", "20")]),
        Query(query: "channel=room%3Alobby", items: [Pair("channel", "room:lobby")]),
        Query(query: "a=x%3Ay&b=1+2&c=%2B", items: [Pair("a", "x:y"), Pair("b", "1 2"), Pair("c", "+")]),
        Query(query: "na%6De=%c3%A9t%C3%a9", items: [Pair("name", "été")]),
        Query(query: "flag&x=", items: [Pair("flag", ""), Pair("x", "")]),
        Query(query: "&&a=1&&", items: [Pair("a", "1")]),
        Query(query: "a=1=2", items: [Pair("a", "1=2")]),
        Query(query: "a=1&a=2", items: [Pair("a", "1"), Pair("a", "2")]),
        Query(query: "=v", items: [Pair("", "v")]),
        // Malformed escapes stay as written; bytes that are not UTF-8 become U+FFFD.
        Query(query: "p=100%&q=%zz&r=%4", items: [Pair("p", "100%"), Pair("q", "%zz"), Pair("r", "%4")]),
        Query(query: "s=%FF", items: [Pair("s", "\u{FFFD}")]),
        Query(query: "t=caf%C3%A9%20ok", items: [Pair("t", "café ok")]),
    ]

    @Test(arguments: queries)
    func queryItems(_ sample: Query) {
        #expect(APIRequestDecoder.queryItems(sample.query).map { Pair($0.0, $0.1) } == sample.items)
    }
}
