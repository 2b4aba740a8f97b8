import ChildProcessExit
import Foundation
import Testing

/// huddle-chat with several `--url`s (issue 14: the nodes of a cluster): it skips a node that
/// refuses, moves on when its node is killed, and says which node it is on.
@Suite(.ownThread) struct HuddleChatFailoverProcessTests {
    @Test func movesPastARefusingNodeAndAKilledOne() async throws {
        let closed = try ClosedPort()
        let first = try await startHuddle()
        let second = try await startHuddle()
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let chat = try ChatProcess(
            url: "ws://127.0.0.1:\(closed.port)", settingsFile: home.appendingPathComponent("roamer.json"),
            arguments: ["--url", first.url, "--url", second.url])

        try await chat.line("[connection] lost (cannot connect to 127.0.0.1:\(closed.port): Connection refused); reconnecting to \(first.url)/v1 in …") {
            $0.hasPrefix("[connection] lost (cannot connect to 127.0.0.1:\(closed.port): Connection refused); reconnecting to \(first.url)/v1 in ")
        }
        try await chat.line("[connection] connected to \(first.url)/v1, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")

        try await first.kill9()
        try await chat.line("the move to the second node") { $0.hasPrefix("[connection] lost (") && $0.contains("reconnecting to \(second.url)/v1 in ") }
        try await chat.line("[connection] connected to \(second.url)/v1, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try chat.send("/signup roamer roamer@example.com \(HuddleChatProcessTests.password)")
        try await chat.line("[ok] signed up as roamer")
        try chat.closeInput()
        #expect(try await chat.exitStatus() == 0)
        #expect(try await second.stop() == 0)
    }
}
