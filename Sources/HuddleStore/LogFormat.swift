/// The bytes of a log segment.
///
///     segment header (24 bytes):
///       0  magic "HUDDLWAL"
///       8  format version, u32 (1)
///      12  first sequence of the segment, u64 (equals the one in the file name)
///      20  CRC-32 of bytes 0..<20, u32
///     records, back to back:
///       0  payload length, u32 (≤ maximumRecordPayload)
///       4  CRC-32 of bytes 8..<16+length (sequence + payload), u32
///       8  sequence, u64
///      16  payload
///
/// All integers little-endian. Sequence and payload are adjacent so the record CRC is one pass
/// over contiguous bytes. The length is not under the CRC, but a wrong length makes the CRC cover
/// the wrong bytes, so it fails just the same.
enum LogFormat {
    static let magic: [UInt8] = Array("HUDDLWAL".utf8)
    static let version: UInt32 = 1
    static let segmentHeaderSize = 24
    static let recordHeaderSize = 16
    /// Largest payload of one record. A core command is far smaller; the limit bounds what
    /// recovery allocates when it trusts a length field, and keeps one record from being a
    /// whole segment.
    static let maximumRecordPayload = 16 << 20

    static func segmentHeader(firstSequence: UInt64) -> [UInt8] {
        var header = magic
        header.appendLittleEndian(version)
        header.appendLittleEndian(firstSequence)
        let crc = header.withUnsafeBytes { CRC32.checksum($0) }
        header.appendLittleEndian(crc)
        return header
    }

    /// Why `header` (segmentHeaderSize bytes) is not the header of a segment starting at
    /// `firstSequence`, or nil if it is.
    static func segmentHeaderProblem(_ header: UnsafeRawBufferPointer, firstSequence: UInt64) -> String? {
        guard header.count >= segmentHeaderSize else {
            return "segment header incomplete (\(header.count) of \(segmentHeaderSize) bytes)"
        }
        guard header.prefix(magic.count).elementsEqual(magic) else { return "not a log segment (bad magic)" }
        let storedCRC = header.littleEndian(at: 20, as: UInt32.self)
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: header[0..<20])) == storedCRC else {
            return "segment header checksum mismatch"
        }
        let version = header.littleEndian(at: 8, as: UInt32.self)
        guard version == Self.version else { return "unsupported segment format version \(version)" }
        let headerFirst = header.littleEndian(at: 12, as: UInt64.self)
        guard headerFirst == firstSequence else {
            return "header says the segment starts at \(headerFirst), its name says \(firstSequence)"
        }
        return nil
    }

    static func recordChecksum(sequence: UInt64, payload: UnsafeRawBufferPointer) -> UInt32 {
        let head = withUnsafeBytes(of: sequence.littleEndian) { CRC32.checksum($0) }
        return CRC32.update(head, payload)
    }
}
