import ArgumentParser
import Glibc
import HuddleCrypto
import HuddleIO
import HuddleServer

/// `--oidc-issuer` and the `--app-token-*` flags as the server's identity settings; the key
/// files are read (and judged) here, at start-up, so a bad key is an error before listening.
extension Serve {
    func identitySettings() throws -> IdentitySettings {
        var settings = IdentitySettings()
        guard oidcKeyRefreshInterval >= 0 else { throw ValidationError("--oidc-key-refresh-interval must not be negative") }
        settings.keyRefreshIntervalMilliseconds = Int64(oidcKeyRefreshInterval) * 1000
        for spec in oidcIssuer {
            let issuer: IdentitySettings.Issuer
            do { issuer = try IdentitySettings.Issuer(spec: spec) } catch { throw ValidationError("--oidc-issuer \(spec): \(error.reason)") }
            guard !settings.issuers.contains(where: { $0.issuer == issuer.issuer }) else {
                throw ValidationError("--oidc-issuer: \(issuer.issuer) is given twice")
            }
            if let caFile = issuer.caFile, access(caFile, R_OK) != 0 {
                throw ValidationError("--oidc-issuer \(issuer.issuer): cannot read the CA file \(caFile)")
            }
            if !issuer.keysAreURL {
                guard let bytes = WholeFile.read(issuer.keys, limit: JSONWebKeySet.maximumBytes) else {
                    throw ValidationError("--oidc-issuer \(issuer.issuer): cannot read the JWKS file \(issuer.keys): \(String(cString: strerror(errno)))")
                }
                do { _ = try JSONWebKeySet(json: bytes) } catch { throw ValidationError("--oidc-issuer \(issuer.issuer): \(issuer.keys): \(error)") }
            }
            settings.issuers.append(issuer)
        }
        let secret = try appTokenSecretBytes()
        if secret != nil, appTokenPublicKey != nil {
            throw ValidationError("an app-token secret and --app-token-public-key exclude each other: app tokens have one key")
        }
        let key: JSONWebKey?
        do {
            if let secret {
                key = try JSONWebKey(hmacSecret: secret)
            } else if let path = appTokenPublicKey {
                guard let pem = WholeFile.read(path, limit: 64 * 1024) else {
                    throw ValidationError("--app-token-public-key: cannot read \(path): \(String(cString: strerror(errno)))")
                }
                key = try JSONWebKey(pem: String(decoding: pem, as: UTF8.self))
            } else {
                key = nil
            }
        } catch let error as JWTError {
            throw ValidationError("app tokens: \(error)")
        }
        if let key {
            settings.appTokens = IdentitySettings.AppTokens(key: key, issuer: appTokenIssuer, audience: appTokenAudience)
        } else if appTokenIssuer != nil || appTokenAudience != nil {
            throw ValidationError("--app-token-issuer and --app-token-audience need an app-token secret or --app-token-public-key")
        }
        return settings
    }

    /// The secret's bytes as the file holds them, less a final newline (what `echo` adds).
    private func appTokenSecretBytes() throws -> [UInt8]? {
        if let path = appTokenSecretFile {
            guard appTokenSecret == nil else { throw ValidationError("--app-token-secret and --app-token-secret-file exclude each other") }
            guard var bytes = WholeFile.read(path, limit: 4096) else {
                throw ValidationError("--app-token-secret-file: cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
            return bytes
        }
        return appTokenSecret.map { Array($0.utf8) }
    }
}
