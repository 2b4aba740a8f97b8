import HuddleProtocol
import Testing

/// protocol.md "Activities and matches": the four ops' arguments, and a precise `bad_request`
/// for each wrong shape. The list, the audience's friendship and the `expires_in` range are the
/// core's to judge.
@Suite struct ActivityRequestDecoderTests {
    static func decode(_ json: String) -> Result<ClientRequest, RequestError> {
        RequestDecoder.decode(Array(json.utf8), limits: ProtocolLimits())
    }

    static let decoded: [RequestDecoderTests.Decoded] = [
        .init(json: #"{"id":"1","op":"activities"}"#, operation: .activities),
        .init(json: #"{"id":"1","op":"activity_on","activity":"coffee"}"#, operation: .activityOn(activity: "coffee", friends: nil, expiresIn: nil)),
        .init(json: #"{"id":"1","op":"activity_on","activity":"Gym","friends":null,"expires_in":null}"#,
              operation: .activityOn(activity: "Gym", friends: nil, expiresIn: nil)),
        .init(json: #"{"id":"1","op":"activity_on","activity":"Gym","friends":["Bob","carol"],"expires_in":3600}"#,
              operation: .activityOn(activity: "Gym", friends: ["Bob", "carol"], expiresIn: 3600)),
        // Out of range is the core's call (its limit is configured), so it is passed on.
        .init(json: #"{"id":"1","op":"activity_on","activity":"Gym","expires_in":-1}"#,
              operation: .activityOn(activity: "Gym", friends: nil, expiresIn: -1)),
        .init(json: #"{"id":"1","op":"activity_off","activity":"Gym"}"#, operation: .activityOff(activity: "Gym")),
        .init(json: #"{"id":"1","op":"matches"}"#, operation: .matches(byActivity: false)),
        .init(json: #"{"id":"1","op":"matches","order":"time"}"#, operation: .matches(byActivity: false)),
        .init(json: #"{"id":"1","op":"matches","order":"activity"}"#, operation: .matches(byActivity: true)),
    ]

    @Test(arguments: decoded)
    func decodesEachOp(_ sample: RequestDecoderTests.Decoded) throws {
        #expect(try Self.decode(sample.json).get() == ClientRequest(id: "1", operation: sample.operation))
        let op = try #require(JSONParser.parse(Array(sample.json.utf8), maxDepth: 32)["op"]?.stringValue)
        #expect(sample.operation.name == op)
    }

    static let tooManyFriends = "[" + (0...256).map { "\"u\($0)\"" }.joined(separator: ",") + "]"

    static let refused: [RequestDecoderTests.Refused] = [
        .init(#"{"id":"1","op":"activity_on"}"#, "1", "bad_request", "activity is required"),
        .init(#"{"id":"1","op":"activity_on","activity":7}"#, "1", "bad_request", "activity must be a string"),
        .init(#"{"id":"1","op":"activity_on","activity":""}"#, "1", "bad_request", "activity must be 1 to 32 characters"),
        .init(#"{"id":"1","op":"activity_off","activity":"\#(String(repeating: "a", count: 33))"}"#,
              "1", "bad_request", "activity must be 1 to 32 characters"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","friends":"bob"}"#,
              "1", "bad_request", "friends must be an array of 1 to 256 usernames; leave it out for every friend"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","friends":[]}"#,
              "1", "bad_request", "friends must be an array of 1 to 256 usernames; leave it out for every friend"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","friends":\#(tooManyFriends)}"#,
              "1", "bad_request", "friends must be an array of 1 to 256 usernames; leave it out for every friend"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","friends":["bob",3]}"#,
              "1", "bad_request", "friends[1] must be a username (a string of 1 to 32 characters)"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","friends":["\#(String(repeating: "b", count: 33))"]}"#,
              "1", "bad_request", "friends[0] must be a username (a string of 1 to 32 characters)"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","expires_in":1.5}"#,
              "1", "bad_request", "expires_in must be a whole number of seconds"),
        .init(#"{"id":"1","op":"activity_on","activity":"Gym","expires_in":"60"}"#,
              "1", "bad_request", "expires_in must be a whole number of seconds"),
        .init(#"{"id":"1","op":"activity_off"}"#, "1", "bad_request", "activity is required"),
        .init(#"{"id":"1","op":"matches","order":"name"}"#, "1", "bad_request", "order must be \"time\" or \"activity\""),
        .init(#"{"id":"1","op":"matches","order":1}"#, "1", "bad_request", "order must be a string"),
    ]

    @Test(arguments: refused)
    func refusesWithAPreciseError(_ sample: RequestDecoderTests.Refused) {
        #expect(Self.decode(sample.json) == .failure(sample.error))
    }
}
