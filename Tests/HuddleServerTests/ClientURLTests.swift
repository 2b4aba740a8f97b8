import ChildProcessExit
import HuddleClient
import HuddleProtocol
import Testing

@Suite(.ownThread) struct ClientURLTests {
    @Test func plainURLWithPortAndPath() throws {
        let url = try ClientURL("ws://127.0.0.1:8080/echo?x=1")
        #expect(!url.isSecure)
        #expect(url.host == "127.0.0.1")
        #expect(url.port == 8080)
        #expect(url.target == "/echo?x=1")
        #expect(url.hostHeader == "127.0.0.1:8080")
    }

    @Test func secureURLDefaultsToPort443AndRootPath() throws {
        let url = try ClientURL("WSS://chat.example.com")
        #expect(url.isSecure)
        #expect(url.port == 443)
        #expect(url.target == "/")
        #expect(url.hostHeader == "chat.example.com")
        #expect(url.description == "wss://chat.example.com:443/")
    }

    @Test func ipv6LiteralKeepsNoBracketsButTheHostFieldDoes() throws {
        let url = try ClientURL("ws://[::1]:9000/broadcast")
        #expect(url.host == "::1")
        #expect(url.port == 9000)
        #expect(url.hostHeader == "[::1]:9000")
        #expect(try ClientURL("ws://[::1]").hostHeader == "[::1]")
    }

    @Test func queryWithoutPathGetsARootPath() throws {
        #expect(try ClientURL("ws://h?token=abc").target == "/?token=abc")
    }

    @Test(arguments: [
        "http://example.com/", "example.com", "ws://", "ws://:80/", "ws://h:0/", "ws://h:65536/", "ws://h:8x/",
        "ws://h:/", "ws://h/#fragment", "ws://user@h/", "ws://h/a b", "ws://h/caf\u{e9}", "ws://[::1/", "ws://[::1]x/",
        "ws://bad host/",
    ])
    func rejects(_ string: String) {
        #expect(throws: ClientURL.Invalid.self) { try ClientURL(string) }
    }
}
