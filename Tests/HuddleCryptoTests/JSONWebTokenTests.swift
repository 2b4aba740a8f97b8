import HuddleCrypto
import HuddleProtocol
import JWTTestSupport
import Testing

/// JWS verification (RS256, ES256, HS256) against keys made in the test, and every way a token
/// or a key is refused.
@Suite struct JSONWebTokenTests {
    static let rsa = TestSigningKey(.rsa, keyID: "rsa-1")
    static let ec = TestSigningKey(.p256, keyID: "ec-1")
    static let claims = #"{"iss":"https://issuer.test","sub":"subject-1","aud":"app","exp":2000000000,"iat":1700000000}"#
    static let secret = Array("an app backend's shared secret, 32+ bytes".utf8)

    static func key(_ signer: TestSigningKey) throws -> JSONWebKey {
        try JSONWebKey(jwk: JSONParser.parse(Array(signer.jwk.utf8), maxDepth: 4))
    }

    static func verify(_ token: String, with key: JSONWebKey) throws(JWTError) {
        try JSONWebToken(compact: token, maximumBytes: 8192).verify(with: key)
    }

    @Test func rs256AndES256VerifyWithTheirJWKs() throws {
        for signer in [Self.rsa, Self.ec] {
            let token = signer.sign(Self.claims)
            let parsed = try JSONWebToken(compact: token, maximumBytes: 8192)
            #expect(parsed.keyID == signer.keyID)
            #expect(parsed.algorithm.rawValue == signer.algorithm)
            try parsed.verify(with: Self.key(signer))
            let claims = try JWTClaims(parsed.claims)
            #expect(claims.subject == "subject-1")
            #expect(claims.audiences == ["app"])
            #expect(claims.expiresAt == 2_000_000_000)
        }
    }

    @Test func pemPublicKeysVerifyToo() throws {
        for signer in [Self.rsa, Self.ec] {
            try Self.verify(signer.sign(Self.claims), with: JSONWebKey(pem: signer.publicKeyPEM))
        }
    }

    @Test func hs256VerifiesWithItsSecretOnly() throws {
        let token = TestSigningKey.hs256(Self.claims, secret: Self.secret)
        try Self.verify(token, with: JSONWebKey(hmacSecret: Self.secret))
        var other = Self.secret
        other[0] ^= 1
        #expect(throws: JWTError.badSignature) { try Self.verify(token, with: JSONWebKey(hmacSecret: other)) }
        #expect(throws: JWTError.self) { try JSONWebKey(hmacSecret: Array("short".utf8)) }
    }

    @Test func anotherKeyOfTheSameKindIsRefused() throws {
        let otherRSA = TestSigningKey(.rsa, keyID: "rsa-1")
        let otherEC = TestSigningKey(.p256, keyID: "ec-1")
        #expect(throws: JWTError.badSignature) { try Self.verify(Self.rsa.sign(Self.claims), with: Self.key(otherRSA)) }
        #expect(throws: JWTError.badSignature) { try Self.verify(Self.ec.sign(Self.claims), with: Self.key(otherEC)) }
    }

    @Test func aTamperedPayloadIsRefused() throws {
        for signer in [Self.rsa, Self.ec] {
            let parts = signer.sign(Self.claims).split(separator: ".").map(String.init)
            let forged = Crypto.base64URL(Array(Self.claims.replacing("subject-1", with: "subject-2").utf8))
            #expect(throws: JWTError.badSignature) { try Self.verify([parts[0], forged, parts[2]].joined(separator: "."), with: Self.key(signer)) }
        }
    }

