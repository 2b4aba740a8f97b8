import HuddleProtocol
import Testing

/// `RequestEncoder` writes a decoded request back as the wire request it came as: decoding
/// what it wrote gives the same request, for every op and every optional argument.
@Suite struct RequestEncoderTests {
    /// One request per op, optional arguments given (and, where it differs, left out).
    static let samples: [ClientRequest] = [
        ClientRequest(id: "1", operation: .ping),
        ClientRequest(id: "2", operation: .signup(username: "alice", email: "a@example.com", password: "secret", device: "phone")),
        ClientRequest(id: "3", operation: .signup(username: "alice", email: "a@example.com", password: "secret", device: nil)),
        ClientRequest(id: "4", operation: .login(login: "alice", password: "secret", device: nil)),
        ClientRequest(id: "5", operation: .auth(token: "t0k3n")),
        ClientRequest(id: "6", operation: .logout(all: true)),
        ClientRequest(id: "7", operation: .whoami),
        ClientRequest(id: "8", operation: .subscribe(channel: "room:a", since: Position(epoch: "e1", offset: 42))),
        ClientRequest(id: "9", operation: .subscribe(channel: "room:a", since: nil)),
        ClientRequest(id: "10", operation: .unsubscribe(channel: "room:a")),
        ClientRequest(id: "11", operation: .publish(channel: "room:a", type: "message", data: #"{"text":"hi \"you\"","n":[1,2.5]}"#), clientID: "c-1"),
        ClientRequest(id: "12", operation: .history(channel: "room:a", before: 9, limit: 20)),
        ClientRequest(id: "13", operation: .presence(channel: "room:a")),
        ClientRequest(id: "14", operation: .userSearch(prefix: "al", limit: 5)),
        ClientRequest(id: "15", operation: .friendRequest(user: "bob", message: "hello"), clientID: "f-1"),
        ClientRequest(id: "16", operation: .friendRequests),
        ClientRequest(id: "17", operation: .friendAccept(user: "bob")),
        ClientRequest(id: "18", operation: .friendDecline(user: "bob")),
        ClientRequest(id: "19", operation: .friendCancel(user: "bob")),
        ClientRequest(id: "20", operation: .friendRemove(user: "bob")),
        ClientRequest(id: "21", operation: .friends),
        ClientRequest(id: "22", operation: .markRead(channel: "chat:alice:bob", offset: 3)),
        ClientRequest(id: "23", operation: .unread),
        ClientRequest(id: "24", operation: .typing(channel: "chat:alice:bob")),
        ClientRequest(id: "25", operation: .post(text: "ride?", activity: "cycling", at: 1_763_712_000_000), clientID: "p-1"),
        ClientRequest(id: "26", operation: .feed(before: 7, limit: 10)),
        ClientRequest(id: "27", operation: .like(post: 7, liked: false)),
        ClientRequest(id: "28", operation: .like(post: 7, liked: nil)),
        ClientRequest(id: "29", operation: .comment(post: 7, text: "yes")),
        ClientRequest(id: "30", operation: .comments(post: 7, before: nil, limit: 10)),
        ClientRequest(id: "31", operation: .postDelete(post: 7)),
        ClientRequest(id: "32", operation: .activities),
        ClientRequest(id: "33", operation: .activityOn(activity: "cycling", friends: ["bob", "carol"], expiresIn: 3600)),
        ClientRequest(id: "34", operation: .activityOff(activity: "cycling")),
        ClientRequest(id: "35", operation: .matches(byActivity: true)),
        ClientRequest(id: "36", operation: .placeSet(id: 2, label: "home", latitude: 48.8566, longitude: 2.3522, radius: 150)),
        ClientRequest(id: "37", operation: .placeSet(id: nil, label: "work", latitude: -33.5, longitude: 151.25, radius: 80.5)),
        ClientRequest(id: "38", operation: .placeRemove(id: 2)),
        ClientRequest(id: "39", operation: .places(user: "alice")),
        ClientRequest(id: "40", operation: .locationFix(latitude: 48.1, longitude: 11.5, accuracy: 12.5, time: 1_763_712_000_123)),
        ClientRequest(id: "41", operation: .region(placeID: 2, entered: false, time: 1_763_712_000_456)),
        ClientRequest(id: "42", operation: .whereIs(user: "bob")),
        ClientRequest(id: "43", operation: .memoryCreate(MemoryArguments(title: "Trip", date: "2026-05-01", placeName: "Alps", position: .coordinates(latitude: 46.5, longitude: 8.25)))),
        ClientRequest(id: "44", operation: .memoryUpdate(memory: 3, MemoryArguments(position: .null))),
        ClientRequest(id: "45", operation: .memoryDelete(memory: 3)),
        ClientRequest(id: "46", operation: .memories),
        ClientRequest(id: "47", operation: .memory(memory: 3)),
        ClientRequest(id: "48", operation: .pointAdd(memory: 3, MemoryPointArguments(time: 5, position: .absent, placeName: "hut", note: "cold", photos: ["ab", "cd"]))),
        ClientRequest(id: "49", operation: .pointUpdate(memory: 3, point: 4, MemoryPointArguments(note: "warm"))),
        ClientRequest(id: "50", operation: .pointDelete(memory: 3, point: 4)),
    ]

    @Test(arguments: samples) func decodingWhatWasEncodedGivesTheRequestBack(_ request: ClientRequest) throws {
        let decoded = try RequestDecoder.decode(RequestEncoder.encode(request), limits: ProtocolLimits()).get()
        #expect(decoded == request)
    }

    /// Requests holding what the decoder fills in, with the argument that says it.
    static let defaulted: [(request: ClientRequest, argument: String)] = [
        (ClientRequest(id: "1", operation: .logout(all: false)), "all"),
        (ClientRequest(id: "2", operation: .publish(channel: "room:a", type: "message", data: "1"), clientID: "c-1"), "type"),
        (ClientRequest(id: "3", operation: .history(channel: "room:a", before: nil, limit: ProtocolLimits().defaultHistoryLimit)), "limit"),
        (ClientRequest(id: "4", operation: .userSearch(prefix: "al", limit: ProtocolLimits().defaultSearchLimit)), "limit"),
        (ClientRequest(id: "5", operation: .friendRequest(user: "bob", message: ""), clientID: "f-1"), "message"),
        (ClientRequest(id: "6", operation: .feed(before: nil, limit: ProtocolLimits().defaultFeedLimit)), "limit"),
        (ClientRequest(id: "7", operation: .comments(post: 7, before: 3, limit: ProtocolLimits().defaultFeedLimit)), "limit"),
        (ClientRequest(id: "8", operation: .matches(byActivity: false)), "order"),
    ]

    /// As a client sends it: what the decoder fills in is left out, and the request means the same.
    @Test func leavingDefaultsOutGivesTheSameRequest() throws {
        for (request, argument) in Self.defaulted {
            let bytes = RequestEncoder.encode(request, omittingDefaults: true)
            #expect(try JSONParser.parse(bytes, maxDepth: 8)[argument] == nil, "\(request.operation.name) sent \(argument)")
            #expect(try RequestDecoder.decode(bytes, limits: ProtocolLimits()).get() == request)
            #expect(try JSONParser.parse(RequestEncoder.encode(request), maxDepth: 8)[argument] != nil)
        }
        // Values other than the defaults are sent.
        for request in Self.samples {
            #expect(try RequestDecoder.decode(RequestEncoder.encode(request, omittingDefaults: true), limits: ProtocolLimits()).get() == request)
        }
    }

    /// A new op is added to the samples with the encoder (its switch will not compile without it).
    @Test func everyOpHasASample() {
        #expect(Set(Self.samples.map(\.operation.name)).count == 46)
    }
}

extension ClientRequest: CustomTestStringConvertible {
    public var testDescription: String { "\(operation.name) \(id)" }
}
