import Testing
@testable import huddle_chat

/// Where sessions are kept: one directory per server, one file per user.
@Suite struct ChatSessionStoreTests {
    /// Each server's sessions have their own directory, whatever its URL holds.
    @Test func serversNeverShareASessionDirectory() {
        let urls = ["ws://127.0.0.1:8080/v1", "wss://127.0.0.1:8080/v1", "ws://127.0.0.1:8081/v1", "ws://127.0.0.1:8080/v1/", "ws://127.0.0.1_8080/v1"]
        let names = urls.map(ChatSessionStore.directoryName)
        #expect(Set(names).count == urls.count)
        #expect(names.allSatisfy { !$0.contains("/") && $0 != "." && $0 != ".." })
        #expect(names[0] == "ws%3A%2F%2F127.0.0.1%3A8080%2Fv1")
    }

    @Test func onlyUsernamesNameFiles() {
        #expect(ChatSessionStore.isSafeFileName("alice_2"))
        for name in ["", "..", "a/b", "Alice", "alice.json", String(repeating: "a", count: 33)] {
            #expect(!ChatSessionStore.isSafeFileName(name), "\(name)")
        }
        #expect(ChatSessionStore.perUser(directory: "/d").file(for: "../x") == nil)
    }
}
