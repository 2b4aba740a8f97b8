import HuddleCrypto

/// Sign-in with identity providers and app-backend tokens (`--oidc-issuer`, `--app-token-*`;
/// README.md "Identity providers"; protocol.md "Identities"). Empty: both are off, and their ops
/// are refused `unknown_issuer`.
public struct IdentitySettings: Sendable {
    /// One OpenID Connect provider the operator trusts: its `iss`, the client ids its tokens
    /// must be for (`aud`), and where its signing keys (a JWKS) are.
    public struct Issuer: Sendable, Equatable {
        public var issuer: String
        public var audiences: [String]
        /// A JWKS file path, or an http(s) URL.
        public var keys: String
        /// PEM CA certificates an https JWKS URL must chain to, instead of the system store.
        public var caFile: String?

        public init(issuer: String, audiences: [String], keys: String, caFile: String? = nil) {
            self.issuer = issuer
            self.audiences = audiences
            self.keys = keys
            self.caFile = caFile
        }

        public var keysAreURL: Bool { keys.hasPrefix("http://") || keys.hasPrefix("https://") }

        /// `--oidc-issuer 'issuer=URL;audience=ID[,ID…];jwks=FILE-OR-URL[;ca=FILE]'`.
        public init(spec: String) throws(IdentitySettingsError) {
            var fields: [String: String] = [:]
            for part in spec.split(separator: ";", omittingEmptySubsequences: true) {
                guard let equals = part.firstIndex(of: "=") else { throw IdentitySettingsError("\"\(part)\" is not key=value") }
                let key = part[..<equals].trimmingSpaces, value = part[part.index(after: equals)...].trimmingSpaces
                guard ["issuer", "audience", "jwks", "ca"].contains(key) else { throw IdentitySettingsError("unknown key \"\(key)\" (issuer, audience, jwks, ca)") }
                guard fields[key] == nil else { throw IdentitySettingsError("\(key) is given twice") }
                fields[key] = value
            }
            guard let issuer = fields["issuer"], !issuer.isEmpty else { throw IdentitySettingsError("issuer= is required") }
            let audiences = (fields["audience"] ?? "").split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
            guard !audiences.isEmpty else { throw IdentitySettingsError("audience= (the client id or ids, comma-separated) is required") }
            guard let keys = fields["jwks"], !keys.isEmpty else { throw IdentitySettingsError("jwks= (a JWKS file or http(s) URL) is required") }
            let caFile = fields["ca"]
            if caFile != nil, !keys.hasPrefix("https://") { throw IdentitySettingsError("ca= is for an https:// jwks URL") }
            self.init(issuer: issuer, audiences: audiences, keys: keys, caFile: caFile)
        }
    }

    /// How app-backend tokens are checked: an HS256 secret or an RS256/ES256 public key, and
    /// optionally the `iss` and `aud` they must carry.
    public struct AppTokens: Sendable {
        public var key: JSONWebKey
        public var issuer: String?
        public var audience: String?

        public init(key: JSONWebKey, issuer: String? = nil, audience: String? = nil) {
            self.key = key
            self.issuer = issuer
            self.audience = audience
        }

        /// The issuer app identities are filed under.
        var identityIssuer: String { issuer ?? "app" }
    }

    public var issuers: [Issuer] = []
    public var appTokens: AppTokens?
    /// Longer tokens are refused before any parsing (an ID token is 1–2 KiB).
    public var maxTokenBytes = 8 * 1024
    /// Clocks differ: `exp`, `nbf` and `iat` are judged this leniently.
    public var clockSkewMilliseconds: Int64 = 60_000
    /// An unknown `kid` reloads the issuer's keys at most this often, so a flood of made-up
    /// key ids cannot make the server hammer the issuer.
    public var keyRefreshIntervalMilliseconds: Int64 = 30_000
    /// Verifications queued for the verifier threads; beyond it sign-ins are refused `busy`.
    public var maxPendingVerifications = 1024
    /// One JWKS download may take this long.
    public var keyFetchTimeoutMilliseconds: Int64 = 10_000

    public init() {}

    public var isEnabled: Bool { !issuers.isEmpty || appTokens != nil }
}

public struct IdentitySettingsError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
