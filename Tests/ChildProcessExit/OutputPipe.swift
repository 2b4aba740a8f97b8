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
