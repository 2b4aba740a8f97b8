import Glibc
import HuddleCrypto

/// Signs app-backend tokens (protocol.md, `app_auth`) as an app's backend would: HS256 with the
/// secret the server was given (`--app-token-secret`), `sub` naming the user. The account is made
/// the first time the server sees it, with no password to hash: the cheap way to put hundreds of
/// thousands of authenticated users on a server.
struct AppTokenSigner: Sendable {
    let secret: [UInt8]
    /// How long a token stays valid: long enough for any run's reconnects.
    var lifetimeSeconds = 3_600

    func token(for username: String) -> String {
        let now = Int(time(nil))
        let header = Crypto.base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = Crypto.base64URL(Array(#"{"sub":"\#(username)","iat":\#(now),"exp":\#(now + lifetimeSeconds)}"#.utf8))
        let input = header + "." + claims
        return input + "." + Crypto.base64URL(Crypto.hmacSHA256(key: secret, message: Array(input.utf8)))
    }
}
