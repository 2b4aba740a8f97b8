import HuddleProtocol
import Testing

@Suite struct ServerMessageTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func success() {
        let result: JSONValue = .object([("epoch", .string("lq3k2b-1")), ("offset", .integer(42)), ("time", .integer(1763712000000))])
        #expect(Self.text(ServerMessage.success(id: "7", result: result))
            == #"{"id":"7","ok":true,"result":{"epoch":"lq3k2b-1","offset":42,"time":1763712000000}}"#)
        #expect(Self.text(ServerMessage.success(id: "q\"", result: .object([]))) == #"{"id":"q\"","ok":true,"result":{}}"#)
    }

    /// The publish reply written directly is byte for byte the generic success reply of its
    /// `PublishResult`, escapes, extremes and the duplicate flag included.
    @Test func publishedIsTheGenericSuccess() {
        let results = [
            PublishResult(epoch: "lq3k2b-1", offset: 42, time: 1763712000000, duplicate: false),
            PublishResult(epoch: "e\"\\\u{1}é", offset: 0, time: -1, duplicate: true),
            PublishResult(epoch: "", offset: .max, time: .min, duplicate: false),
        ]
        for id in ["7", "q\"\n", "ü🙂", ""] {
            for result in results {
                #expect(Self.text(ServerMessage.published(id: id, result)) == Self.text(ServerMessage.success(id: id, result: result.result)))
            }
        }
        #expect(Self.text(ServerMessage.published(id: "9", PublishResult(epoch: "e", offset: 3, time: 5, duplicate: true)))
            == #"{"id":"9","ok":true,"result":{"epoch":"e","offset":3,"time":5,"duplicate":true}}"#)
    }

    @Test func failure() {
        #expect(Self.text(ServerMessage.failure(id: "7", code: "forbidden", message: "only members may publish to chat:alice~bob"))
            == #"{"id":"7","ok":false,"error":{"code":"forbidden","message":"only members may publish to chat:alice~bob"}}"#)
        #expect(Self.text(ServerMessage.failure(id: nil, code: "bad_json", message: "not \"JSON\"\n"))
            == #"{"id":null,"ok":false,"error":{"code":"bad_json","message":"not \"JSON\"\n"}}"#)
        #expect(Self.text(ServerMessage.failure(id: "8", code: "rate_limited", message: "slow down", retryAfterMilliseconds: 250))
            == #"{"id":"8","ok":false,"error":{"code":"rate_limited","message":"slow down","retry_after_ms":250}}"#)
        #expect(Self.text(ServerMessage.failure(id: "8", code: "c", message: "m", retryAfterMilliseconds: 0))
            == #"{"id":"8","ok":false,"error":{"code":"c","message":"m","retry_after_ms":0}}"#)
    }

    @Test func publicationEvent() {
        #expect(Self.text(ServerMessage.publicationEvent(
            channel: "room:lobby", epoch: "lq3k2b-1", offset: 43, type: "message", from: "alice",
            data: #"{"text":"hi"}"#, time: 1763712000123))
            == #"{"event":"publication","channel":"room:lobby","epoch":"lq3k2b-1","offset":43,"type":"message","from":"alice","data":{"text":"hi"},"time":1763712000123}"#)
        #expect(Self.text(ServerMessage.publicationEvent(
            channel: "inbox:bob", epoch: "e", offset: UInt64.max, type: "notice", from: nil, data: "null", time: -1))
            == #"{"event":"publication","channel":"inbox:bob","epoch":"e","offset":18446744073709551615,"type":"notice","from":null,"data":null,"time":-1}"#)
    }

    @Test func publicationObjectInAResult() {
        let publication = ChannelPublication(
            channel: "room:lobby", epoch: "e", offset: 42, type: "message", from: "bob", data: .raw(#"{"text":"yo"}"#), time: 1763712000100).listed
        #expect(JSONWriter.serialize(publication)
            == #"{"offset":42,"type":"message","from":"bob","data":{"text":"yo"},"time":1763712000100}"#)
        let anonymous = ChannelPublication(channel: "room:lobby", epoch: "e", offset: 1, type: "t", from: nil, data: .raw("[1]"), time: 0).listed
        #expect(JSONWriter.serialize(anonymous) == #"{"offset":1,"type":"t","from":null,"data":[1],"time":0}"#)
        #expect(anonymous["from"] == .null)
    }

    @Test func presenceEvent() {
        #expect(Self.text(ServerMessage.presenceEvent(user: "bob", online: false, time: 1763712000000))
            == #"{"event":"presence","user":"bob","online":false,"time":1763712000000}"#)
        #expect(Self.text(ServerMessage.presenceEvent(user: "amy", online: true, time: 5))
            == #"{"event":"presence","user":"amy","online":true,"time":5}"#)
    }

    @Test func sessionEvent() {
        #expect(Self.text(ServerMessage.sessionEvent(username: "alice", email: "alice@example.com", expiresAt: 1766304000000, time: 1763712000000))
            == #"{"event":"session","user":{"username":"alice","email":"alice@example.com"},"expires_at":1766304000000,"time":1763712000000}"#)
    }

    @Test func authFailedEvent() {
        #expect(Self.text(ServerMessage.authFailedEvent(code: "token_expired", message: "the token expired", time: Int64.min))
            == #"{"event":"auth_failed","error":{"code":"token_expired","message":"the token expired"},"time":-9223372036854775808}"#)
    }

    @Test func everyMessageParsesBack() throws {
        let messages = [
            ServerMessage.success(id: "\u{0}", result: .array([.string("\u{1F}é")])),
            ServerMessage.failure(id: nil, code: "x", message: "\\"),
            ServerMessage.publicationEvent(channel: "c\"", epoch: "\n", offset: 0, type: "t", from: "\t", data: "{}", time: Int64.max),
            ServerMessage.presenceEvent(user: "😀", online: true, time: 0),
            ServerMessage.sessionEvent(username: "u", email: "e\u{7}", expiresAt: 0, time: 0),
            ServerMessage.authFailedEvent(code: "c", message: "\u{8}", time: 0),
        ]
        for message in messages {
            #expect(throws: Never.self) { try JSONParser.parse(message, maxDepth: 4) }
        }
    }
}
