import Foundation

/// A throwaway certificate authority and a server certificate for 127.0.0.1/localhost, made
/// with the openssl command line once per test run: wss tests use real TLS with a CA the
/// clients are told to trust, never "don't verify".
struct TestCertificates: Sendable {
    let directory: URL
    var caCertificate: URL { directory.appendingPathComponent("ca.pem") }
    var serverCertificate: URL { directory.appendingPathComponent("server.pem") }
    var serverKey: URL { directory.appendingPathComponent("server.key") }

    static let shared: Result<TestCertificates, TestFailure> = Result { try make() }.mapError { TestFailure("\($0)") }

    static func make() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-certs-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(directory: directory)
        let extensions = directory.appendingPathComponent("server.ext")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
            .write(to: extensions, atomically: true, encoding: .utf8)
        let d = directory.path
        try run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=Huddle Test CA", "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.pem")
        try run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr")
        try run("openssl", "x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.pem", "-CAkey", "\(d)/ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", extensions.path, "-out", "\(d)/server.pem")
        return certificates
    }

    private static func run(_ arguments: String...) throws {
        let (status, output) = try runChildToCompletion("/usr/bin/env", arguments, timeout: 120)
        guard status == 0 else {
            throw TestFailure("\(arguments.joined(separator: " ")) failed: \(output)")
        }
    }
}
