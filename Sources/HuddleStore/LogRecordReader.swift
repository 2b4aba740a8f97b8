import Glibc

/// Streams the log's records after a given sequence, one at a time, for replay at start-up.
/// Memory stays at one read-ahead buffer (1 MiB, or the largest record) however long the log.
///
/// Every record is checked again as it is read (CRC, sequence), and the sequences yielded are
/// exactly `after + 1, after + 2, …` with no gap, or `next()` throws.
///
/// The reader opens its segments when it is created and reads no further than the log's end at
/// that moment, so later appends and `removeSegments` do not disturb it. Not thread-safe: use it
/// from one thread at a time.
public final class LogRecordReader {
    struct Source {
        var name: String
        var firstSequence: UInt64
        var end: Int
    }

    private let directory: String
    private let after: UInt64
    private var sources: [(source: Source, fd: Int32)] = []
    private var index = 0
    private var walker: SegmentRecordWalker?
    private var expectedInSegment: UInt64 = 0
    private var nextToYield: UInt64

    init(directory: String, sources: [Source], after: UInt64) throws {
        self.directory = directory
        self.after = after
        self.nextToYield = after + 1
        do {
            for source in sources {
                let path = pathIn(directory, source.name)
                let fd = try FileIO.open(path, O_RDONLY)
                self.sources.append((source, fd))
                if let problem = try SegmentRecordWalker.headerProblem(fd: fd, path: path, firstSequence: source.firstSequence) {
                    throw StoreError.corruptLog(file: source.name, offset: 0, reason: problem)
                }
            }
        } catch {
            closeAll()
            throw error
        }
    }

    deinit { closeAll() }

    /// The next record, or nil after the last one.
    public func next() throws -> LogRecord? {
        while index < sources.count {
            let (source, fd) = sources[index]
            if walker == nil {
                walker = SegmentRecordWalker(fd: fd, path: pathIn(directory, source.name), end: source.end)
                expectedInSegment = source.firstSequence
            }
            let wanted = expectedInSegment >= nextToYield
            switch try walker!.next(expecting: expectedInSegment, copyPayload: wanted) {
            case .record(let sequence, let offset, let payload):
                expectedInSegment += 1
                guard sequence > after else { continue }
                guard sequence == nextToYield else {
                    if nextToYield == after + 1 {
                        throw StoreError.recordsUnavailable(requestedAfter: after, firstAvailable: sequence)
                    }
                    throw StoreError.corruptLog(file: source.name, offset: offset, reason:
                        "sequence gap during replay: expected \(nextToYield), found \(sequence)")
                }
                nextToYield += 1
                return LogRecord(sequence: sequence, payload: payload ?? [])
            case .end:
                FileIO.close(fd)
                sources[index].fd = -1
                index += 1
                walker = nil
            case .damaged(let damage):
                throw StoreError.corruptLog(file: source.name, offset: damage.offset, reason: damage.reason)
            }
        }
        return nil
    }

    private func closeAll() {
        for entry in sources where entry.fd >= 0 { FileIO.close(entry.fd) }
        sources.removeAll()
    }
}
