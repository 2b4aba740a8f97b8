import ChildProcessExit
import Foundation
import Testing

/// The SDK and the web app in headless Chromium (Debian's `chromium`, installed by .ci/run),
/// driven over the DevTools protocol by node:test files in clients/js/test/browser. They start
/// servers of their own (to kill -9 and restart them); screenshots go under .build/screenshots.
@Suite(.serialized, .ownThread) struct BrowserTests {
    static var chromium: String { ProcessInfo.processInfo.environment["HUDDLE_CHROMIUM"] ?? "/usr/bin/chromium" }
    static var screenshots: URL { PythonClients.packageRoot.appendingPathComponent(".build/screenshots") }

    @Test(arguments: ["node-files.browser.test.js", "sdk.browser.test.js", "app.browser.test.js", "account.browser.test.js"])
    func passesInChromium(file: String) async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.chromium), "no Chromium at \(Self.chromium): .ci/run installs Debian's chromium")
        try await JavaScriptSDKTests.runNodeTests(
            "test/browser/\(file)", environment: ["HUDDLE_CHROMIUM=\(Self.chromium)", "HUDDLE_SCREENSHOTS=\(Self.screenshots.path)"],
            timeout: 600)
    }
}
