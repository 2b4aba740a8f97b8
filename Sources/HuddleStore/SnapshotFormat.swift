/// The bytes of a snapshot file: a fixed header, then the payload as one zlib stream (RFC 1950).
///
///      0  magic "HUDDLSNP"
///      8  format version, u32 (1)
///     12  compression, u32 (1 = zlib)
///     16  last sequence the snapshot covers, u64 (equals the one in the file name)
///     24  uncompressed payload length, u64
///     32  compressed length, u64 (the file is exactly header + this)
///     40  CRC-32 of the uncompressed payload, u32
///     44  CRC-32 of bytes 0..<44, u32
///
/// The header has its own CRC so a damaged length is caught before anything is allocated from it.
enum SnapshotFormat {
    struct Header: Equatable {
        var lastSequence: UInt64
        var uncompressedLength: UInt64
        var compressedLength: UInt64
        var payloadCRC: UInt32
    }

    static let magic: [UInt8] = Array("HUDDLSNP".utf8)
    static let version: UInt32 = 1
    static let zlibCompression: UInt32 = 1
    static let headerSize = 48

    static func encode(_ header: Header) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(version)
        bytes.appendLittleEndian(zlibCompression)
        bytes.appendLittleEndian(header.lastSequence)
        bytes.appendLittleEndian(header.uncompressedLength)
        bytes.appendLittleEndian(header.compressedLength)
        bytes.appendLittleEndian(header.payloadCRC)
        let crc = bytes.withUnsafeBytes { CRC32.checksum($0) }
        bytes.appendLittleEndian(crc)
        return bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(SnapshotProblem) -> Header {
        guard bytes.count >= headerSize else {
            throw SnapshotProblem("file too short for a header (\(bytes.count) of \(headerSize) bytes)")
        }
        guard bytes.prefix(magic.count).elementsEqual(magic) else { throw SnapshotProblem("not a snapshot (bad magic)") }
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<44])) == bytes.littleEndian(at: 44, as: UInt32.self) else {
            throw SnapshotProblem("header checksum mismatch")
        }
        let version = bytes.littleEndian(at: 8, as: UInt32.self)
        guard version == Self.version else { throw SnapshotProblem("unsupported snapshot format version \(version)") }
        let compression = bytes.littleEndian(at: 12, as: UInt32.self)
        guard compression == zlibCompression else { throw SnapshotProblem("unknown compression \(compression)") }
        return Header(
            lastSequence: bytes.littleEndian(at: 16, as: UInt64.self),
            uncompressedLength: bytes.littleEndian(at: 24, as: UInt64.self),
            compressedLength: bytes.littleEndian(at: 32, as: UInt64.self),
            payloadCRC: bytes.littleEndian(at: 40, as: UInt32.self))
    }
}

/// Why a snapshot file is unusable.
struct SnapshotProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
