import HuddleCore
import HuddleCrypto
import HuddleIO

/// Checks ID tokens and app-backend tokens (protocol.md, "Identities") on a verifier thread,
/// never on a loop or the core: the signature with the issuer's key, then `iss`, `aud`, the
/// times and the client's nonce. What passes becomes the `VerifiedIdentity` the core decides on;
/// what fails becomes the precise refusal that is the reply.
final class IdentityVerifier: Sendable {
    let settings: IdentitySettings
    private let issuers: [String: (settings: IdentitySettings.Issuer, keys: IssuerKeys)]
    let metrics: IdentityMetrics

    /// `download` fetches a JWKS URL (with the issuer's CA file, if any); files are read here.
    init(
        settings: IdentitySettings, metrics: IdentityMetrics,
        download: @escaping @Sendable (String, String?) -> Result<[UInt8], IdentitySettingsError>
    ) {
        self.settings = settings
        self.metrics = metrics
        var issuers: [String: (IdentitySettings.Issuer, IssuerKeys)] = [:]
        for issuer in settings.issuers {
            let keys = IssuerKeys(
                issuer: issuer.issuer, source: issuer.keys, refreshIntervalMilliseconds: settings.keyRefreshIntervalMilliseconds, metrics: metrics,
                fetch: Self.fetcher { url in download(url, issuer.caFile) })
            issuers[issuer.issuer] = (issuer, keys)
        }
        self.issuers = issuers
    }

    /// An OpenID Connect ID token. `nonce`: the one the client put in its authentication
    /// request; the token must carry the same.
    func verifyIDToken(_ token: String, nonce: String?, now: Int64) -> Result<VerifiedIdentity, CoreError> {
        let parsed: JSONWebToken
        let claims: JWTClaims
        do {
            parsed = try JSONWebToken(compact: token, maximumBytes: settings.maxTokenBytes)
            claims = try JWTClaims(parsed.claims)
        } catch {
            return .failure(Self.refusal(error))
        }
        guard let issuerName = claims.issuer, let issuer = issuers[issuerName] else {
            return .failure(CoreError(.unknownIssuer, "this server does not accept ID tokens from \(claims.issuer.map { "\"\($0.prefix(200))\"" } ?? "a token without iss")"))
        }
        let key: JSONWebKey
        switch issuer.keys.key(for: parsed.keyID, now: now) {
        case .success(let found): key = found
        case .failure(let error): return .failure(error)
        }
        do { try parsed.verify(with: key) } catch { return .failure(Self.refusal(error)) }
        guard claims.audiences.contains(where: issuer.settings.audiences.contains) else {
            return .failure(CoreError(.wrongAudience, "the token is for another client (aud), not this app"))
        }
        guard claims.expiresAt != nil, claims.issuedAt != nil else {
            return .failure(CoreError(.invalidIdentityToken, "an ID token carries exp and iat"))
        }
        if let error = timeRefusal(claims, now: now) { return .failure(error) }
        if let nonce, claims.nonce != nonce {
            return .failure(CoreError(.invalidIdentityToken, "the token's nonce is not the one this client sent"))
        }
        return identity(issuerName, claims)
    }

    /// An app backend's token naming the user in `sub`.
    func verifyAppToken(_ token: String, now: Int64) -> Result<VerifiedIdentity, CoreError> {
        guard let app = settings.appTokens else {
            return .failure(CoreError(.unknownIssuer, "this server accepts no app tokens"))
        }
        let claims: JWTClaims
        do {
            let parsed = try JSONWebToken(compact: token, maximumBytes: settings.maxTokenBytes)
            claims = try JWTClaims(parsed.claims)
            try parsed.verify(with: app.key)
        } catch {
            return .failure(Self.refusal(error))
        }
        if let issuer = app.issuer, claims.issuer != issuer {
            return .failure(CoreError(.unknownIssuer, "the app token's iss is not \(issuer)"))
        }
        if let audience = app.audience, !claims.audiences.contains(audience) {
            return .failure(CoreError(.wrongAudience, "the app token is not for this server (aud)"))
        }
        if let error = timeRefusal(claims, now: now) { return .failure(error) }
        return identity(app.identityIssuer, claims)
    }

    private func timeRefusal(_ claims: JWTClaims, now: Int64) -> CoreError? {
        let skew = settings.clockSkewMilliseconds
        if let expiresAt = claims.expiresAt, now > expiresAt.milliseconds &+ skew {
            return CoreError(.identityTokenExpired, "the token expired (exp); get a new one")
        }
        if let notBefore = claims.notBefore, now &+ skew < notBefore.milliseconds {
            return CoreError(.identityTokenExpired, "the token is not valid yet (nbf)")
        }
        if let issuedAt = claims.issuedAt, now &+ skew < issuedAt.milliseconds {
            return CoreError(.identityTokenExpired, "the token was issued in the future (iat): check the clocks")
        }
        return nil
    }

    private func identity(_ issuer: String, _ claims: JWTClaims) -> Result<VerifiedIdentity, CoreError> {
        guard let subject = claims.subject, !subject.isEmpty, subject.utf8.count <= 255 else {
            return .failure(CoreError(.invalidIdentityToken, "the token's sub is missing or longer than 255 bytes"))
        }
        // Spent nonces are kept until their token expires: each must be small.
        if let nonce = claims.nonce, nonce.utf8.count > Self.maxNonceBytes {
            return .failure(CoreError(.invalidIdentityToken, "the token's nonce is longer than \(Self.maxNonceBytes) bytes"))
        }
        let email = claims.emailVerified ? claims.email?.lowercased() : nil
        let proposed = claims.preferredUsername ?? email.map { String($0.prefix { $0 != "@" }) }
        return .success(VerifiedIdentity(
            issuer: issuer, subject: subject, email: email, proposedUsername: proposed.map(Self.usernameProposal), nonce: claims.nonce,
            expiresAt: claims.expiresAt?.milliseconds ?? Int64.max, issuedAt: claims.issuedAt?.milliseconds))
    }

    static let maxNonceBytes = 256

    /// A username made of what a token offers: lowercased, only `a-z 0-9 _`, 32 characters at
    /// most; the core judges whether it is valid and free.
    static func usernameProposal(_ text: String) -> String {
        let kept = text.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        return String(String.UnicodeScalarView(kept.prefix(32)))
    }

    static func refusal(_ error: JWTError) -> CoreError {
        CoreError(.invalidIdentityToken, "\(error)")
    }

    /// Where the keys are read from: a file, or a URL (`download`).
    static func fetcher(download: @escaping @Sendable (String) -> Result<[UInt8], IdentitySettingsError>)
        -> @Sendable (String) -> Result<[UInt8], IdentitySettingsError>
    {
        { source in
            if source.hasPrefix("http://") || source.hasPrefix("https://") { return download(source) }
            guard let bytes = WholeFile.read(source, limit: JSONWebKeySet.maximumBytes) else {
                return .failure(IdentitySettingsError("cannot read \(source)"))
            }
            return .success(bytes)
        }
    }
}

extension Int64 {
    /// JWT seconds as the server's milliseconds, saturating.
    fileprivate var milliseconds: Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: 1000)
        return overflow ? (self < 0 ? Int64.min : Int64.max) : product
    }
}
