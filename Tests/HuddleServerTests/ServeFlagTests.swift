import ChildProcessExit
import Foundation
import Testing

/// `huddle serve` refuses a bad combination of flags in plain words, before it touches the data
/// directory or binds a port (issue 18); and what it logs about its addresses is exact.
@Suite("Serve flags", .ownThread)
struct ServeFlagTests {
    /// A data directory that does not exist yet: still missing after a refused start proves the
    /// refusal came before recovery (which creates it).
    static func untouchedDataDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("huddle-untouched-\(UUID().uuidString)")
    }

    /// Runs `huddle` with `arguments` (plus a fresh data directory) to its exit.
    static func refusal(_ arguments: [String]) throws -> (status: Int32, output: String, touchedData: Bool) {
        let directory = untouchedDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runChildToCompletion(
            ServerProcess.binary.path, ["--port", "0", "--data-dir", directory.path] + arguments, timeout: 60)
        return (result.status, result.output, FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("--tls-cert and --tls-key without --tls-port are an error, not silently ignored")
    func tlsFilesWithoutTLSPort() throws {
        let result = try Self.refusal(["--tls-cert", "cert.pem", "--tls-key", "key.pem"])
        #expect(result.status != 0)
        #expect(result.output.contains("--tls-cert and --tls-key need --tls-port"), "\(result.output)")
        #expect(!result.touchedData)
    }

    @Test("a missing certificate file is named in a plain sentence, not an OpenSSL error chain")
    func missingCertificateFile() throws {
        let certificates = try TestCertificates.shared.get()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-cert-\(UUID().uuidString).pem").path
        let result = try Self.refusal(["--tls-port", "0", "--tls-cert", missing, "--tls-key", certificates.serverKey.path])
        #expect(result.status != 0)
        #expect(result.output.contains("--tls-cert: cannot read \(missing): No such file or directory"), "\(result.output)")
        #expect(!result.output.contains("error:0"), "an OpenSSL error code leaked: \(result.output)")
        #expect(!result.touchedData)
    }

    @Test("a certificate that is not PEM is refused before the data directory is touched")
    func unusableCertificateFile() throws {
        let certificates = try TestCertificates.shared.get()
        let result = try Self.refusal(["--tls-port", "0", "--tls-cert", certificates.serverKey.path, "--tls-key", certificates.serverKey.path])
        #expect(result.status != 0)
        #expect(result.output.contains("--tls-cert \(certificates.serverKey.path) is not a usable PEM certificate chain"), "\(result.output)")
        #expect(!result.touchedData)
    }

    @Test("an impossible --host is refused in plain words before recovery runs")
    func unresolvableHost() throws {
        let result = try Self.refusal(["--host", "999.1.1.1"])
        #expect(result.status != 0)
        #expect(result.output.contains("--host 999.1.1.1 is neither an IP address nor a name this machine resolves"), "\(result.output)")
        #expect(!result.output.contains("errno 0"), "\(result.output)")
        #expect(!result.touchedData)
    }

    @Test("--session-ttl 0 names --session-ttl alone")
    func zeroSessionTTL() throws {
        let result = try Self.refusal(["--session-ttl", "0"])
        #expect(result.status != 0)
        #expect(result.output.contains("--session-ttl must be positive"), "\(result.output)")
        #expect(!result.output.contains("presence-grace"), "\(result.output)")
    }

    @Test("an IPv6 host is logged in brackets, as a URL needs it")
    func ipv6HostInBrackets() async throws {
        let directory = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StartedProcess(["--host", "::1", "--port", "0", "--threads", "1", "--data-dir", directory.path])
        try await server.waitForOutput("url=ws://[::1]:")
        server.process.terminate()
    }

    @Test("the push gateway log shows the webhook's path, and never its query")
    func webhookPathLogged() async throws {
        let server = try await ServerProcess(["--push-webhook", "http://127.0.0.1:9/hooks/huddle?token=sekrit"])
        try await server.waitForLog("push gateway enabled")
        #expect(server.logText.contains("webhook=http://127.0.0.1:9/hooks/huddle?…"), "\(server.logText)")
        #expect(!server.logText.contains("sekrit"))
        try await server.stop()
    }
}
