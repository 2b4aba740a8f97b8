import Foundation
import Glibc

/// Where huddle-chat keeps sessions. By default one settings file per server and user
/// (`~/.config/huddle/chat/SERVER/USER.json`), so two people sharing a machine account, or one
/// person on two servers, never open each other's session; `$HUDDLE_CHAT_CONFIG` names a single
/// file instead (the caller keeps runs apart, as scripts and tests do).
enum ChatSessionStore {
    case singleFile(String)
    /// The directory of one server's sessions, one `USER.json` each.
    case perUser(directory: String)

    static func choose(serverURL: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> ChatSessionStore {
        if let path = singleFilePath(environment: environment) { return .singleFile(path) }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return .perUser(directory: home + "/.config/huddle/chat/" + directoryName(for: serverURL))
    }

    static func singleFilePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        environment["HUDDLE_CHAT_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the store is one server's (a session found in it needs no URL check).
    var isPerServer: Bool {
        if case .perUser = self { return true }
        return false
    }

    /// `ws://127.0.0.1:8080/v1` → `ws%3A%2F%2F127.0.0.1%3A8080%2Fv1`: one path component, and
    /// two different URLs never share it.
    static func directoryName(for serverURL: String) -> String {
        var name = ""
        for byte in serverURL.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                name += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return name
    }

    /// The file `username`'s session is kept in; nil while not signed in in a per-user store
    /// (an anonymous session has nothing to keep).
    func file(for username: String?) -> ChatConfigFile? {
        switch self {
        case .singleFile(let path):
            return ChatConfigFile(path: path)
        case .perUser(let directory):
            guard let username, ChatSessionStore.isSafeFileName(username) else { return nil }
            return ChatConfigFile(path: directory + "/" + username + ".json")
        }
    }

    /// The users with a saved session, by name.
    func savedUsers() -> [String] {
        guard case .perUser(let directory) = self,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory)
        else { return [] }
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(Self.isSafeFileName).sorted()
    }

    /// The session to start with, and a line to show about the choice (nil: nothing to say).
    /// `requested` (`--user`) picks that user's session, if saved; otherwise the single saved
    /// one is used, and with several none is (which one is meant is not for huddle-chat to guess).
    func initial(requested: String?) throws -> (file: ChatConfigFile?, settings: ChatSettings, note: String?) {
        if case .singleFile = self, let file = file(for: nil) { return (file, try file.load(), nil) }
        if let requested {
            let name = requested.lowercased()
            guard let file = file(for: name) else { throw ChatConfigError("--user: \(requested) is not a username") }
            return (file, try file.load(), nil)
        }
        let saved = savedUsers()
        if saved.count == 1, let file = file(for: saved[0]) {
            // Someone else at this machine, in another terminal: not them.
            guard !isInUse(saved[0]) else {
                return (nil, ChatSettings(), "[session] \(saved[0]) is signed in in another huddle-chat; start with --user \(saved[0]) to share that session")
            }
            return (file, try file.load(), nil)
        }
        if saved.isEmpty { return (nil, ChatSettings(), nil) }
        return (nil, ChatSettings(), "[session] sessions saved for this server: \(saved.joined(separator: ", ")); start with --user NAME to resume one")
    }

    /// Marks `username`'s session as open in this process until it exits or `release` (an
    /// advisory lock on `USER.lock`, which the kernel drops with the process); -1 when there
    /// is nothing to mark (a single-file store) or it cannot be.
    func claim(_ username: String) -> Int32 {
        guard case .perUser(let directory) = self, Self.isSafeFileName(username) else { return -1 }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let fd = open(directory + "/" + username + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return -1 }
        // Shared: two terminals of one user may both have it open. Blocking only while an
        // `isInUse` probe holds it, for an instant.
        guard flock(fd, LOCK_SH) == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    func release(_ claim: Int32) {
        if claim >= 0 { close(claim) }
    }

    /// Whether another huddle-chat has `username`'s session open.
    func isInUse(_ username: String) -> Bool {
        guard case .perUser(let directory) = self else { return false }
        let fd = open(directory + "/" + username + ".lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) != 0
    }

    /// Usernames are `a-z 0-9 _` (protocol.md); anything else never names a file.
    static func isSafeFileName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 32
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_")
            }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
