import ChildProcessExit
import Foundation
import Testing

/// The web app (/app/) and the SDK (/sdk/huddle.js) as HTTP: the bytes shipped in the
/// repository, revalidated with an ETag, the app under a strict Content-Security-Policy, and
/// nothing at all with --no-web-app.
@Suite(.ownThread) struct WebAppHTTPTests {
    static func get(_ port: Int, _ path: String, method: String = "GET", headers: String = "") throws -> RawClient.Response {
        let client = try RawClient(port: port)
        try client.send("\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
        return try client.readResponse()
    }

    @Test func sdkIsTheRepositoryFile() async throws {
        let server = try await ServerProcess([])
        let response = try Self.get(server.port, "/sdk/huddle.js")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(response.headers["cache-control"] == "no-cache")
        #expect(response.headers["x-content-type-options"] == "nosniff")
        let file = try String(contentsOf: JavaScriptSDKTests.sdkDirectory.appendingPathComponent("huddle.js"), encoding: .utf8)
        #expect(response.body == file)
    }

    @Test func appPagesCarryTheContentSecurityPolicyAndRevalidate() async throws {
        let server = try await ServerProcess([])
        let page = try Self.get(server.port, "/app/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains("<script type=\"module\" src=\"app.js\">"))
        let policy = page.headers["content-security-policy"] ?? ""
        #expect(policy.contains("default-src 'none'"))
        #expect(policy.contains("script-src 'self'"))
        #expect(!policy.contains("unsafe"))
        let etag = try #require(page.headers["etag"])
        let again = try Self.get(server.port, "/app/index.html", headers: "If-None-Match: \(etag)\r\n")
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        let script = try Self.get(server.port, "/app/app.js", headers: "If-None-Match: \"stale\"\r\n")
        #expect(script.status == 200)
        #expect(script.headers["etag"] != etag)
        #expect(try Self.get(server.port, "/app").headers["location"] == "/app/")
        let head = try Self.get(server.port, "/app/app.css", method: "HEAD")
        #expect(head.status == 200)
        #expect(try Self.get(server.port, "/app/app.css", method: "POST", headers: "Content-Length: 0\r\n").status == 405)
        #expect(try Self.get(server.port, "/app/../etc/passwd").status == 404)
        #expect(try Self.get(server.port, "/app/nothing.js").status == 404)
    }

    @Test func noWebAppServesNothing() async throws {
        let server = try await ServerProcess(["--no-web-app"])
        #expect(try Self.get(server.port, "/app/").status == 404)
        #expect(try Self.get(server.port, "/sdk/huddle.js").status == 404)
        #expect(try Self.get(server.port, "/healthz").status == 200)
    }
}
