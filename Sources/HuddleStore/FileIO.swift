import CHuddleShims
import Glibc

/// The system calls the store makes, each retried on EINTR and turned into `StoreError.system`.
///
/// Files are created 0600 and directories 0700: the log holds password hashes, session hashes
/// and private messages, which no other local user should read.
enum FileIO {
    static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700

    static func open(_ path: String, _ flags: Int32, mode: mode_t = fileMode) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw StoreError.system(call: "open", path: path, errno: errno) }
        }
    }

    /// Reads until `buffer` is full or the file ends; returns how many bytes were read.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if count > 0 {
                done += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw StoreError.system(call: "pread", path: path, errno: errno)
            }
        }
        return done
    }

    /// Writes all of `bytes`. A regular file takes the whole buffer in one pwrite(2) unless
    /// something interrupts it (a signal, RLIMIT_FSIZE, a full disk); the rest is retried so that a
    /// genuine failure surfaces as the errno of the call that could write nothing.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws {
        var done = 0
        while done < bytes.count {
            let count = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if count > 0 {
                done += count
            } else if count == 0 {
                throw StoreError.system(call: "pwrite", path: path, errno: EIO)
            } else if errno != EINTR {
                throw StoreError.system(call: "pwrite", path: path, errno: errno)
            }
        }
    }

    static func syncData(_ fd: Int32, path: String) throws {
        while fdatasync(fd) != 0 {
            if errno != EINTR { throw StoreError.system(call: "fdatasync", path: path, errno: errno) }
        }
    }

    /// Writes `count` bytes from `offset` back to the disk and waits for them (sync_file_range):
    /// data only, so a file written in large amounts never has more than one such range
    /// dirty at a time, and an fdatasync of another file is not stuck behind all of it.
    static func writeBack(_ fd: Int32, offset: Int, count: Int, path: String) throws {
        while huddle_write_back_range(fd, Int64(offset), Int64(count)) != 0 {
            if errno != EINTR { throw StoreError.system(call: "sync_file_range", path: path, errno: errno) }
        }
    }

    static func syncAll(_ fd: Int32, path: String) throws {
        while fsync(fd) != 0 {
            if errno != EINTR { throw StoreError.system(call: "fsync", path: path, errno: errno) }
        }
    }

    static func truncate(_ fd: Int32, to length: Int, path: String) throws {
        while ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw StoreError.system(call: "ftruncate", path: path, errno: errno) }
        }
    }

    static func size(_ fd: Int32, path: String) throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError.system(call: "fstat", path: path, errno: errno) }
        return Int(info.st_size)
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw StoreError.system(call: "rename", path: from, errno: errno) }
    }

    static func unlink(_ path: String) throws {
        guard Glibc.unlink(path) == 0 else { throw StoreError.system(call: "unlink", path: path, errno: errno) }
    }

    /// close(2) is not retried on EINTR: on Linux the descriptor is released either way.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Makes a just created, renamed or removed name durable: fsync of a file covers its data,
    /// not the directory entry that points at it.
    static func syncDirectory(_ path: String) throws {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try syncAll(fd, path: path)
    }

    /// mkdir -p; each directory it creates is made durable in its parent. Returns whether it
    /// created anything.
    @discardableResult
    static func makeDirectories(_ path: String) throws -> Bool {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError.system(call: "mkdir", path: path, errno: ENOTDIR)
            }
            return false
        }
        let parent = parentDirectory(of: path)
        if parent != path { try makeDirectories(parent) }
        if mkdir(path, directoryMode) != 0 && errno != EEXIST {
            throw StoreError.system(call: "mkdir", path: path, errno: errno)
        }
        try syncDirectory(parent)
        return true
    }

    static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    /// Names in a directory, without "." and "..".
    static func listDirectory(_ path: String) throws -> [String] {
        guard let stream = opendir(path) else { throw StoreError.system(call: "opendir", path: path, errno: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw StoreError.system(call: "readdir", path: path, errno: errno) }
                return names
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Size and modification time (seconds since 1970, UTC) of a path.
    static func status(_ path: String) throws -> (size: Int, modifiedSeconds: Int64) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.system(call: "stat", path: path, errno: errno) }
        return (Int(info.st_size), Int64(info.st_mtim.tv_sec))
    }
}
