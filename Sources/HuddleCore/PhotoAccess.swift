import HuddleProtocol

/// The core's answer to a request of the HTTP photo and export endpoints (protocol.md,
/// "Photos", "Export"), which authenticate with a session token rather than a signed-in
/// connection.
public enum PhotoAccess: Sendable, Equatable {
    /// The token is good (it stands for `user`): the server may read the body and store the
    /// bytes.
    case uploadAllowed(user: Username)
    /// The bytes are stored and the caller owns them; `newlyOwned` is false when the caller had
    /// uploaded them before (whether anyone else had is never told).
    case stored(hash: String, size: Int, newlyOwned: Bool)
    /// The caller owns the photo: the server may send the file.
    case readAllowed(hash: String, size: Int)
    /// The token is good and its user may take an export archive now: `document` is the
    /// archive's `export.json`, exactly what `account_export` returns (its `photos` member
    /// lists the files that follow it).
    case exportAllowed(user: Username, document: JSONValue)
    /// `invalid_token`, `token_expired`, `photo_not_found`, `too_many_photos`, `photo_quota_exceeded`, `exports_limited` or `bad_request`.
    case refused(CoreError)
}
