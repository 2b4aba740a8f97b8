import HuddleIO
import Testing

/// The one URL parser behind `ClientURL` (ws/wss) and the push webhook's `WebhookURL`
/// (http/https): the scheme pair is a parameter, the rules are shared.
@Suite struct AbsoluteURLTests {
    static let http = AbsoluteURL.Schemes(plain: "http", secure: "https", kind: "webhook URL")
    static let webSocket = AbsoluteURL.Schemes(plain: "ws", secure: "wss", kind: "WebSocket URL")

    @Test func eitherSchemeOfThePairAndItsDefaultPort() throws {
        let plain = try AbsoluteURL("HTTP://hooks.example.com:8443/push?k=1", schemes: Self.http)
        #expect(!plain.isSecure && plain.host == "hooks.example.com" && plain.port == 8443 && plain.target == "/push?k=1")
        #expect(plain.hostHeader == "hooks.example.com:8443" && plain.origin == "http://hooks.example.com:8443")
        let secure = try AbsoluteURL("https://[::1]", schemes: Self.http)
        #expect(secure.isSecure && secure.host == "::1" && secure.port == 443 && secure.target == "/")
        #expect(secure.hostHeader == "[::1]" && secure.description == "https://[::1]:443/")
        #expect(try AbsoluteURL("ws://h?x", schemes: Self.webSocket).description == "ws://h:80/?x")
    }

    @Test(arguments: [
        ("ws://h/", AbsoluteURL.Invalid.Problem.wrongScheme, "the scheme must be http or https: ws://h/"),
        ("h:80/", .noScheme, "the URL needs an http:// or https:// scheme: h:80/"),
        ("http://u:p@h/", .userInfo, "user info is not supported: http://u:p@h/"),
        ("http://[::g]/", .badIPv6Literal, "invalid IPv6 literal: http://[::g]/"),
        ("http://[::1/", .badIPv6Literal, "unterminated IPv6 literal: http://[::1/"),
        ("http://[::1]x/", .badIPv6Literal, "junk after the IPv6 literal: http://[::1]x/"),
        ("http://a b/", .badHost, "invalid character in the host: http://a b/"),
        ("http://:80/", .emptyHost, "the host is empty: http://:80/"),
        ("http://h:65536/", .badPort, "the port must be 1–65535: http://h:65536/"),
        ("http://h/#top", .fragment, "a webhook URL has no fragment: http://h/#top"),
        ("http://h/caf\u{e9}", .badPath, "the path must be percent-encoded ASCII without spaces: http://h/caf\u{e9}"),
    ])
    func refusals(_ string: String, _ problem: AbsoluteURL.Invalid.Problem, _ reason: String) {
        #expect(throws: AbsoluteURL.Invalid(problem: problem, reason: reason)) { try AbsoluteURL(string, schemes: Self.http) }
    }

    @Test func theMessagesNameTheSchemesOfThePair() {
        #expect(throws: AbsoluteURL.Invalid(problem: .noScheme, reason: "the URL needs a ws:// or wss:// scheme: h")) {
            try AbsoluteURL("h", schemes: Self.webSocket)
        }
        #expect(throws: AbsoluteURL.Invalid(problem: .fragment, reason: "a WebSocket URL has no fragment: ws://h/#x")) {
            try AbsoluteURL("ws://h/#x", schemes: Self.webSocket)
        }
    }
}