    @Test func algNoneAndUnknownAlgorithmsAreRefused() throws {
        let header = Crypto.base64URL(Array(#"{"alg":"none"}"#.utf8))
        let unsigned = header + "." + Crypto.base64URL(Array(Self.claims.utf8)) + "."
        #expect(throws: JWTError.unsupportedAlgorithm("none")) { try JSONWebToken(compact: unsigned, maximumBytes: 8192) }
        let rs512 = Self.rsa.sign(Self.claims, algorithm: "RS512")
        #expect(throws: JWTError.unsupportedAlgorithm("RS512")) { try JSONWebToken(compact: rs512, maximumBytes: 8192) }
    }

    /// The classic confusion: a token signed with HMAC using the RSA public key's bytes as the
    /// secret must not verify against that RSA key, nor an ES256 token against an RSA key.
    @Test func anAlgorithmNotTheKeysIsRefused() throws {
        let rsaKey = try Self.key(Self.rsa)
        let confused = TestSigningKey.hs256(Self.claims, secret: Array(Self.rsa.publicKeyPEM.utf8), keyID: "rsa-1")
        #expect(throws: JWTError.algorithmMismatch(algorithm: "HS256", key: "an RSA key, RS256")) { try Self.verify(confused, with: rsaKey) }
        #expect(throws: JWTError.self) { try Self.verify(Self.ec.sign(Self.claims), with: rsaKey) }
        #expect(throws: JWTError.self) { try Self.verify(Self.rsa.sign(Self.claims), with: JSONWebKey(hmacSecret: Self.secret)) }
    }

    @Test func malformedTokensAreRefused() throws {
        let good = Self.rsa.sign(Self.claims)
        let parts = good.split(separator: ".").map(String.init)
        for token in [
            "", "a.b", parts[0] + "." + parts[1], good + ".x",
            parts[0] + "=." + parts[1] + "." + parts[2],  // padding
            parts[0] + ".+/." + parts[2],  // standard alphabet
            "e." + parts[1] + "." + parts[2],  // 4n+1 length
            Crypto.base64URL(Array("[1]".utf8)) + "." + parts[1] + "." + parts[2],  // header not an object
            parts[0] + "." + Crypto.base64URL(Array("not json".utf8)) + "." + parts[2],
        ] {
            #expect(throws: JWTError.self, "\(token.prefix(40))") { try JSONWebToken(compact: token, maximumBytes: 8192) }
        }
        #expect(throws: JWTError.oversized(limit: 100)) { try JSONWebToken(compact: good, maximumBytes: 100) }
        let crit = Crypto.base64URL(Array(#"{"alg":"RS256","crit":["exp"]}"#.utf8))
        #expect(throws: JWTError.self) { try JSONWebToken(compact: crit + "." + parts[1] + "." + parts[2], maximumBytes: 8192) }
    }

    @Test func base64URLDecodingIsStrictAndRoundTrips() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Crypto.base64URLDecode(Crypto.base64URL(bytes)) == bytes)
        }
        #expect(Crypto.base64URLDecode("QQ") == [0x41])
        #expect(Crypto.base64URLDecode("QR") == nil)  // non-zero leftover bits
        #expect(Crypto.base64URLDecode("QQ==") == nil)
        #expect(Crypto.base64URLDecode("Q") == nil)
        #expect(Crypto.base64URLDecode("a b") == nil)
    }

    @Test func aJWKSFindsKeysByKeyIDAndSkipsUnusableOnes() throws {
        let document = #"{"keys":[\#(Self.rsa.jwk),{"kty":"OKP","crv":"Ed25519","x":"AA"},\#(Self.ec.jwk),{"kty":"RSA","use":"enc","n":"AQAB","e":"AQAB"}]}"#
        let set = try JSONWebKeySet(json: Array(document.utf8))
        #expect(set.keyIDs == ["rsa-1", "ec-1"])
        try Self.verify(Self.ec.sign(Self.claims), with: #require(set.key(for: "ec-1")))
        #expect(set.key(for: "missing") == nil)
        #expect(set.key(for: nil) == nil)
        #expect(throws: JWTError.self) { try JSONWebKeySet(json: Array(#"{"keys":[]}"#.utf8)) }
        #expect(throws: JWTError.self) { try JSONWebKeySet(json: Array("[]".utf8)) }
    }

    @Test func badJWKsAreRefused() throws {
        for jwk in [
            #"{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}"#,
            #"{"kty":"EC","crv":"P-256","x":"\#(Crypto.base64URL([UInt8](repeating: 1, count: 32)))","y":"\#(Crypto.base64URL([UInt8](repeating: 2, count: 32)))"}"#,
            #"{"kty":"RSA","n":"AQAB","e":"AQAB"}"#,  // far below 2048 bits
            #"{"kty":"RSA","e":"AQAB"}"#,
            Self.rsa.jwk.replacing(#""alg":"RS256""#, with: #""alg":"HS256""#),
        ] {
            #expect(throws: JWTError.self, "\(jwk)") { try JSONWebKey(jwk: JSONParser.parse(Array(jwk.utf8), maxDepth: 4)) }
        }
        #expect(throws: JWTError.self) { try JSONWebKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n") }
    }

    @Test func claimsReadAppleStyleEmailVerifiedAndAudienceArrays() throws {
        let claims = try JWTClaims(JSONParser.parse(Array(#"{"aud":["a","b"],"email":"x@y.z","email_verified":"true","exp":1.7e9}"#.utf8), maxDepth: 4))
        #expect(claims.audiences == ["a", "b"])
        #expect(claims.emailVerified)
        #expect(claims.expiresAt == 1_700_000_000)
        #expect(throws: JWTError.self) { try JWTClaims(JSONParser.parse(Array(#"{"aud":5}"#.utf8), maxDepth: 4)) }
    }
}
