/// The export archive's format (protocol.md, "Export"): a POSIX ustar archive (POSIX.1-1988,
/// as `tar` writes and reads it everywhere). Tar is chosen because it streams: each file is a
/// 512-byte header then its bytes padded to 512, and the archive ends with two zero blocks —
/// no central directory to write last, so the server sends each file as it reads it, and the
/// whole size is known from the file sizes before the first byte (the response's
/// `Content-Length`).
public enum TarArchive {
    public static let blockSize = 512
    /// The ustar size field: 11 octal digits.
    public static let maxFileSize = (1 << 33) - 1
    /// The ustar name field (the prefix field is not used: the archive's names are short).
    public static let maxNameLength = 100

    /// The header of a regular file `name` (ASCII, at most `maxNameLength` bytes) of `size`
    /// bytes, modified at `modified` (seconds since 1970), mode 0644, owned by no one.
    public static func header(name: String, size: Int, modified: Int64) -> [UInt8] {
        precondition(name.utf8.count <= maxNameLength && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "not a tar name: \(name)")
        precondition((0...maxFileSize).contains(size), "a ustar file is under 8 GiB")
        var block = [UInt8](repeating: 0, count: blockSize)
        func put(_ bytes: some Sequence<UInt8>, at offset: Int) {
            for (index, byte) in bytes.enumerated() { block[offset + index] = byte }
        }
        /// `value` in octal, zero-padded to `width - 1` digits, then NUL.
        func putOctal(_ value: Int, at offset: Int, width: Int) {
            let digits = String(value, radix: 8)
            put(String(repeating: "0", count: width - 1 - digits.count).utf8, at: offset)
            put(digits.utf8, at: offset + width - 1 - digits.count)
            block[offset + width - 1] = 0
        }
        put(name.utf8, at: 0)
        putOctal(0o644, at: 100, width: 8)  // mode
        putOctal(0, at: 108, width: 8)  // uid
        putOctal(0, at: 116, width: 8)  // gid
        putOctal(size, at: 124, width: 12)
        putOctal(Int(max(0, min(modified, Int64(maxFileSize)))), at: 136, width: 12)
        block[156] = UInt8(ascii: "0")  // a regular file
        put("ustar\u{0}00".utf8, at: 257)  // magic and version
        // The checksum is the sum of the header's bytes with its own field as eight spaces,
        // written as six octal digits, NUL, space.
        put([UInt8](repeating: 0x20, count: 8), at: 148)
        let checksum = block.reduce(0) { $0 + Int($1) }
        putOctal(checksum, at: 148, width: 7)
        block[155] = 0x20
        return block
    }

    /// The zero bytes after a file of `size` bytes up to the next block.
    public static func paddingLength(after size: Int) -> Int {
        (blockSize - size % blockSize) % blockSize
    }

    /// What ends an archive: two zero blocks.
    public static let end = [UInt8](repeating: 0, count: 2 * blockSize)

    /// The bytes of an archive holding files of these sizes.
    public static func archiveLength(fileSizes: some Sequence<Int>) -> Int {
        fileSizes.reduce(end.count) { $0 + blockSize + $1 + paddingLength(after: $1) }
    }
}
