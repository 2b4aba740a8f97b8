import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import HuddleWebSocket
import Testing

/// wss:// with real certificate checks: the test CA is trusted, anything else is refused with
/// OpenSSL's reason, and `insecure` is the explicit way around it.
@Suite(.ownThread) struct ClientTLSTests {
    @Test(arguments: [true, false])
    func trustedCAEchoes(compression: Bool) async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        var options = ClientConnectionOptions()
        options.tls = ClientTLSOptions(caFile: certificates.caCertificate.path)
        if !compression { options.compression = nil }
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.tlsURL)/echo"), options: options)
        // 1 MiB is many TLS records and more than a socket buffer: partial TLS writes happen.
        for size in [0, 200, 70_000, 1 << 20] {
            let text = compressibleText(size)
            try client.send(text: text)
            #expect(try client.receive() == .text(text))
            let binary = randomBytes(size)
            try client.send(binary: binary)
            #expect(try client.receive() == .binary(binary))
        }
        #expect(client.close() == .init(code: .normalClosure, reason: "", clean: true))
        #expect(try await server.stop() == 0)
    }

    /// By name: SNI is sent and the certificate's DNS name is checked (and if localhost resolves
    /// to ::1 first, the refused IPv6 attempt gives way to 127.0.0.1).
    @Test func hostNameIsVerified() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        var options = ClientConnectionOptions()
        options.tls = ClientTLSOptions(caFile: certificates.caCertificate.path)
        let client = try BlockingWebSocketClient.connect(to: ClientURL("wss://localhost:\(server.tlsPort!)/echo"), options: options)
        try client.send(text: "by name")
        #expect(try client.receive() == .text(Array("by name".utf8)))
        client.close()
        #expect(try await server.stop() == 0)
    }

    @Test func anotherCAIsRefusedWithTheVerifyReason() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        var options = ClientConnectionOptions()
        options.tls = ClientTLSOptions(caFile: try makeUnrelatedCA())
        let failure = expectConnectFailure(try ClientURL("\(server.tlsURL)/echo"), options)
        #expect(failure?.code == nil)
        #expect(failure?.reason.contains("certificate verify failed") == true, "\(String(describing: failure))")
        #expect(failure?.reason.contains("unable to get local issuer certificate") == true, "\(String(describing: failure))")
        #expect(try await server.stop() == 0)
    }

    @Test func systemStoreDoesNotTrustTheTestCA() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        let failure = expectConnectFailure(try ClientURL("\(server.tlsURL)/echo"), ClientConnectionOptions())
        #expect(failure?.reason.contains("certificate verify failed") == true, "\(String(describing: failure))")
        #expect(try await server.stop() == 0)
    }

    @Test func insecureAcceptsAnyCertificate() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        var options = ClientConnectionOptions()
        options.tls = ClientTLSOptions(insecure: true)
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.tlsURL)/echo"), options: options)
        try client.send(text: "unverified")
        #expect(try client.receive() == .text(Array("unverified".utf8)))
        #expect(client.close().clean)
        #expect(try await server.stop() == 0)
    }

    @Test func missingCAFileIsReported() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        var options = ClientConnectionOptions()
        options.tls = ClientTLSOptions(caFile: "/nonexistent/ca.pem")
        let failure = expectConnectFailure(try ClientURL("\(server.tlsURL)/echo"), options)
        #expect(failure?.reason.contains("/nonexistent/ca.pem") == true, "\(String(describing: failure))")
        #expect(try await server.stop() == 0)
    }

    private func expectConnectFailure(_ url: ClientURL, _ options: ClientConnectionOptions) -> BlockingWebSocketClient.CloseResult? {
        do {
            _ = try BlockingWebSocketClient.connect(to: url, options: options)
            Issue.record("connected although it should not have")
            return nil
        } catch BlockingWebSocketClient.Failure.closed(let result) {
            return result
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    /// A self-signed CA that signed nothing the server has: a chain to it cannot be built.
    private func makeUnrelatedCA() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-other-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("ca.pem").path
        try PythonClients.runChecked("/usr/bin/env", [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=Unrelated Test CA", "-keyout", directory.appendingPathComponent("ca.key").path, "-out", path,
        ])
        return path
    }
}
