import Foundation
import Glibc

/// What huddle-chat remembers between runs: the server, who is signed in, the session token,
/// and how far the inbox was read (so notices that came while away are shown on the next start).
struct ChatSettings: Codable, Equatable {
    var url: String?
    var username: String?
    var token: String?
    var inboxEpoch: String?
    var inboxOffset: UInt64?

    enum CodingKeys: String, CodingKey {
        case url, username, token
        case inboxEpoch = "inbox_epoch"
        case inboxOffset = "inbox_offset"
    }
}

/// One session's settings file (where it lives: `ChatSessionStore`). It holds a session
/// token, so it is written with mode 0600 (in a directory created 0700), replaced atomically
/// (temporary file, fsync, rename) so a crash never leaves half of it.
struct ChatConfigFile {
    let path: String

    /// The saved settings; empty ones when there is no file yet.
    func load() throws -> ChatSettings {
        guard FileManager.default.fileExists(atPath: path) else { return ChatSettings() }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            return try JSONDecoder().decode(ChatSettings.self, from: data)
        } catch {
            throw ChatConfigError("\(path) is not a huddle-chat settings file (\(error)); move it away to start afresh")
        }
    }

    /// Forgets the session (after a logout or a refusal).
    func remove() {
        unlink(path)
    }

    func save(_ settings: ChatSettings) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bytes = Array(try encoder.encode(settings)) + [UInt8(ascii: "\n")]
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ChatConfigError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw ChatConfigError("cannot write \(temporary): \(reason)")
            }
            offset += written
        }
        // O_CREAT's mode is filtered by the umask and ignored for a file that existed: be sure.
        fchmod(fd, 0o600)
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw ChatConfigError("cannot replace \(path): \(reason)")
        }
    }
}

struct ChatConfigError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
