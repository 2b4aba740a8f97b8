import CHuddleShims
import Glibc
@testable import HuddleIO
import Testing

/// TLS calls that wait for the *other* readiness: a read that must write first (answering a
/// TLS 1.3 KeyUpdate into a full send buffer) and a write that must read first (a handshake
/// the write itself drives). Each must be retried when that readiness comes, and the fd must
/// not be watched for a readiness nothing waits for (level-triggered epoll would wake the
/// loop for nothing, forever).
@Suite(.serialized) struct TransportTLSTests {
    static let sendBuffer: Int32 = 4096

    @Test func readBlockedOnWritabilityIsRetriedWhenTheSocketDrains() throws {
        let serverContext = try TLSContext(certificateChainPath: TestCertificate.paths.certificate, privateKeyPath: TestCertificate.paths.key)
        let clientContext = try TLSClientContext(insecure: true)
        let running = try RunningLoop()
        defer { running.stop() }
        let pair = try UnixSocketPair(sendBuffer: Self.sendBuffer)
        defer { close(pair.peerEnd) }
        let tls = try TLSStream(context: serverContext, fd: pair.transportEnd)
        let driver = TransportDriver.registered(fd: pair.transportEnd, tls: tls, on: running, handshakeFirst: true)
        defer { running.sync { driver.transport.close() } }
        let peer = TLSPeer(context: clientContext.context, fd: pair.peerEnd, server: false)
        #expect(peer.handshake())
        #expect(running.waitUntil { driver.isHandshakeDone })

        // A first record takes the session tickets out of the socket with it; a second one
        // gives a record's size on the wire.
        let message = [UInt8](repeating: 0x61, count: 100)
        #expect(running.sync { driver.send(message) } == .drained)
        #expect(peer.read(exactly: message.count) == message)
        #expect(pair.bytesInFlight == 0)
        #expect(running.sync { driver.send(message) } == .drained)
        let recordSize = pair.bytesInFlight
        #expect(recordSize > message.count)
        #expect(peer.read(exactly: message.count) == message)

        // Fill the send buffer exactly: record after record, each written whole, the last one
        // leaving no room, and nothing left queued.
        let records = try UnixSocketPair.capacity(sendBuffer: Self.sendBuffer, writesOf: recordSize)
        #expect(records > 0)
        for _ in 0..<records {
            try #require(running.sync { driver.send(message) } == .drained)
        }
        #expect(pair.bytesInFlight == records * recordSize)

        // The peer asks for a key update. OpenSSL 3 answers it with the next write, which the
        // full buffer refuses: the answer is left half-sent, so the read that follows must
        // finish writing it before it may read — a read blocked on writability.
        #expect(peer.requestKeyUpdate())
        var first = Array("first".utf8)
        #expect(SSL_write(peer.ssl, &first, Int32(first.count)) == Int32(first.count))
        #expect(running.waitUntil { driver.received == first })
        let answer = [UInt8](repeating: 0x62, count: 100)
        #expect(running.sync { driver.send(answer) } == .pending)
        var second = Array("second".utf8)
        #expect(SSL_write(peer.ssl, &second, Int32(second.count)) == Int32(second.count))
        #expect(running.waitUntil { tls.readWaitsForWritable })
        // Not readability: the second message waits in the kernel, and reading cannot progress.
        #expect(running.sync { driver.transport.interest } == EventLoop.writable)
        #expect(running.sync { driver.received } == first)

        // The peer reads: the socket drains, the read is retried (and the write), the key
        // update goes out, then the queued answer, and the second message is read.
        for _ in 0..<records {
            #expect(peer.read(exactly: message.count) == message)
        }
        #expect(peer.read(exactly: answer.count) == answer)
        #expect(running.waitUntil { driver.received == first + second })
        #expect(running.waitUntil { driver.transport.interest == EventLoop.readable })
        #expect(running.sync { !tls.readWaitsForWritable && driver.transport.queuedByteCount == 0 })
        #expect(running.sync { driver.ended } == nil)
    }

    @Test func writeBlockedOnReadabilityIsRetriedWhenTheSocketHasInput() throws {
        let serverContext = try TLSContext(certificateChainPath: TestCertificate.paths.certificate, privateKeyPath: TestCertificate.paths.key)
        let clientContext = try TLSClientContext(insecure: true)
        let running = try RunningLoop()
        defer { running.stop() }
        let pair = try UnixSocketPair(sendBuffer: 256 * 1024)
        defer { close(pair.peerEnd) }
        let tls = try TLSStream(clientContext: clientContext, fd: pair.transportEnd, serverName: "localhost")
        let driver = TransportDriver.registered(fd: pair.transportEnd, tls: tls, on: running, handshakeFirst: false)
        defer { running.sync { driver.transport.close() } }

        // Written before any handshake: the write itself starts it (ClientHello) and then
        // needs the server's answer. Queued output, yet only readability is watched.
        let message = Array("written before the handshake".utf8)
        #expect(running.sync { driver.send(message) } == .pending)
        #expect(running.sync { driver.transport.interest } == EventLoop.readable)
        #expect(running.sync { driver.transport.queuedByteCount } == message.count)

        // The server answers: readability retries the write, which finishes the handshake and sends.
        let peer = TLSPeer(context: serverContext.context, fd: pair.peerEnd, server: true)
        #expect(peer.handshake())
        #expect(peer.read(exactly: message.count) == message)
        #expect(running.waitUntil { driver.transport.queuedByteCount == 0 })
        #expect(running.waitUntil { driver.transport.interest == EventLoop.readable })
        #expect(running.sync { driver.flushFailure } == nil)
    }
}
