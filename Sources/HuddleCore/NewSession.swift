/// A session the server is about to hand out: the SHA-256 of the token it generated (the core
/// never sees the token itself), when it expires, and the client's device label.
public struct NewSession: Sendable, Equatable {
    public var tokenHash: [UInt8]
    /// Milliseconds since the Unix epoch.
    public var expiresAt: Int64
    public var device: String?

    public init(tokenHash: [UInt8], expiresAt: Int64, device: String? = nil) {
        self.tokenHash = tokenHash
        self.expiresAt = expiresAt
        self.device = device
    }
}
