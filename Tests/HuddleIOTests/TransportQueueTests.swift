import Glibc
@testable import HuddleIO
import Testing

/// The outbound queue: bytes queued whole (`enqueue`, shared fan-out frames) and bytes written
/// in place (`appendToQueue`, frame writers) leave in the order they were queued, and the
/// queued count follows them.
@Suite struct TransportQueueTests {
    @Test func enqueuedAndAppendedBytesLeaveInOrder() throws {
        let running = try RunningLoop()
        defer { running.stop() }
        let pair = try UnixSocketPair(sendBuffer: 65536)
        defer { close(pair.peerEnd) }
        let driver = TransportDriver.registered(fd: pair.transportEnd, tls: nil, on: running, handshakeFirst: false)
        defer { running.sync { driver.transport.close() } }

        let (seenByWriter, queued, end): ([UInt8], Int, Transport.FlushEnd) = running.sync {
            let transport = driver.transport
            transport.enqueue([1, 2])
            var seen: [UInt8] = []
            transport.appendToQueue { queue in
                seen = queue
                queue.append(3)
            }
            transport.appendToQueue { $0 += [4, 5] }
            return (seen, transport.queuedByteCount, driver.flush())
        }
        #expect(seenByWriter == [1, 2])
        #expect(queued == 5)
        #expect(end == .drained)
        var received = [UInt8](repeating: 0, count: 16)
        var count = 0
        while count < 5 {
            let n = received.withUnsafeMutableBytes { read(pair.peerEnd, $0.baseAddress! + count, 16 - count) }
            try #require(n > 0)
            count += n
        }
        #expect(Array(received[0..<count]) == [1, 2, 3, 4, 5])
        #expect(running.sync { driver.transport.queuedByteCount } == 0)
    }
}
