import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A channel for a child's output whose two ends are close-on-exec from the moment they exist
/// (a socket pair made with `SOCK_CLOEXEC`: Swift's Glibc module has no `pipe2`; Foundation's
/// `Pipe` makes both ends inheritable). The child still gets the
/// write end, as its stdout or stderr, through the `dup2` of its spawn, which clears the flag
/// on the copy only. Without it, a process another test thread spawns at the same moment
/// inherits the write end, and the pipe's end of file — "everything the child wrote is here" —
/// waits for that unrelated process to exit: a harness run that had printed its verdict was
/// reported still running after 90 s that way.
public struct OutputPipe {
    public let reading: FileHandle
    public let writing: FileHandle

    public init() throws {
        var ends: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        writing = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
    }
}

extension OutputPipe {
    /// Reads the child's output on a thread of its own, blocking, until end of file: each chunk
    /// to `received`, then `nil` once every writer is gone. Not Foundation's
    /// `readabilityHandler`: on Linux its dispatch source sometimes never reports the end of
    /// file (swift-corelibs-foundation issue 3275), and a test waited out its timeout for a
    /// child that had exited and printed everything. The thread holds the read end open.
    public func readToEnd(_ received: @escaping @Sendable (Data?) -> Void) {
        let reading = self.reading
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reading.fileDescriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    received(Data(buffer[..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // end of file, or the descriptor is unusable: nothing more will come
                }
            }
            received(nil)
        }
        thread.start()
    }
}
