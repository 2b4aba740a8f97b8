/// What one connection agreed for permessage-deflate (RFC 7692 §7.1): for each direction, whether
/// the sender resets its compression context after every message and the largest LZ77 window it
/// may use. "Server" and "client" name who *sends* the data the parameter constrains.
public struct PerMessageDeflateParameters: Sendable, Equatable {
    /// The server compresses every message on its own (no back-references into earlier messages).
    public var serverNoContextTakeover: Bool
    /// The client compresses every message on its own.
    public var clientNoContextTakeover: Bool
    /// log2 of the server's LZ77 window, 8...15 (15 when not negotiated).
    public var serverMaxWindowBits: Int
    /// log2 of the client's LZ77 window, 8...15 (15 when not negotiated).
    public var clientMaxWindowBits: Int

    public init(
        serverNoContextTakeover: Bool = false,
        clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int = 15,
        clientMaxWindowBits: Int = 15
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// The rules for the messages `role` sends (what its deflater must follow).
    public func sending(as role: WebSocketRole) -> (windowBits: Int, noContextTakeover: Bool) {
        switch role {
        case .server: return (serverMaxWindowBits, serverNoContextTakeover)
        case .client: return (clientMaxWindowBits, clientNoContextTakeover)
        }
    }

    /// The rules the peer of `role` follows (what `role`'s inflater must accept).
    public func receiving(as role: WebSocketRole) -> (windowBits: Int, noContextTakeover: Bool) {
        switch role {
        case .server: return sending(as: .client)
        case .client: return sending(as: .server)
        }
    }
}
