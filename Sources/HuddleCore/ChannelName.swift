/// A channel name checked against protocol.md's rules ("Channels"):
/// `inbox:USER`, `chat:A~B` (A < B in byte order), `loc:USER`, `room:NAME`; at most 128 bytes.
///
/// Usernames inside a name must be canonical (lowercase): `inbox:Alice` is invalid rather than
/// a second spelling of `inbox:alice`, so one channel has exactly one name.
public struct ChannelName: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case inbox(owner: Username)
        case chat(Username, Username)
        case loc(owner: Username)
        case room(String)
    }

    public static let maxBytes = 128
    public static let roomNameLengths = 1...64

    public let text: String
    public let kind: Kind

    public var namespace: ChannelNamespace {
        switch kind {
        case .inbox: .inbox
        case .chat: .chat
        case .loc: .loc
        case .room: .room
        }
    }

    public init(parsing text: String) throws(CoreError) {
        let utf8 = text.utf8
        guard utf8.count <= Self.maxBytes else {
            throw CoreError(.invalidChannel, "a channel name is at most \(Self.maxBytes) bytes")
        }
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
              let namespace = ChannelNamespace(name: text.utf8[..<colon])
        else {
            throw CoreError(.invalidChannel, "a channel name starts with inbox:, chat:, loc: or room:")
        }
        let rest = text[text.utf8.index(after: colon)...]
        self.text = text
        switch namespace {
        case .inbox, .loc:
            guard UsernameRules.isCanonical(rest.utf8) else {
                throw CoreError(.invalidChannel, "\(namespace.rawValue):USER needs a lowercase username")
            }
            kind = namespace == .inbox ? .inbox(owner: String(rest)) : .loc(owner: String(rest))
        case .chat:
            let members = rest.utf8.split(separator: UInt8(ascii: "~"), omittingEmptySubsequences: false)
            guard members.count == 2, UsernameRules.isCanonical(members[0]), UsernameRules.isCanonical(members[1]),
                  members[0].lexicographicallyPrecedes(members[1])
            else {
                throw CoreError(.invalidChannel, "chat:A~B needs two different lowercase usernames in ascending order")
            }
            kind = .chat(String(Substring(members[0])), String(Substring(members[1])))
        case .room:
            guard Self.roomNameLengths.contains(rest.utf8.count), rest.utf8.allSatisfy(Self.isRoomNameByte) else {
                throw CoreError(.invalidChannel, "room:NAME needs 1–64 characters from a-z A-Z 0-9 _ - .")
            }
            kind = .room(String(rest))
        }
    }

    private static func isRoomNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }
}
