/// The core's answer to a photo request of the HTTP photo endpoints (protocol.md, "Photos"),
/// which authenticate with a session token rather than a signed-in connection.
public enum PhotoAccess: Sendable, Equatable {
    /// The token is good (it stands for `user`): the server may read the body and store the
    /// bytes.
    case uploadAllowed(user: Username)
    /// The bytes are stored and the caller owns them; `newlyOwned` is false when the caller had
    /// uploaded them before (whether anyone else had is never told).
    case stored(hash: String, size: Int, newlyOwned: Bool)
    /// The caller owns the photo: the server may send the file.
    case readAllowed(hash: String, size: Int)
    /// `invalid_token`, `token_expired`, `photo_not_found`, `too_many_photos`, `photo_quota_exceeded` or `bad_request`.
    case refused(CoreError)
}
