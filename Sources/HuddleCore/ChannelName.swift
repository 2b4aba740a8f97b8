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
        // Read in place: walking the String's UTF-8 and Substring views cost ~2k instructions
        // a publish on the core thread. `withUTF8` needs a variable; a native string lends
        // its own storage.
        var bytes = text
        let kind = bytes.withUTF8 { Self.kind(spelledBy: $0) }
        self.text = text
        self.kind = try kind.get()
    }

    private static func kind(spelledBy utf8: UnsafeBufferPointer<UInt8>) -> Result<Kind, CoreError> {
        guard utf8.count <= maxBytes else {
            return .failure(CoreError(.invalidChannel, "a channel name is at most \(maxBytes) bytes"))
        }
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), let namespace = ChannelNamespace(name: utf8[..<colon]) else {
            return .failure(CoreError(.invalidChannel, "a channel name starts with inbox:, chat:, loc: or room:"))
        }
        let rest = utf8[(colon + 1)...]
        switch namespace {
        case .inbox, .loc:
            guard UsernameRules.isCanonical(rest) else {
                return .failure(CoreError(.invalidChannel, "\(namespace.rawValue):USER needs a lowercase username"))
            }
            let owner = String(decoding: rest, as: UTF8.self)
            return .success(namespace == .inbox ? .inbox(owner: owner) : .loc(owner: owner))
        case .chat:
            // Two members split at the first '~' (a second one fails the username rules).
            guard let tilde = rest.firstIndex(of: UInt8(ascii: "~")),
                  case let first = rest[..<tilde], case let second = rest[(tilde + 1)...],
                  UsernameRules.isCanonical(first), UsernameRules.isCanonical(second), first.lexicographicallyPrecedes(second)
            else {
                return .failure(CoreError(.invalidChannel, "chat:A~B needs two different lowercase usernames in ascending order"))
            }
            return .success(.chat(String(decoding: first, as: UTF8.self), String(decoding: second, as: UTF8.self)))
        case .room:
            guard roomNameLengths.contains(rest.count), rest.allSatisfy(isRoomNameByte) else {
                return .failure(CoreError(.invalidChannel, "room:NAME needs 1–64 characters from a-z A-Z 0-9 _ - ."))
            }
            return .success(.room(String(decoding: rest, as: UTF8.self)))
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
