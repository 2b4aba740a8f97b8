/// The files of a data directory, sorted by what their names say.
///
/// Names carry the sequence as 16 lowercase hex digits so that a plain `ls` lists segments and
/// snapshots in order, and so that an empty segment still tells where the log continues.
struct DataDirectoryListing {
    /// `wal-<first sequence>.log`, oldest first.
    var segments: [(firstSequence: UInt64, name: String)] = []
    /// `snapshot-<last sequence>.snap`, oldest first.
    var snapshots: [(lastSequence: UInt64, name: String)] = []
    /// `*.tmp`: a segment or snapshot that was being created when the process stopped.
    var temporaryFiles: [String] = []
    /// Anything else, including the lock file: left alone.
    var otherFiles: [String] = []

    static let lockFileName = "wal.lock"
    static let segmentPrefix = "wal-"
    static let segmentSuffix = ".log"
    static let snapshotPrefix = "snapshot-"
    static let snapshotSuffix = ".snap"
    static let temporarySuffix = ".tmp"

    init(names: [String]) {
        for name in names {
            if let first = Self.sequence(in: name, prefix: Self.segmentPrefix, suffix: Self.segmentSuffix) {
                segments.append((first, name))
            } else if let last = Self.sequence(in: name, prefix: Self.snapshotPrefix, suffix: Self.snapshotSuffix) {
                snapshots.append((last, name))
            } else if name.hasSuffix(Self.temporarySuffix)
                && (name.hasPrefix(Self.segmentPrefix) || name.hasPrefix(Self.snapshotPrefix))
            {
                temporaryFiles.append(name)
            } else {
                otherFiles.append(name)
            }
        }
        segments.sort { $0.firstSequence < $1.firstSequence }
        snapshots.sort { $0.lastSequence < $1.lastSequence }
        temporaryFiles.sort()
        otherFiles.sort()
    }

    init(directory: String) throws {
        self.init(names: try FileIO.listDirectory(directory))
    }

    static func segmentName(firstSequence: UInt64) -> String {
        segmentPrefix + hex16(firstSequence) + segmentSuffix
    }

    static func snapshotName(lastSequence: UInt64) -> String {
        snapshotPrefix + hex16(lastSequence) + snapshotSuffix
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The sequence in `<prefix><16 lowercase hex digits><suffix>`; nil for any other spelling,
    /// so that two names can never denote the same sequence. Segment sequences start at 1.
    private static func sequence(in name: String, prefix: String, suffix: String) -> UInt64? {
        let utf8 = Array(name.utf8)
        let prefixCount = prefix.utf8.count
        guard utf8.count == prefixCount + 16 + suffix.utf8.count,
            name.hasPrefix(prefix), name.hasSuffix(suffix)
        else { return nil }
        var value: UInt64 = 0
        for byte in utf8[prefixCount..<(prefixCount + 16)] {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt64(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        if prefix == segmentPrefix && value == 0 { return nil }
        return value
    }
}

/// Joins a directory and a file name.
func pathIn(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
}
