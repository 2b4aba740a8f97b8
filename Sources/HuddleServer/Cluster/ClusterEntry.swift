import HuddleCore
import HuddleCrypto
import HuddleRedis

/// One entry of the shared log: the commands one node's turn made, at one position (the entry's
/// stream ID is `position-0`). Fields: `w` the writer (node name and boot nonce), `t` the
/// writer's turn number, `c` the commands, each as the write-ahead log records it (its length,
/// 4 bytes little-endian, then the record: one format for both logs), `d` the SHA-256 of `c`,
/// and `a` (absent in entries of older versions, and when the writer did not know it) the
/// identity of the entry it was appended on: `<turn> <writer>` of the entry at `position - 1`.
/// A node that applied a different entry there (one the log lost in a failover) sees it differ.
struct ClusterEntry: Equatable {
    /// Which entry this is, whatever its position: its writer and the writer's turn.
    struct Identity: Equatable, CustomStringConvertible {
        var writer: String
        var turn: UInt64

        var description: String { "\(turn) \(writer)" }

        init(writer: String, turn: UInt64) {
            self.writer = writer
            self.turn = turn
        }

        init?(_ text: String) {
            guard let space = text.firstIndex(of: " "), let turn = UInt64(text[..<space]) else { return nil }
            self.init(writer: String(text[text.index(after: space)...]), turn: turn)
        }

        /// The fields that name it in the entry itself (`appendAt`'s `expectingTop`).
        var fields: [RedisStreamEntry.Field] { [RedisStreamEntry.Field("w", Array(writer.utf8)), RedisStreamEntry.Field("t", Array("\(turn)".utf8))] }
    }

    var position: UInt64
    var writer: String
    var turn: UInt64
    var commands: [CoreCommand]
    /// The entry at `position - 1` when this one was appended, if its writer knew it.
    var after: Identity?

    var identity: Identity { Identity(writer: writer, turn: turn) }

    var fields: [RedisStreamEntry.Field] {
        let encoded = Self.encode(commands)
        var fields = identity.fields + [RedisStreamEntry.Field("c", encoded), RedisStreamEntry.Field("d", Crypto.sha256(encoded))]
        if let after { fields.append(RedisStreamEntry.Field("a", Array(after.description.utf8))) }
        return fields
    }

    init(position: UInt64, writer: String, turn: UInt64, commands: [CoreCommand], after: Identity? = nil) {
        self.position = position
        self.writer = writer
        self.turn = turn
        self.commands = commands
        self.after = after
    }

    /// Reads a stream entry; a damaged one (digest mismatch, unknown record) is an error naming
    /// its position: a node never applies part of an entry.
    init(_ entry: RedisStreamEntry) throws(ClusterEntryError) {
        let position = entry.id.milliseconds
        guard entry.id.sequence == 0, let writer = entry["w"].map({ String(decoding: $0, as: UTF8.self) }),
              let turn = entry["t"].flatMap({ UInt64(String(decoding: $0, as: UTF8.self)) }),
              let encoded = entry["c"], let digest = entry["d"]
        else { throw ClusterEntryError(position: position, reason: "not an entry of this format (fields \(entry.fields.map(\.name)))") }
        guard Crypto.sha256(encoded) == digest else { throw ClusterEntryError(position: position, reason: "its digest does not match its commands") }
        var after: Identity?
        if let named = entry["a"] {
            guard let identity = Identity(String(decoding: named, as: UTF8.self)) else {
                throw ClusterEntryError(position: position, reason: "its `a` field names no entry")
            }
            after = identity
        }
        self.init(position: position, writer: writer, turn: turn, commands: try Self.decode(encoded, position: position), after: after)
    }

    private static func encode(_ commands: [CoreCommand]) -> [UInt8] {
        var bytes: [UInt8] = []
        for command in commands {
            let record = command.logRecord
            let length = UInt32(record.count)
            bytes += [UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 24)]
            bytes += record
        }
        return bytes
    }

    private static func decode(_ bytes: [UInt8], position: UInt64) throws(ClusterEntryError) -> [CoreCommand] {
        var commands: [CoreCommand] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw ClusterEntryError(position: position, reason: "a command's length is cut off") }
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            offset += 4
            guard bytes.count - offset >= length else { throw ClusterEntryError(position: position, reason: "a command is cut off") }
            do {
                commands.append(try CoreCommand(logRecord: Array(bytes[offset..<offset + length])))
            } catch {
                throw ClusterEntryError(position: position, reason: "a command this version does not understand: \(error)")
            }
            offset += length
        }
        return commands
    }
}

struct ClusterEntryError: Error, CustomStringConvertible {
    var position: UInt64
    var reason: String
    var description: String { "log entry \(position): \(reason)" }
}
