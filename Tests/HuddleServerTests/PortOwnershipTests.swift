import ChildProcessExit
import Foundation
import Testing

/// Issue 12, problem 11: a second `huddle` on a port in use must not start and split the
/// traffic (it did, through SO_REUSEPORT); it fails at start, naming the port.
@Suite(.ownThread) struct PortOwnershipTests {
    @Test(arguments: ["--port", "--tls-port"])
    func aSecondServerOnAPortInUseFailsAtStartNamingThePort(flag: String) async throws {
        let certificates = try TestCertificates.shared.get()
        // Fast password hashing, as in every protocol test: the default 600 000 iterations made
        // the sign-up below take longer than the client's 5 s wait on a loaded machine.
        let first = try await ServerProcess(["--kdf-iterations", "1000"], tls: certificates)
        let taken = flag == "--port" ? first.port : try #require(first.tlsPort)
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var arguments = ["--host", "127.0.0.1", "--port", flag == "--port" ? "\(taken)" : "0", "--data-dir", data.path]
        if flag == "--tls-port" {
            arguments += ["--tls-port", "\(taken)", "--tls-cert", certificates.serverCertificate.path, "--tls-key", certificates.serverKey.path]
        }
        let (status, output) = try runChildToCompletion(ServerProcess.binary.path, arguments, timeout: 60)
        #expect(status != 0, "the second server started: \(output)")
        #expect(output.contains("\(flag) \(taken)") && output.contains("already in use"), "\(output)")
        #expect(!output.contains("listening"), "\(output)")

        // The first server still has the port to itself.
        let (alice, _) = try ProtocolClient.signedUp("alice", port: first.port)
        _ = try alice.ok("whoami")
        #expect(try await first.stop() == 0)
    }
}
