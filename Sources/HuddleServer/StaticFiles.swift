import HuddleCrypto
import HuddleWebApp
import HuddleWebSocket

/// The web app and the SDK as HTTP responses (`GET`/`HEAD` of `/app/…` and `/sdk/huddle.js`),
/// unless `--no-web-app`. Every response is revalidated (`no-cache` with an `ETag`, answered
/// 304 when it matches), so a new server version is picked up on the next load while an
/// unchanged one costs a few hundred bytes; the app's pages carry a Content-Security-Policy
/// that lets only its own scripts, styles and server connections run — text from other users
/// can never become a script.
struct StaticFiles: Sendable {
    struct Entry: Sendable {
        let contentType: String
        let bytes: [UInt8]
        let etag: String
    }

    enum Outcome {
        case file(status: Int, headers: [(String, String)], contentType: String, body: [UInt8], omitBody: Bool)
        case methodNotAllowed
    }

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        + "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

    private let entries: [String: Entry]

    init(_ files: [WebAppFiles.File] = WebAppFiles.all) {
        var entries: [String: Entry] = [:]
        for file in files {
            let digest = Crypto.sha256(file.bytes).prefix(12).map { byte in
                let hex = Array("0123456789abcdef")
                return String([hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            }.joined()
            entries[file.path] = Entry(contentType: file.contentType, bytes: file.bytes, etag: "\"\(digest)\"")
        }
        self.entries = entries
    }

    /// Whether `path` is one this serves (`/app` and `/app/` are the app's page).
    static func claims(_ path: String) -> Bool {
        path == "/app" || path.hasPrefix("/app/") || path == "/sdk/huddle.js"
    }

    /// The response to `head`, whose path `claims`; nil for a path under /app/ that is no file (404).
    func respond(to head: HTTPRequestHead) -> Outcome? {
        guard head.method == "GET" || head.method == "HEAD" else { return .methodNotAllowed }
        if head.path == "/app" {
            return .file(status: 301, headers: [("Location", "/app/")], contentType: "text/plain; charset=utf-8", body: Array("/app/\n".utf8), omitBody: head.method == "HEAD")
        }
        let path = head.path == "/app/" ? "/app/index.html" : head.path
        guard let entry = entries[path] else { return nil }
        var headers: [(String, String)] = [
            ("Cache-Control", "no-cache"), ("ETag", entry.etag), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
        ]
        if path.hasPrefix("/app/") { headers.append(("Content-Security-Policy", Self.contentSecurityPolicy)) }
        if let tags = head.headers[first: "If-None-Match"], tags.split(separator: ",").contains(where: { $0.trimmingCharacters() == entry.etag }) {
            return .file(status: 304, headers: headers, contentType: entry.contentType, body: [], omitBody: true)
        }
        return .file(status: 200, headers: headers, contentType: entry.contentType, body: entry.bytes, omitBody: head.method == "HEAD")
    }
}

private extension Substring {
    func trimmingCharacters() -> Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
