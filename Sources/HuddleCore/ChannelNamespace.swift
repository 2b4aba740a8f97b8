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
        self.init(rawValue: String(channel[..<colon]))
    }
}
