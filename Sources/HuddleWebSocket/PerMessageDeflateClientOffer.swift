/// The permessage-deflate offer a client sends (RFC 7692 §7.1), kept so the server's answer can be
/// checked against it.
public struct PerMessageDeflateClientOffer: Sendable, Equatable {
    /// Offer `client_max_window_bits` (no value): the server may then ask us for a smaller window,
    /// and our deflater honours whatever it picks.
    public var clientMaxWindowBits: Bool
    /// Promise to compress each message on its own (§7.1.1.2: a hint the server may echo).
    public var clientNoContextTakeover: Bool
    /// Ask the server to compress each message on its own, so our inflater keeps nothing between
    /// messages.
    public var serverNoContextTakeover: Bool
    /// Ask the server for a window of at most 2^n bytes, n in 8...15, to bound our inflater's
    /// window. `nil` leaves it to the server.
    public var serverMaxWindowBits: Int?

    public init(
        clientMaxWindowBits: Bool = true,
        clientNoContextTakeover: Bool = false,
        serverNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int? = nil
    ) {
        precondition(serverMaxWindowBits.map { (8...15).contains($0) } ?? true, "server_max_window_bits must be 8...15")
        self.clientMaxWindowBits = clientMaxWindowBits
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverNoContextTakeover = serverNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
    }

    /// The `Sec-WebSocket-Extensions` value to send.
    public var headerValue: String {
        var value = "permessage-deflate"
        if clientNoContextTakeover { value += "; client_no_context_takeover" }
        if serverNoContextTakeover { value += "; server_no_context_takeover" }
        if let serverMaxWindowBits { value += "; server_max_window_bits=\(serverMaxWindowBits)" }
        if clientMaxWindowBits { value += "; client_max_window_bits" }
        return value
    }
}
