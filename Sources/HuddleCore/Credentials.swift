/// A user's password verifier: PBKDF2-HMAC-SHA256 output, computed by the server on a worker
/// thread. The core stores and hands it back; it never hashes anything itself.
public struct Credentials: Sendable, Equatable {
    public var salt: [UInt8]
    public var hash: [UInt8]
    public var iterations: Int

    public init(salt: [UInt8], hash: [UInt8], iterations: Int) {
        self.salt = salt
        self.hash = hash
        self.iterations = iterations
    }
}
