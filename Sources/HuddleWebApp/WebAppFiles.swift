/// The web app (`/app/`) and the JavaScript SDK (`/sdk/huddle.js`), compiled into the binary
/// (Package.swift embeds Files/, whose huddle.js is a link to clients/js/huddle.js): the server
/// needs no file next to it, and what it serves is exactly what it was built with.
public enum WebAppFiles {
    public struct File: Sendable {
        public let path: String
        public let contentType: String
        public let bytes: [UInt8]
    }

    public static let all: [File] = [
        File(path: "/app/index.html", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        File(path: "/app/app.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js),
        File(path: "/app/app.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.app_css),
        File(path: "/sdk/huddle.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.huddle_js),
    ]
}
