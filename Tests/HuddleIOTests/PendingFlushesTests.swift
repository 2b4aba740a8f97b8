import HuddleIO
import Testing

@Suite struct PendingFlushesTests {
    final class FlushLog { var order: [ObjectIdentifier] = [] }

    final class Writer: Flushable {
        var isDirty = false
        var flushes = 0
        var log: FlushLog?
        /// Marked by this one's flush, as a close queued by a last write marks its connection.
        var marksOnFlush: (Writer, PendingFlushes<Writer>)?

        func flush() {
            flushes += 1
            log?.order.append(ObjectIdentifier(self))
            if let (other, list) = marksOnFlush {
                marksOnFlush = nil
                list.mark(other)
            }
        }
    }

    @Test func anElementMarkedManyTimesFlushesOnce() {
        let list = PendingFlushes<Writer>()
        let writer = Writer()
        for _ in 0..<5 { list.mark(writer) }
        #expect(writer.isDirty && !list.isEmpty)
        list.flushAll()
        #expect(writer.flushes == 1 && !writer.isDirty && list.isEmpty)
        list.flushAll()
        #expect(writer.flushes == 1)
    }

    @Test func everyMarkedElementFlushesInMarkOrder() {
        let list = PendingFlushes<Writer>()
        let log = FlushLog()
        let writers = (0..<3).map { _ in Writer() }
        for writer in writers { writer.log = log }
        for writer in writers.reversed() { list.mark(writer) }
        list.flushAll()
        #expect(writers.allSatisfy { $0.flushes == 1 && !$0.isDirty })
        #expect(log.order == writers.reversed().map(ObjectIdentifier.init))
    }

    @Test func anElementMarkedDuringTheWalkIsFlushedInTheSameWalk() {
        let list = PendingFlushes<Writer>()
        let first = Writer()
        let second = Writer()
        let third = Writer()
        first.marksOnFlush = (third, list)
        // Marked again while its own flush is running: flushed again, later in the walk.
        second.marksOnFlush = (second, list)
        list.mark(first)
        list.mark(second)
        list.flushAll()
        #expect(first.flushes == 1 && second.flushes == 2 && third.flushes == 1)
        #expect(!first.isDirty && !second.isDirty && !third.isDirty && list.isEmpty)
    }
}
