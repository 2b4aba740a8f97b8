/// The JWS algorithms accepted (RFC 7518 §3): the ones identity providers sign ID tokens with
/// (RS256, ES256) and the shared-secret one app backends use (HS256). `none` and everything
/// else are refused.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256"
    case es256 = "ES256"
    case hs256 = "HS256"
}
