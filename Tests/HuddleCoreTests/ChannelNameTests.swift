@testable import HuddleCore
import Testing

@Suite struct ChannelNameTests {
    @Test(arguments: [
        ("inbox:alice", ChannelName.Kind.inbox(owner: "alice")),
        ("chat:alice~bob", .chat("alice", "bob")),
        ("chat:a_1~a_2", .chat("a_1", "a_2")),
        ("chat:bob~bobby", .chat("bob", "bobby")),
        ("loc:alice", .loc(owner: "alice")),
        ("room:lobby", .room("lobby")),
        ("room:A-b_c.9", .room("A-b_c.9")),
        ("room:" + String(repeating: "x", count: 64), .room(String(repeating: "x", count: 64))),
        ("room:.", .room(".")),
    ] as [(String, ChannelName.Kind)])
    func validNames(text: String, kind: ChannelName.Kind) throws {
        let name = try ChannelName(parsing: text)
        #expect(name.kind == kind)
        #expect(name.text == text)
    }

    @Test(arguments: [
        "", "lobby", ":lobby", "room:", "rooms:lobby", "ROOM:lobby", "Room:lobby",
        "room:" + String(repeating: "x", count: 65), "room:with space", "room:é", "room:a/b",
        "inbox:", "inbox:Alice", "inbox:al", "inbox:1alice", "inbox:alice~bob",
        "loc:", "loc:ALICE", "loc:alice bob",
        "chat:bob~alice", "chat:alice~alice", "chat:alice", "chat:alice~", "chat:~bob", "chat:alice~bob~carol",
        "chat:Alice~bob", "chat:al~bob", "room:x:y",
    ])
    func invalidNames(text: String) {
        #expect(throws: CoreError.self) { try ChannelName(parsing: text) }
        do {
            _ = try ChannelName(parsing: text)
        } catch {
            #expect(error.code == .invalidChannel)
        }
    }

    /// No valid name reaches 128 bytes today (the longest, a chat of two 32-character names,
    /// has 70), so the byte limit is checked first and says so.
    @Test func namesOver128BytesAreRefusedForTheirLength() {
        do {
            _ = try ChannelName(parsing: "room:" + String(repeating: "x", count: 124))
            Issue.record("a 129-byte name was accepted")
        } catch {
            #expect(error == CoreError(.invalidChannel, "a channel name is at most 128 bytes"))
        }
    }
}

@Suite struct ChannelAuthorizationTests {
    enum Right { case read, publish }

    /// (channel, user, may read, may publish) — protocol.md's table.
    @Test(arguments: [
        ("inbox:alice", "alice", true, false), ("inbox:alice", "bob", false, false),
        ("chat:alice~bob", "alice", true, true), ("chat:alice~bob", "bob", true, true), ("chat:alice~bob", "carol", false, false),
        ("loc:alice", "alice", true, false), ("loc:alice", "bob", false, false),
        ("room:lobby", "alice", true, true), ("room:lobby", "carol", true, true),
    ])
    func table(channel: String, user: String, mayRead: Bool, mayPublish: Bool) {
        let harness = CoreHarness()
        let (connection, _) = harness.signUp(user)
        // Chat rooms are written by members who are friends; loc: is read by friends (not here).
        if channel.hasPrefix("chat:") {
            for other in ["alice", "bob"] where other != user { harness.signUp(other) }
            harness.makeFriends("alice", "bob")
        }
        let subscribe = harness.handle(.subscribe(connection, requestID: "s", channel: channel, since: nil))
        #expect((subscribe.errorCode == nil) == mayRead)
        if !mayRead { #expect(subscribe.errorCode == .forbidden) }
        let history = harness.handle(.history(connection, requestID: "h", channel: channel, before: nil, limit: 10))
        #expect(history.errorCode == (mayRead ? nil : .forbidden))
        let publish = harness.publish(connection, channel)
        #expect(publish.errorCode == (mayPublish ? nil : .forbidden))
        #expect(publish.commands.count == (mayPublish ? 1 : 0))
    }

    @Test func theServerMayPublishAndReadAnywhere() {
        let harness = CoreHarness()
        for channel in ["inbox:alice", "chat:alice~bob", "loc:alice", "room:lobby"] {
            let publish = harness.handle(.serverPublish(requestID: "p", channel: channel, type: "notice", data: "{}"))
            #expect(publish.commands == [.publish(channel: channel, from: nil, type: "notice", data: "{}", time: harness.time)])
            #expect(publish.outputs == [.reply(nil, requestID: "p", .published(epoch: publish.replies[0].epoch!, offset: 1, time: harness.time))])
            let history = harness.handle(.history(nil, requestID: "h", channel: channel, before: nil, limit: 10))
            #expect(history.errorCode == nil)
        }
        #expect(harness.handle(.serverPublish(requestID: "p", channel: "nope", type: "t", data: "1")).outputs == [
            .reply(nil, requestID: "p", .failure(CoreError(.invalidChannel, "a channel name starts with inbox:, chat:, loc: or room:"))),
        ])
    }

    @Test func invalidChannelComesBeforeForbidden() {
        let harness = CoreHarness()
        let (connection, _) = harness.signUp("carol")
        for request: CoreRequest in [
            .subscribe(connection, requestID: "s", channel: "chat:bob~alice", since: nil),
            .unsubscribe(connection, requestID: "u", channel: "chat:bob~alice"),
            .publish(connection, requestID: "p", channel: "chat:bob~alice", type: "message", data: "1"),
            .history(connection, requestID: "h", channel: "chat:bob~alice", before: nil, limit: 1),
            .presence(connection, requestID: "r", channel: "chat:bob~alice"),
        ] {
            #expect(harness.handle(request).errorCode == .invalidChannel)
        }
    }

    /// The namespace is read byte by byte: exactly the four names, nothing near them.
    @Test func namespacesAreTheirExactNames() {
        for namespace in ChannelNamespace.allCases {
            #expect(ChannelNamespace(prefixOf: namespace.rawValue + ":x") == namespace)
        }
        for near in ["", "Room", "rooms", "roo", "chat ", "inbox\u{0}", "lo", "loca", "r\u{F6}om"] {
            #expect(ChannelNamespace(prefixOf: near + ":x") == nil)
            #expect(throws: CoreError.self) { try ChannelName(parsing: near + ":alice") }
        }
        #expect(ChannelNamespace(prefixOf: "room") == nil)
    }
}
