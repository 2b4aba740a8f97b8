import HuddleProtocol
import Testing

@Suite struct RequestDecoderTests {
    static func decode(_ json: String, limits: ProtocolLimits = ProtocolLimits()) -> Result<ClientRequest, RequestError> {
        RequestDecoder.decode(Array(json.utf8), limits: limits)
    }

    struct Decoded: Sendable, CustomTestStringConvertible {
        var json: String
        var operation: Operation
        var testDescription: String { json }
    }

    static let decoded: [Decoded] = [
        Decoded(json: #"{"id":"1","op":"ping"}"#, operation: .ping),
        Decoded(json: #"{"id":"1","op":"signup","username":"alice","email":"a@x.io","password":"secret12"}"#,
                operation: .signup(username: "alice", email: "a@x.io", password: "secret12", device: nil)),
        Decoded(json: #"{"id":"1","op":"signup","username":"alice","email":"a@x.io","password":"p","device":"alice's iPhone"}"#,
                operation: .signup(username: "alice", email: "a@x.io", password: "p", device: "alice's iPhone")),
        Decoded(json: #"{"id":"1","op":"signup","username":"a","email":"e","password":"p","device":null}"#,
                operation: .signup(username: "a", email: "e", password: "p", device: nil)),
        Decoded(json: #"{"id":"1","op":"login","login":"alice@x.io","password":"pw"}"#,
                operation: .login(login: "alice@x.io", password: "pw", device: nil)),
        Decoded(json: #"{"id":"1","op":"login","login":"alice","password":"pw","device":"laptop"}"#,
                operation: .login(login: "alice", password: "pw", device: "laptop")),
        Decoded(json: #"{"id":"1","op":"auth","token":"abc"}"#, operation: .auth(token: "abc")),
        Decoded(json: #"{"id":"1","op":"logout"}"#, operation: .logout(all: false)),
        Decoded(json: #"{"id":"1","op":"logout","all":true}"#, operation: .logout(all: true)),
        Decoded(json: #"{"id":"1","op":"logout","all":null}"#, operation: .logout(all: false)),
        Decoded(json: #"{"id":"1","op":"whoami"}"#, operation: .whoami),
        Decoded(json: #"{"id":"1","op":"subscribe","channel":"room:lobby"}"#,
                operation: .subscribe(channel: "room:lobby", since: nil)),
        Decoded(json: #"{"id":"1","op":"subscribe","channel":"room:lobby","since":null}"#,
                operation: .subscribe(channel: "room:lobby", since: nil)),
        Decoded(json: #"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":"lq3k2b-1","offset":41}}"#,
                operation: .subscribe(channel: "c", since: Position(epoch: "lq3k2b-1", offset: 41))),
        Decoded(json: #"{"id":"1","op":"subscribe","channel":"c","since":{"offset":0,"epoch":"","extra":1}}"#,
                operation: .subscribe(channel: "c", since: Position(epoch: "", offset: 0))),
        Decoded(json: #"{"id":"1","op":"unsubscribe","channel":"room:lobby"}"#, operation: .unsubscribe(channel: "room:lobby")),
        Decoded(json: #"{"id":"7","op":"publish","channel":"room:lobby","data":{"text":"hi"}}"#,
                operation: .publish(channel: "room:lobby", type: "message", data: #"{"text":"hi"}"#)),
        Decoded(json: #"{"id":"7","op":"publish","channel":"c","type":"typing.start_2","data":null}"#,
                operation: .publish(channel: "c", type: "typing.start_2", data: "null")),
        Decoded(json: #"{"id":"7","op":"publish","channel":"c","type":null,"data":"x"}"#,
                operation: .publish(channel: "c", type: "message", data: #""x""#)),
        // `data` is stored normalized: no whitespace, minimal escapes, numbers as written.
        Decoded(json: "{\"id\":\"7\",\"op\":\"publish\",\"channel\":\"c\",\"data\": { \"t\" : [ 1.50 , \"\\u0041\\/\\u00e9\" ] ,\n\"n\":-0 } }",
                operation: .publish(channel: "c", type: "message", data: #"{"t":[1.50,"A/é"],"n":-0}"#)),
        Decoded(json: #"{"id":"1","op":"history","channel":"room:lobby"}"#,
                operation: .history(channel: "room:lobby", before: nil, limit: 50)),
        Decoded(json: #"{"id":"1","op":"history","channel":"c","before":40,"limit":20}"#,
                operation: .history(channel: "c", before: 40, limit: 20)),
        Decoded(json: #"{"id":"1","op":"history","channel":"c","before":null,"limit":null}"#,
                operation: .history(channel: "c", before: nil, limit: 50)),
        Decoded(json: #"{"id":"1","op":"history","channel":"c","before":18446744073709551615,"limit":1}"#,
                operation: .history(channel: "c", before: UInt64.max, limit: 1)),
        Decoded(json: #"{"id":"1","op":"history","channel":"c","limit":100}"#,
                operation: .history(channel: "c", before: nil, limit: 100)),
        Decoded(json: #"{"id":"1","op":"presence","channel":"room:lobby"}"#, operation: .presence(channel: "room:lobby")),
        // Unknown fields are ignored, wherever they are; the first of duplicate members counts.
        Decoded(json: #"{"v":2,"op":"auth","future":{"x":[1]},"token":"t","id":"1","token":"later"}"#,
                operation: .auth(token: "t")),
    ]

    @Test(arguments: decoded)
    func decodesEveryOp(_ sample: Decoded) throws {
        let request = try Self.decode(sample.json).get()
        let expectedID = try #require(JSONParser.parse(Array(sample.json.utf8), maxDepth: 32)["id"]?.stringValue)
        #expect(request == ClientRequest(id: expectedID, operation: sample.operation))
    }

    @Test func namesEveryOpAsOnTheWire() throws {
        for sample in Self.decoded {
            let op = try #require(JSONParser.parse(Array(sample.json.utf8), maxDepth: 32)["op"]?.stringValue)
            #expect(sample.operation.name == op)
        }
    }

    struct Refused: Sendable, CustomTestStringConvertible {
        var json: String
        var error: RequestError
        var testDescription: String { json }
        init(_ json: String, _ id: String?, _ code: String, _ message: String) {
            self.json = json
            self.error = RequestError(id: id, code: code, message: message)
        }
    }

    static let longID = String(repeating: "i", count: 65)

    static let refused: [Refused] = [
        // Not a JSON object: no id can be read.
        Refused("", nil, "bad_json", "not valid JSON: unexpected end of input at byte 0 (expected a value)"),
        Refused(#"{"id":"1","op":"ping",}"#, nil, "bad_json", "not valid JSON: unexpected '}' at byte 22 where an object key should start"),
        Refused(#"[{"id":"1","op":"ping"}]"#, nil, "bad_json", "the message must be a JSON object"),
        Refused(#""ping""#, nil, "bad_json", "the message must be a JSON object"),
        // The id.
        Refused(#"{"op":"ping"}"#, nil, "bad_request", "id is required"),
        Refused(#"{"id":7,"op":"ping"}"#, nil, "bad_request", "id must be a string"),
        Refused(#"{"id":null,"op":"ping"}"#, nil, "bad_request", "id must be a string"),
        Refused(#"{"id":"","op":"ping"}"#, nil, "bad_request", "id must be 1 to 64 characters"),
        Refused(#"{"id":"\#(longID)","op":"ping"}"#, nil, "bad_request", "id must be 1 to 64 characters"),
        Refused(#"{"id":"\#(String(repeating: "é", count: 65))","op":"ping"}"#, nil, "bad_request", "id must be 1 to 64 characters"),
        // The op.
        Refused(#"{"id":"1"}"#, "1", "bad_request", "op is required"),
        Refused(#"{"id":"1","op":["ping"]}"#, "1", "bad_request", "op must be a string"),
        Refused(#"{"id":"1","op":"Ping"}"#, "1", "unknown_op", #"unknown op "Ping""#),
        Refused(#"{"id":"1","op":"\#(String(repeating: "x", count: 40))"}"#, "1", "unknown_op",
                #"unknown op ""# + String(repeating: "x", count: 32) + #"…""#),
        // signup, login, auth, logout.
        Refused(#"{"id":"1","op":"signup","email":"e","password":"p"}"#, "1", "bad_request", "username is required"),
        Refused(#"{"id":"1","op":"signup","username":1,"email":"e","password":"p"}"#, "1", "bad_request", "username must be a string"),
        Refused(#"{"id":"1","op":"signup","username":"u","password":"p"}"#, "1", "bad_request", "email is required"),
        Refused(#"{"id":"1","op":"signup","username":"u","email":"e"}"#, "1", "bad_request", "password is required"),
        Refused(#"{"id":"1","op":"signup","username":"u","email":"e","password":null}"#, "1", "bad_request", "password must be a string"),
        Refused(#"{"id":"1","op":"signup","username":"u","email":"e","password":"p","device":5}"#, "1", "bad_request", "device must be a string"),
        Refused(#"{"id":"1","op":"signup","username":"u","email":"e","password":"p","device":"\#(String(repeating: "d", count: 65))"}"#,
                "1", "bad_request", "device must be at most 64 characters"),
        Refused(#"{"id":"1","op":"login","password":"p"}"#, "1", "bad_request", "login is required"),
        Refused(#"{"id":"1","op":"login","login":"l"}"#, "1", "bad_request", "password is required"),
        Refused(#"{"id":"1","op":"login","login":"l","password":"p","device":"\#(String(repeating: "😀", count: 65))"}"#,
                "1", "bad_request", "device must be at most 64 characters"),
        Refused(#"{"id":"1","op":"auth"}"#, "1", "bad_request", "token is required"),
        Refused(#"{"id":"1","op":"auth","token":{}}"#, "1", "bad_request", "token must be a string"),
        Refused(#"{"id":"1","op":"logout","all":"yes"}"#, "1", "bad_request", "all must be true or false"),
        Refused(#"{"id":"1","op":"logout","all":1}"#, "1", "bad_request", "all must be true or false"),
        // subscribe, unsubscribe, presence.
        Refused(#"{"id":"1","op":"subscribe"}"#, "1", "bad_request", "channel is required"),
        Refused(#"{"id":"1","op":"subscribe","channel":["c"]}"#, "1", "bad_request", "channel must be a string"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":"e:41"}"#, "1", "bad_request", "since must be an object"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"offset":1}}"#, "1", "bad_request", "since.epoch is required"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":2,"offset":1}}"#, "1", "bad_request", "since.epoch must be a string"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":"e"}}"#, "1", "bad_request", "since.offset is required"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":"e","offset":-1}}"#,
                "1", "bad_request", "since.offset must be a non-negative integer"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":"e","offset":1.5}}"#,
                "1", "bad_request", "since.offset must be a non-negative integer"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":"e","offset":"4"}}"#,
                "1", "bad_request", "since.offset must be a non-negative integer"),
        Refused(#"{"id":"1","op":"subscribe","channel":"c","since":{"epoch":"e","offset":18446744073709551616}}"#,
                "1", "bad_request", "since.offset must be a non-negative integer"),
        Refused(#"{"id":"1","op":"unsubscribe"}"#, "1", "bad_request", "channel is required"),
        Refused(#"{"id":"1","op":"unsubscribe","channel":true}"#, "1", "bad_request", "channel must be a string"),
        Refused(#"{"id":"1","op":"presence"}"#, "1", "bad_request", "channel is required"),
        Refused(#"{"id":"1","op":"presence","channel":null}"#, "1", "bad_request", "channel must be a string"),
        // publish.
        Refused(#"{"id":"1","op":"publish","data":1}"#, "1", "bad_request", "channel is required"),
        Refused(#"{"id":"1","op":"publish","channel":"c"}"#, "1", "bad_request", "data is required"),
        Refused(#"{"id":"1","op":"publish","channel":"c","type":7,"data":1}"#, "1", "bad_request", "type must be a string"),
        Refused(#"{"id":"1","op":"publish","channel":"c","type":"","data":1}"#,
                "1", "bad_request", "type must be 1 to 32 characters from a-z, 0-9, '_' and '.'"),
        Refused(#"{"id":"1","op":"publish","channel":"c","type":"Message","data":1}"#,
                "1", "bad_request", "type must be 1 to 32 characters from a-z, 0-9, '_' and '.'"),
        Refused(#"{"id":"1","op":"publish","channel":"c","type":"a-b","data":1}"#,
                "1", "bad_request", "type must be 1 to 32 characters from a-z, 0-9, '_' and '.'"),
        Refused(#"{"id":"1","op":"publish","channel":"c","type":"\#(String(repeating: "t", count: 33))","data":1}"#,
                "1", "bad_request", "type must be 1 to 32 characters from a-z, 0-9, '_' and '.'"),
        // history.
        Refused(#"{"id":"1","op":"history"}"#, "1", "bad_request", "channel is required"),
        Refused(#"{"id":"1","op":"history","channel":"c","limit":0}"#, "1", "bad_request", "limit must be an integer from 1 to 100"),
        Refused(#"{"id":"1","op":"history","channel":"c","limit":101}"#, "1", "bad_request", "limit must be an integer from 1 to 100"),
        Refused(#"{"id":"1","op":"history","channel":"c","limit":-5}"#, "1", "bad_request", "limit must be an integer from 1 to 100"),
        Refused(#"{"id":"1","op":"history","channel":"c","limit":10.0}"#, "1", "bad_request", "limit must be an integer from 1 to 100"),
        Refused(#"{"id":"1","op":"history","channel":"c","limit":"10"}"#, "1", "bad_request", "limit must be an integer from 1 to 100"),
        Refused(#"{"id":"1","op":"history","channel":"c","before":0}"#, "1", "bad_request", "before must be a positive integer"),
        Refused(#"{"id":"1","op":"history","channel":"c","before":-3}"#, "1", "bad_request", "before must be a positive integer"),
        Refused(#"{"id":"1","op":"history","channel":"c","before":1e3}"#, "1", "bad_request", "before must be a positive integer"),
        Refused(#"{"id":"1","op":"history","channel":"c","before":"40"}"#, "1", "bad_request", "before must be a positive integer"),
    ]

    @Test(arguments: refused)
    func refusesWithAPreciseError(_ sample: Refused) {
        #expect(Self.decode(sample.json) == .failure(sample.error))
    }

    @Test func idLengthCountsCharactersNotBytes() throws {
        let id = String(repeating: "é", count: 64)
        #expect(try Self.decode(#"{"id":"\#(id)","op":"ping"}"#).get().id == id)
        let ascii = String(repeating: "i", count: 64)
        #expect(try Self.decode(#"{"id":"\#(ascii)","op":"ping"}"#).get().id == ascii)
        var limits = ProtocolLimits()
        limits.maxIDLength = 2
        #expect(throws: RequestError(id: nil, code: "bad_request", message: "id must be 1 to 2 characters")) {
            try Self.decode(#"{"id":"abc","op":"ping"}"#, limits: limits).get()
        }
    }

    @Test func dataIsLimitedOnceSerialized() throws {
        var limits = ProtocolLimits()
        limits.maxDataBytes = 16 * 1024
        // A string of n characters serializes to n + 2 bytes.
        let fits = String(repeating: "x", count: 16 * 1024 - 2)
        let request = try Self.decode(#"{"id":"9","op":"publish","channel":"c","data":"\#(fits)"}"#, limits: limits).get()
        #expect(request.operation == .publish(channel: "c", type: "message", data: "\"" + fits + "\""))

        let over = fits + "x"
        #expect(Self.decode(#"{"id":"9","op":"publish","channel":"c","data":"\#(over)"}"#, limits: limits)
            == .failure(RequestError(id: "9", code: "payload_too_large",
                                     message: "data is 16385 bytes serialized, over the limit of 16384")))

        // Whitespace in the message does not count against the limit: the compact form does.
        let padded = "[" + String(repeating: " 1 ,", count: 5000) + " 1 ]"
        #expect(padded.utf8.count > limits.maxDataBytes)
        let compact = try Self.decode(#"{"id":"9","op":"publish","channel":"c","data":\#(padded)}"#, limits: limits).get()
        guard case .publish(_, _, let data) = compact.operation else {
            Issue.record("not a publish")
            return
        }
        #expect(data.utf8.count == 2 * 5001 + 1)
    }

    @Test func depthCountsTheWholeMessageAndTheRefusalKeepsTheID() throws {
        // The request object is level 1, so `data` may nest 31 levels.
        let deepest = String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
        _ = try Self.decode(#"{"id":"7","op":"publish","channel":"c","data":\#(deepest)}"#).get()

        let tooDeep = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        let expected = RequestError(id: "7", code: "too_deep", message: "JSON nested deeper than 32 levels")
        #expect(Self.decode(#"{"id":"7","op":"publish","channel":"c","data":\#(tooDeep)}"#) == .failure(expected))
        // Also when `id` comes after the deep member, and when the rest is a megabyte of '['.
        #expect(Self.decode(#"{"op":"publish","data":{"s":"]]"},"x":\#(tooDeep),"id":"7"}"#) == .failure(expected))
        #expect(Self.decode(#"{"id":"7","data":"# + String(repeating: "[", count: 1 << 20)) == .failure(expected))
        // No usable id: null.
        let anonymous = RequestError(id: nil, code: "too_deep", message: "JSON nested deeper than 32 levels")
        #expect(Self.decode(#"{"data":\#(tooDeep)}"#) == .failure(anonymous))
        #expect(Self.decode(#"{"data":\#(tooDeep),"id":"7"#) == .failure(anonymous))
        #expect(Self.decode(#"{"id":7,"data":\#(tooDeep)}"#) == .failure(anonymous))
        #expect(Self.decode(#"{"id":"","data":\#(tooDeep)}"#) == .failure(anonymous))
        #expect(Self.decode(#"{"id":"\#(Self.longID)","data":\#(tooDeep)}"#) == .failure(anonymous))
        #expect(Self.decode(#"[{"id":"7"},\#(tooDeep)]"#) == .failure(anonymous))
    }

    /// Keyed writes, publish included, carry their `client_id` in the request; other ops
    /// ignore the field (unknown fields are ignored).
    @Test func aKeyedWriteCarriesItsClientID() throws {
        let keyed = try Self.decode(#"{"id":"1","op":"like","post":3,"client_id":"l-1"}"#).get()
        #expect(keyed == ClientRequest(id: "1", operation: .like(post: 3, liked: nil), clientID: "l-1"))
        #expect(try Self.decode(#"{"id":"1","op":"feed","client_id":"f"}"#).get().clientID == nil)
        let publish = try Self.decode(#"{"id":"1","op":"publish","channel":"room:a","data":1,"client_id":"m"}"#).get()
        #expect(publish == ClientRequest(id: "1", operation: .publish(channel: "room:a", type: "message", data: "1"), clientID: "m"))
        let empty = RequestError(id: "1", code: "bad_request", message: "client_id must be 1 to 64 characters")
        #expect(Self.decode(#"{"id":"1","op":"post","text":"x","client_id":""}"#) == .failure(empty))
        #expect(Self.decode(#"{"id":"1","op":"post","text":"x","client_id":"\#(Self.longID)"}"#) == .failure(empty))
        #expect(Self.decode(#"{"id":"1","op":"post","text":"x","client_id":7}"#).map(\.id) == .failure(RequestError(id: "1", code: "bad_request", message: "client_id must be a string")))
    }

    @Test func decodesFromARawBuffer() throws {
        let bytes = Array(#"{"id":"r","op":"whoami"}"#.utf8)
        let request = try bytes.withUnsafeBytes { RequestDecoder.decode($0, limits: ProtocolLimits()) }.get()
        #expect(request == ClientRequest(id: "r", operation: .whoami))
    }
}
