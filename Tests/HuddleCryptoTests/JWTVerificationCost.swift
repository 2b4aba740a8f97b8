import Glibc
import HuddleCrypto
import HuddleProtocol
import JWTTestSupport
import Testing

/// What a sign-in with an ID token costs the verifier thread: parsing and verifying one token
/// (RS256 with a 2048-bit key, ES256 on P-256), median of many. Printed, not asserted
/// (BENCHMARKS.md, "Identity tokens"); each verification must succeed.
@Suite struct JWTVerificationCost {
    @Test func verificationMicroseconds() throws {
        for signer in [TestSigningKey(.rsa, keyID: "r"), TestSigningKey(.p256, keyID: "e")] {
            let key = try JSONWebKey(jwk: JSONParser.parse(Array(signer.jwk.utf8), maxDepth: 4))
            let token = signer.sign(#"{"iss":"https://idp.test","sub":"1234567890","aud":"app","exp":2000000000,"iat":1700000000,"nonce":"n","email":"a@example.com","email_verified":true}"#)
            var samples: [Double] = []
            for _ in 0..<2000 {
                var start = timespec(), end = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
                let parsed = try JSONWebToken(compact: token, maximumBytes: 8192)
                try parsed.verify(with: key)
                _ = try JWTClaims(parsed.claims)
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
                samples.append(Double(end.tv_sec - start.tv_sec) * 1e6 + Double(end.tv_nsec - start.tv_nsec) / 1e3)
            }
            samples.sort()
            let median = samples[samples.count / 2], p99 = samples[samples.count * 99 / 100]
            print("jwt-verify \(signer.algorithm): median \(Int(median.rounded())) µs CPU, p99 \(Int(p99.rounded())) µs CPU (2000 tokens)")
        }
    }
}
