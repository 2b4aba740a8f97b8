import Foundation
import Glibc
import HuddleStore

/// A fresh directory under /tmp, removed with everything in it when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/huddle-store-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { buffer in
            precondition(mkdtemp(buffer.baseAddress!) != nil, "mkdtemp failed")
            return String(cString: buffer.baseAddress!)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    func bytes(_ name: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: file(name)) ?? Data()) }

    func write(_ name: String, _ bytes: [UInt8]) {
        precondition(FileManager.default.createFile(atPath: file(name), contents: Data(bytes)))
    }

    func size(_ name: String) -> Int { bytes(name).count }

    func truncate(_ name: String, to length: Int) {
        precondition(Glibc.truncate(file(name), off_t(length)) == 0)
    }

    func flipBit(_ name: String, atByte offset: Int, bit: Int = 0) {
        var content = bytes(name)
        content[offset] ^= UInt8(1 << bit)
        write(name, content)
    }

    func remove(_ name: String) { try? FileManager.default.removeItem(atPath: file(name)) }

    func rename(_ from: String, _ to: String) {
        precondition(Glibc.rename(file(from), file(to)) == 0)
    }

    /// Names, sizes, modification times and contents: what "changed nothing" compares.
    func fingerprint() -> [String] {
        names().map { name in
            var info = stat()
            stat(file(name), &info)
            return "\(name) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(bytes(name).hashValue)"
        }
    }
}

/// A child process forked from this one that only waits to be released: until then it holds a
/// copy of every descriptor open at the fork, as a child between fork and exec does. Released
/// at the latest when the value goes away (a failing test leaves no child behind).
final class ForkedChild {
    private let pid: pid_t
    private var releaseFD: Int32

    init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw StoreError.system(call: "pipe", path: "", errno: errno) }
        let pid = fork()
        if pid == 0 {
            // Only async-signal-safe calls between fork and _exit (the parent has other threads).
            Glibc.close(ends[1])
            var byte: UInt8 = 0
            _ = Glibc.read(ends[0], &byte, 1)  // end of file once the parent closes its end
            _exit(0)
        }
        Glibc.close(ends[0])
        guard pid > 0 else {
            Glibc.close(ends[1])
            throw StoreError.system(call: "fork", path: "", errno: errno)
        }
        self.pid = pid
        releaseFD = ends[1]
    }

    deinit { release() }

    /// Lets the child exit and reaps it.
    func release() {
        guard releaseFD >= 0 else { return }
        Glibc.close(releaseFD)
        releaseFD = -1
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

/// An independent bitwise CRC-32 (ISO-HDLC, as zlib's), so format tests check the bytes against
/// the specification rather than against the code under test.
func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xffff_ffff
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc & 1) == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
    }
    return ~crc
}

func littleEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

/// A record as the format specifies it, built by hand.
func encodedRecord(sequence: UInt64, payload: [UInt8]) -> [UInt8] {
    let covered = littleEndianBytes(sequence) + payload
    return littleEndianBytes(UInt32(payload.count)) + littleEndianBytes(referenceCRC32(covered)) + covered
}

/// A segment header as the format specifies it, built by hand.
func encodedSegmentHeader(firstSequence: UInt64) -> [UInt8] {
    let head = Array("HUDDLWAL".utf8) + littleEndianBytes(UInt32(1)) + littleEndianBytes(firstSequence)
    return head + littleEndianBytes(referenceCRC32(head))
}

func segmentName(_ firstSequence: UInt64) -> String {
    "wal-" + String(format: "%016llx", firstSequence) + ".log"
}

func snapshotName(_ lastSequence: UInt64) -> String {
    "snapshot-" + String(format: "%016llx", lastSequence) + ".snap"
}

/// Distinct, recognisable payloads: record n is "record n" padded with n bytes.
func payload(_ n: UInt64, size: Int? = nil) -> [UInt8] {
    let text = Array("record \(n)".utf8)
    let length = size ?? text.count + Int(n % 7)
    return (text + [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: max(0, length - text.count))).prefix(length).map { $0 }
}

/// Every record after `sequence`, read through the log's reader.
func replay(_ log: WriteAheadLog, after sequence: UInt64 = 0) throws -> [LogRecord] {
    let reader = try log.records(after: sequence)
    var records: [LogRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

func expectedRecords(_ range: ClosedRange<UInt64>) -> [LogRecord] {
    range.map { LogRecord(sequence: $0, payload: payload($0)) }
}

/// Appends records `range` (with `payload(n)`) as one batch.
@discardableResult
func appendRecords(_ log: WriteAheadLog, _ range: ClosedRange<UInt64>) throws -> ClosedRange<UInt64> {
    try log.append(range.map { payload($0) })
}

/// Pseudo-random bytes (xorshift64*), which zlib cannot shrink; fast even in a debug build.
func incompressibleBytes(_ count: Int, seed: UInt64 = 0x9e37_79b9_7f4a_7c15) -> [UInt8] {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < count {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            let word = state &* 0x2545_f491_4f6c_dd1d
            withUnsafeBytes(of: word) { word in
                for index in 0..<min(8, count - offset) { buffer[offset + index] = word[index] }
            }
            offset += 8
        }
    }
    return bytes
}
