import ChildProcessExit
import Foundation
import Testing

/// Every binary says which release and which commit it is (issue 18), and `huddle --help`
/// shows the flags of the default command.
@Suite("Version and help", .ownThread)
struct VersionTests {
    /// The commit this checkout is at, asked of git by the test (the binaries learnt it at
    /// build time, from the BuildCommit plugin).
    static func headCommit() throws -> String {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try runChildToCompletion("/usr/bin/git", ["-C", repository.path, "rev-parse", "--short=12", "HEAD"], timeout: 30)
        guard result.status == 0 else { throw TestFailure("git rev-parse failed: \(result.output)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("--version on huddle, huddle-chat and huddle-loadtest names the version and the git commit", arguments: ["huddle", "huddle-chat", "huddle-loadtest"])
    func version(binary: String) throws {
        let commit = try Self.headCommit()
        let path = ServerProcess.binary.deletingLastPathComponent().appendingPathComponent(binary).path
        let result = try runChildToCompletion(path, ["--version"], timeout: 30)
        #expect(result.status == 0, "\(result.output)")
        let line = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        // "+dirty" follows the commit when the tree had uncommitted changes at build time.
        #expect(line.range(of: #"^\d+\.\d+\.\d+ \(commit [0-9a-f]{12}(\+dirty)?\)$"#, options: .regularExpression) != nil, "\(line)")
        #expect(line.contains("commit \(commit)"), "\(line) is not HEAD \(commit)")
    }

    @Test("huddle --help lists the serve flags, not only the subcommands")
    func helpShowsServeFlags() throws {
        let result = try runChildToCompletion(ServerProcess.binary.path, ["--help"], timeout: 30)
        #expect(result.status == 0)
        #expect(result.output.contains("SUBCOMMANDS"), "\(result.output)")
        for flag in ["--tls-port", "--data-dir", "--fsync", "--push-webhook"] {
            #expect(result.output.contains(flag), "\(flag) missing from huddle --help")
        }
    }
}
