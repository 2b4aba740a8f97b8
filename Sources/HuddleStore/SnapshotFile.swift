import Glibc

/// Reading one snapshot file back, with every check: header, name, size, inflation, payload CRC.
/// Used by `SnapshotStore` to load and by `DataDirectoryCheck` to verify and inspect.
enum SnapshotFile {
    /// The header alone, checked against the file name and size; no decompression.
    static func header(directory: String, name: String, lastSequence: UInt64) throws -> SnapshotFormat.Header {
        let path = pathIn(directory, name)
        let fd = try FileIO.open(path, O_RDONLY)
        defer { FileIO.close(fd) }
        return try header(fd: fd, path: path, lastSequence: lastSequence)
    }

    /// The payload, after every check passed. Throws `SnapshotProblem` for a damaged file and
    /// `StoreError` for a failed system call.
    static func payload(directory: String, name: String, lastSequence: UInt64) throws -> [UInt8] {
        let path = pathIn(directory, name)
        let fd = try FileIO.open(path, O_RDONLY)
        defer { FileIO.close(fd) }
        let header = try header(fd: fd, path: path, lastSequence: lastSequence)
        var compressed = [UInt8](repeating: 0, count: Int(header.compressedLength))
        let count = try compressed.withUnsafeMutableBytes {
            try FileIO.read(fd, into: $0, at: SnapshotFormat.headerSize, path: path)
        }
        guard count == compressed.count else { throw SnapshotProblem("file shrank while being read") }
        let payload = try compressed.withUnsafeBytes {
            try SnapshotCompression.inflate($0, length: Int(header.uncompressedLength))
        }
        guard payload.withUnsafeBytes({ CRC32.checksum($0) }) == header.payloadCRC else {
            throw SnapshotProblem("payload checksum mismatch")
        }
        return payload
    }

    private static func header(fd: Int32, path: String, lastSequence: UInt64) throws -> SnapshotFormat.Header {
        let size = try FileIO.size(fd, path: path)
        var bytes = [UInt8](repeating: 0, count: SnapshotFormat.headerSize)
        let count = try bytes.withUnsafeMutableBytes { try FileIO.read(fd, into: $0, at: 0, path: path) }
        let header = try bytes.withUnsafeBytes {
            try SnapshotFormat.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]))
        }
        guard header.lastSequence == lastSequence else {
            throw SnapshotProblem("header says sequence \(header.lastSequence), file name says \(lastSequence)")
        }
        let expectedSize = UInt64(SnapshotFormat.headerSize) + header.compressedLength
        guard UInt64(size) == expectedSize else {
            throw SnapshotProblem("file is \(size) bytes, header promises \(expectedSize)")
        }
        // Generous bound: no state this server holds in memory comes near it, a damaged one would.
        guard header.uncompressedLength <= UInt64(Int.max / 2) else {
            throw SnapshotProblem("implausible payload length \(header.uncompressedLength)")
        }
        return header
    }
}
