import ChildProcessExit
import Foundation
import Testing

/// `huddle serve` settings from a config file and `HUDDLE_*` variables (issue 18): precedence
/// flags > environment > file, `--print-config` shows the result with secrets masked.
@Suite("Serve settings", .ownThread)
struct ServeSettingsTests {
    static func configFile(_ json: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-config-\(UUID().uuidString).json")
        try json.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The process's environment without any HUDDLE_ variable, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUDDLE_") }.merging(extra) { $1 }
    }

    static func printedConfig(_ arguments: [String], environment: [String: String] = [:]) throws -> [String: Any] {
        let result = try runChildToCompletion(ServerProcess.binary.path, arguments + ["--print-config"], timeout: 60, environment: Self.environment(environment))
        #expect(result.status == 0, "\(result.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)")
    }

    @Test("flags beat HUDDLE_* variables, which beat the config file, which beats the defaults")
    func precedence() throws {
        let file = try Self.configFile(#"{"port": 9000, "session-ttl": 100, "presence-grace": 7, "fsync": "everysec", "compression": false, "bench": true}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        let config = try Self.printedConfig(["--config", file.path, "--session-ttl", "300"],
                                            environment: ["HUDDLE_PORT": "9100", "HUDDLE_SESSION_TTL": "200", "HUDDLE_BENCH": "false"])
        #expect(config["session-ttl"] as? Int == 300)   // flag over env and file
        #expect(config["port"] as? Int == 9100)         // env over file
        #expect(config["bench"] as? Bool == false)      // env over file, for a switch too
        #expect(config["presence-grace"] as? Int == 7)  // file over default
        #expect(config["fsync"] as? String == "everysec")
        #expect(config["compression"] as? Bool == false)
        #expect(config["threads"] as? Int == 0)         // default
        // HUDDLE_CONFIG names the file when --config does not.
        let fromEnvironment = try Self.printedConfig([], environment: ["HUDDLE_CONFIG": file.path])
        #expect(fromEnvironment["port"] as? Int == 9000)
    }

    @Test("--print-config masks secrets from every source")
    func secretsMasked() throws {
        let file = try Self.configFile(#"{"api-key": "file-api-key-123", "push-webhook": "http://127.0.0.1:9/hook"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try runChildToCompletion(ServerProcess.binary.path, ["--config", file.path, "--print-config"], timeout: 60,
                                              environment: Self.environment(["HUDDLE_PUSH_WEBHOOK_SECRET": "env-secret-456"]))
        #expect(result.status == 0)
        #expect(result.output.contains(#""api-key": "********""#), "\(result.output)")
        #expect(result.output.contains(#""push-webhook-secret": "********""#), "\(result.output)")
        #expect(!result.output.contains("file-api-key-123") && !result.output.contains("env-secret-456"))
    }

    @Test("an unknown setting or a wrong type in the config file is refused before anything is touched")
    func badConfigRefused() throws {
        let data = ServeFlagTests.untouchedDataDirectory()
        let unknown = try Self.configFile(#"{"prot": 8080}"#)
        let wrongType = try Self.configFile(#"{"bench": "yes"}"#)
        defer { for file in [unknown, wrongType] { try? FileManager.default.removeItem(at: file) } }
        let first = try runChildToCompletion(ServerProcess.binary.path, ["--config", unknown.path, "--data-dir", data.path], timeout: 60)
        #expect(first.status != 0)
        #expect(first.output.contains(#"unknown setting "prot""#), "\(first.output)")
        let second = try runChildToCompletion(ServerProcess.binary.path, ["--config", wrongType.path, "--data-dir", data.path], timeout: 60)
        #expect(second.output.contains(#""bench" must be true or false"#), "\(second.output)")
        #expect(!FileManager.default.fileExists(atPath: data.path))
    }

    @Test("a server started from a config file alone runs with its settings")
    func serverFromConfigFile() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let file = try Self.configFile(#"{"host": "127.0.0.1", "port": 0, "threads": 1, "data-dir": "\#(data.path)", "fsync": "everysec", "log-format": "json"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try StartedProcess(["serve", "--config", file.path])
        try await server.waitForOutput("\"message\":\"started\"")
        let started = try #require(server.output.split(separator: "\n").first { $0.contains("\"message\":\"started\"") })
        #expect(started.contains("\"fsync\":\"everysec\""), "\(started)")
        #expect(started.contains("\"data_dir\":\"\(data.path.replacingOccurrences(of: "/", with: "\\/"))\"") || started.contains("\"data_dir\":\"\(data.path)\""), "\(started)")
        server.process.terminate()
    }
}
