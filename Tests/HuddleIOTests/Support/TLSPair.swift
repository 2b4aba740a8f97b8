import CHuddleShims
import Foundation
@testable import HuddleIO

/// A self-signed certificate made once per test run with the openssl command line.
enum TestCertificate {
    static let paths: (certificate: String, key: String) = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-io-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-days", "1", "-subj", "/CN=localhost", "-keyout", key, "-out", certificate,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
        return (certificate, key)
    }()
}

/// A connected AF_UNIX stream pair: the transport's end (non-blocking) and the peer's end
/// (blocking, driven by the test thread). Unix sockets make "the send buffer is full" exact:
/// a small write either fits whole or fails with EAGAIN, at a capacity the kernel counts the
/// same way every time (`UnixSocketPair.capacity`).
struct UnixSocketPair {
    let transportEnd: Int32
    let peerEnd: Int32

    init(sendBuffer: Int32) throws {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw SystemError("socketpair") }
        transportEnd = fds[0]
        peerEnd = fds[1]
        var size = sendBuffer
        setsockopt(transportEnd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(transportEnd, F_SETFL, fcntl(transportEnd, F_GETFL) | O_NONBLOCK)
        // The peer's reads wait for what the transport must send; one that never comes fails
        // the read (and the test) instead of hanging it.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(peerEnd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// How many writes of `size` bytes a fresh pair like this one takes before EAGAIN.
    static func capacity(sendBuffer: Int32, writesOf size: Int) throws -> Int {
        let probe = try UnixSocketPair(sendBuffer: sendBuffer)
        defer {
            close(probe.transportEnd)
            close(probe.peerEnd)
        }
        let chunk = [UInt8](repeating: 0x2a, count: size)
        var count = 0
        while send(probe.transportEnd, chunk, size, Int32(MSG_DONTWAIT)) == size { count += 1 }
        return count
    }

    /// Bytes written to the transport's end and not yet read by the peer.
    var bytesInFlight: Int {
        var count: Int32 = 0
        _ = ioctl(peerEnd, UInt(FIONREAD), &count)
        return Int(count)
    }
}

/// The test's side of a TLS connection: OpenSSL on a blocking socket, called from the test thread.
final class TLSPeer {
    let ssl: OpaquePointer

    init(context: OpaquePointer, fd: Int32, server: Bool) {
        ssl = SSL_new(context)!
        SSL_set_fd(ssl, fd)
        if server { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
    }

    deinit { SSL_free(ssl) }

    func handshake() -> Bool { SSL_do_handshake(ssl) == 1 }

    /// Reads one record's worth of application data (blocking).
    func read(max: Int = 64 * 1024) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max)
        var count = 0
        guard SSL_read_ex(ssl, &buffer, max, &count) == 1 else { return nil }
        return Array(buffer[0..<count])
    }

    /// Reads exactly `count` bytes of application data.
    func read(exactly count: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        while bytes.count < count {
            guard let more = read(max: count - bytes.count) else { return nil }
            bytes += more
        }
        return bytes
    }

    /// Sends a KeyUpdate asking the other side to update its sending keys too (TLS 1.3 §4.6.3).
    func requestKeyUpdate() -> Bool {
        SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 && SSL_do_handshake(ssl) == 1
    }
}
