/// Reads the records of one segment file front to back, checking each one: length, CRC and
/// sequence. Recovery, replay, `verify` and `inspect` all read the log through it, so they
/// agree on what a valid record is.
///
/// Reads ahead in 1 MiB pread(2) calls; a larger record gets a buffer of its size.
struct SegmentRecordWalker {
    enum Step {
        case record(sequence: UInt64, offset: Int, payload: [UInt8]?)
        /// Every byte up to `end` was a valid record.
        case end
        case damaged(SegmentDamage)
    }

    static let readAhead = 1 << 20

    let fd: Int32
    let path: String
    /// Bytes of the file that count: its size, or for the live segment the end of the last
    /// complete append.
    let end: Int
    /// Where the next record starts.
    private(set) var offset: Int

    private var buffer: [UInt8] = []
    private var bufferStart = 0
    private var bufferCount = 0

    init(fd: Int32, path: String, end: Int, offset: Int = LogFormat.segmentHeaderSize) {
        self.fd = fd
        self.path = path
        self.end = end
        self.offset = offset
    }

    /// Reads and checks the segment header; returns why it is wrong, or nil.
    static func headerProblem(fd: Int32, path: String, firstSequence: UInt64) throws -> String? {
        var header = [UInt8](repeating: 0, count: LogFormat.segmentHeaderSize)
        let count = try header.withUnsafeMutableBytes {
            try FileIO.read(fd, into: $0, at: 0, path: path)
        }
        return header.withUnsafeBytes {
            LogFormat.segmentHeaderProblem(UnsafeRawBufferPointer(rebasing: $0[0..<count]), firstSequence: firstSequence)
        }
    }

    /// The next record, which must carry `expected`. After `.damaged` the walker stays on the
    /// damaged record: nothing past it can be framed reliably.
    mutating func next(expecting expected: UInt64, copyPayload: Bool) throws -> Step {
        if offset >= end { return .end }
        let headerSize = LogFormat.recordHeaderSize
        guard try load(offset, headerSize) else {
            return .damaged(SegmentDamage(offset: offset, kind: .partialHeader(available: end - offset)))
        }
        let (length, storedCRC, sequence) = buffer.withUnsafeBytes { bytes in
            let at = offset - bufferStart
            return (
                Int(bytes.littleEndian(at: at, as: UInt32.self)),
                bytes.littleEndian(at: at + 4, as: UInt32.self),
                bytes.littleEndian(at: at + 8, as: UInt64.self)
            )
        }
        guard length <= LogFormat.maximumRecordPayload else {
            return .damaged(SegmentDamage(offset: offset, kind: .oversizedLength(length)))
        }
        guard try load(offset, headerSize + length) else {
            let available = end - offset - headerSize
            return .damaged(SegmentDamage(offset: offset, kind: .partialPayload(length: length, available: available)))
        }
        let start = offset - bufferStart
        let crc = buffer.withUnsafeBytes {
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[(start + 8)..<(start + headerSize + length)]))
        }
        guard crc == storedCRC else {
            return .damaged(SegmentDamage(offset: offset, kind: .checksumMismatch))
        }
        guard sequence == expected else {
            return .damaged(SegmentDamage(offset: offset, kind: .unexpectedSequence(found: sequence, expected: expected)))
        }
        let payload = copyPayload ? Array(buffer[(start + headerSize)..<(start + headerSize + length)]) : nil
        let recordOffset = offset
        offset += headerSize + length
        return .record(sequence: sequence, offset: recordOffset, payload: payload)
    }

    /// Makes file bytes [position, position+count) available in `buffer`; false if `end` comes first.
    private mutating func load(_ position: Int, _ count: Int) throws -> Bool {
        if position >= bufferStart && position + count <= bufferStart + bufferCount { return true }
        guard position + count <= end else { return false }
        let wanted = min(end - position, max(count, Self.readAhead))
        if buffer.count < wanted { buffer = [UInt8](repeating: 0, count: wanted) }
        let got = try buffer.withUnsafeMutableBytes {
            try FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted]), at: position, path: path)
        }
        bufferStart = position
        bufferCount = got
        // Fewer bytes than expected: the file shrank since its size was taken.
        return got >= count
    }

    /// Looks for any valid record starting after `damageOffset`, i.e. for evidence that the damage
    /// is not a write cut short at the end of the log. A candidate must carry a sequence above
    /// `lastGoodSequence` and below what the remaining bytes could hold, a plausible length, and a
    /// matching CRC. Returns its offset.
    ///
    /// Only ever run on damage, so a byte-by-byte pass (about 1 ns a byte) is affordable.
    static func validRecordOffset(
        fd: Int32, path: String, end: Int, after damageOffset: Int, lastGoodSequence: UInt64
    ) throws -> Int? {
        let headerSize = LogFormat.recordHeaderSize
        let highestPlausible = lastGoodSequence + UInt64((end - damageOffset) / headerSize) + 1
        var chunk = [UInt8](repeating: 0, count: readAhead + headerSize)
        var chunkStart = damageOffset + 1
        while chunkStart + headerSize <= end {
            let wanted = min(chunk.count, end - chunkStart)
            let got = try chunk.withUnsafeMutableBytes {
                try FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted]), at: chunkStart, path: path)
            }
            guard got >= headerSize else { return nil }
            for at in 0...(got - headerSize) {
                let (length, storedCRC, sequence) = chunk.withUnsafeBytes { bytes in
                    (
                        Int(bytes.littleEndian(at: at, as: UInt32.self)),
                        bytes.littleEndian(at: at + 4, as: UInt32.self),
                        bytes.littleEndian(at: at + 8, as: UInt64.self)
                    )
                }
                guard sequence > lastGoodSequence, sequence <= highestPlausible,
                    length <= LogFormat.maximumRecordPayload, chunkStart + at + headerSize + length <= end
                else { continue }
                let crc: UInt32
                if at + headerSize + length <= got {
                    crc = chunk.withUnsafeBytes {
                        CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[(at + 8)..<(at + headerSize + length)]))
                    }
                } else {
                    var covered = [UInt8](repeating: 0, count: 8 + length)
                    let count = try covered.withUnsafeMutableBytes {
                        try FileIO.read(fd, into: $0, at: chunkStart + at + 8, path: path)
                    }
                    guard count == covered.count else { continue }
                    crc = covered.withUnsafeBytes { CRC32.checksum($0) }
                }
                if crc == storedCRC { return chunkStart + at }
            }
            // The next chunk starts right after the last offset examined here.
            chunkStart += got - headerSize + 1
        }
        return nil
    }
}
