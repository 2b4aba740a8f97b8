import HuddleCore
import HuddleCrypto
import HuddleRedis

/// One entry of the shared log: the commands one node's turn made, at one position (the entry's
/// stream ID is `position-0`). Fields: `w` the writer (node name and boot nonce), `t` the
/// writer's turn number, `c` the commands, each as the write-ahead log records it (its length,
/// 4 bytes little-endian, then the record: one format for both logs), `d` the SHA-256 of `c`.
struct ClusterEntry: Equatable {
    var position: UInt64
    var writer: String
    var turn: UInt64
    var commands: [CoreCommand]

    var fields: [RedisStreamEntry.Field] {
        let encoded = Self.encode(commands)
        return [
            RedisStreamEntry.Field("w", Array(writer.utf8)),
            RedisStreamEntry.Field("t", Array("\(turn)".utf8)),
            RedisStreamEntry.Field("c", encoded),
            RedisStreamEntry.Field("d", Crypto.sha256(encoded)),
        ]
    }

    init(position: UInt64, writer: String, turn: UInt64, commands: [CoreCommand]) {
        self.position = position
        self.writer = writer
        self.turn = turn
        self.commands = commands
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
        self.init(position: position, writer: writer, turn: turn, commands: try Self.decode(encoded, position: position))
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
