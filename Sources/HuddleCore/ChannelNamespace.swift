/// The part of a channel name before the colon; it decides who may read and write the channel
/// and how much history it keeps (protocol.md, "Channels").
public enum ChannelNamespace: String, Sendable, Hashable, CaseIterable, Codable {
    case inbox
    case chat
    case loc
    case room

    /// The namespace a channel name starts with, without validating the rest of the name.
    init?(prefixOf channel: String) {
        var channel = channel  // `withUTF8` needs a variable; a native string lends its storage
        guard let namespace = channel.withUTF8({ utf8 in utf8.firstIndex(of: UInt8(ascii: ":")).flatMap { Self(name: utf8[..<$0]) } })
        else { return nil }
        self = namespace
    }

    /// The namespace spelled by `name` (the bytes before the colon): compared byte by byte,
    /// every publication's channel is parsed, and `init(rawValue:)` hashes a new `String`.
    init?(name: Slice<UnsafeBufferPointer<UInt8>>) {
        func spells(_ word: StaticString) -> Bool {
            guard name.count == word.utf8CodeUnitCount else { return false }
            var letter = word.utf8Start
            for byte in name {
                guard byte == letter.pointee else { return false }
                letter += 1
            }
            return true
        }
        if spells("room") {
            self = .room
        } else if spells("chat") {
            self = .chat
        } else if spells("inbox") {
            self = .inbox
        } else if spells("loc") {
            self = .loc
        } else {
            return nil
        }
    }
}
