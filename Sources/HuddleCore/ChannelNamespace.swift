/// The part of a channel name before the colon; it decides who may read and write the channel
/// and how much history it keeps (protocol.md, "Channels").
public enum ChannelNamespace: String, Sendable, Hashable, CaseIterable, Codable {
    case inbox
    case chat
    case loc
    case room

    /// The namespace a channel name starts with, without validating the rest of the name.
    init?(prefixOf channel: String) {
        guard let colon = channel.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        self.init(name: channel.utf8[..<colon])
    }

    /// The namespace spelled by `name` (the bytes before the colon): compared byte by byte,
    /// every publication's channel is parsed, and `init(rawValue:)` hashes a new `String`.
    init?(name: Substring.UTF8View) {
        if name.elementsEqual("room".utf8) {
            self = .room
        } else if name.elementsEqual("chat".utf8) {
            self = .chat
        } else if name.elementsEqual("inbox".utf8) {
            self = .inbox
        } else if name.elementsEqual("loc".utf8) {
            self = .loc
        } else {
            return nil
        }
    }
}
