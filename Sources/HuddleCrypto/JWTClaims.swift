import HuddleProtocol

/// The registered claims (RFC 7519 §4.1) and the OpenID Connect ones (Core §2, §5.1) a sign-in
/// reads, typed. Times are seconds since the Unix epoch, as JWTs write them.
public struct JWTClaims: Sendable, Equatable {
    public var issuer: String?
    public var subject: String?
    /// `aud` is a string or an array of strings.
    public var audiences: [String]
    public var expiresAt: Int64?
    public var issuedAt: Int64?
    public var notBefore: Int64?
    public var nonce: String?
    public var email: String?
    /// Apple writes `email_verified` as the string "true"; Google as a boolean.
    public var emailVerified: Bool
    public var preferredUsername: String?

    public init(_ claims: JSONValue) throws(JWTError) {
        issuer = try Self.string(claims, "iss")
        subject = try Self.string(claims, "sub")
        switch claims["aud"] {
        case nil: audiences = []
        case .string(let audience)?: audiences = [audience]
        case .array(let values)?:
            audiences = try values.map { value throws(JWTError) in
                guard let audience = value.stringValue else { throw .malformed("\"aud\" holds a non-string") }
                return audience
            }
        default: throw .malformed("\"aud\" is not a string or an array")
        }
        expiresAt = try Self.time(claims, "exp")
        issuedAt = try Self.time(claims, "iat")
        notBefore = try Self.time(claims, "nbf")
        nonce = try Self.string(claims, "nonce")
        email = try Self.string(claims, "email")
        switch claims["email_verified"] {
        case .bool(let verified)?: emailVerified = verified
        case .string(let text)?: emailVerified = text == "true"
        default: emailVerified = false
        }
        preferredUsername = try Self.string(claims, "preferred_username")
    }

    private static func string(_ claims: JSONValue, _ name: String) throws(JWTError) -> String? {
        guard let value = claims[name] else { return nil }
        guard let string = value.stringValue else { throw .malformed("\"\(name)\" is not a string") }
        return string
    }

    /// A NumericDate may carry a fraction (RFC 7519 §2); whole seconds are what matter here.
    private static func time(_ claims: JSONValue, _ name: String) throws(JWTError) -> Int64? {
        guard let value = claims[name] else { return nil }
        if let seconds = value.int64Value { return seconds }
        guard let seconds = value.doubleValue, seconds.isFinite, abs(seconds) < 1e15 else { throw .malformed("\"\(name)\" is not a time") }
        return Int64(seconds.rounded(.down))
    }
}
