import ChildProcessExit
import Foundation
import Testing

/// The real `huddle` binary against a real third-party client: Python `websockets`.
@Suite(.ownThread) struct InteropTests {
    @Test(arguments: ["on", "off"])
    func pythonEchoOverPlainWebSocket(compression: String) async throws {
        let server = try await ServerProcess(["--bench"])
        let output = try await PythonClients.run("echo_client.py", ["\(server.url)/echo", "--compression", compression])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.result["ok"] as? Bool == true)
        let extensions = output.result["extensions"] as? [String] ?? []
        #expect(extensions == (compression == "on" ? ["PerMessageDeflate"] : []))
        #expect(output.result["close_code"] as? Int == 1000)
        #expect(try await server.stop() == 0)
    }

    @Test(arguments: ["on", "off"])
    func pythonEchoOverTLS(compression: String) async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        let output = try await PythonClients.run(
            "echo_client.py", ["\(server.tlsURL)/echo", "--compression", compression, "--ca", certificates.caCertificate.path])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.result["ok"] as? Bool == true)
        #expect(try await server.stop() == 0)
    }

    @Test(arguments: ["on", "off"])
    func pythonBroadcastReachesEveryClientInOrder(compression: String) async throws {
        let server = try await ServerProcess(["--bench"])
        let output = try await PythonClients.run(
            "broadcast_clients.py", ["\(server.url)/broadcast", "--clients", "12", "--messages", "40", "--compression", compression])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.result["received"] as? Int == 12 * 12 * 40)
        #expect(try await server.stop() == 0)
    }

    @Test func opensslRejectsTLS11() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        let modern = try await runProcess("/usr/bin/env", [
            "openssl", "s_client", "-connect", "127.0.0.1:\(server.tlsPort!)", "-CAfile", certificates.caCertificate.path,
            "-verify_return_error", "-brief",
        ], timeout: 20, input: "")
        #expect(modern.status == 0, "\(modern.stderr)")
        #expect(modern.stderr.contains("Verification: OK"), "\(modern.stderr)")
        let legacy = try await runProcess("/usr/bin/env", [
            "openssl", "s_client", "-connect", "127.0.0.1:\(server.tlsPort!)", "-tls1_1", "-brief",
        ], timeout: 20, input: "")
        #expect(legacy.status != 0, "TLS 1.1 must be refused")
    }
}
