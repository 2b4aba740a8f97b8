import HuddleCrypto
import HuddleProtocol

extension WebhookURL {
    /// The whole POST of `body` to this webhook (push and password reset alike). With a
    /// signing key, `X-Huddle-Signature` is the HMAC-SHA256 of the exact body bytes, so a
    /// receiver verifies before parsing.
    func post(_ body: [UInt8], signingKey: [UInt8]?) -> [UInt8] {
        var head = "POST \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: huddle\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if let signingKey { head += "X-Huddle-Signature: sha256=\(Hex.encode(Crypto.hmacSHA256(key: signingKey, message: body)))\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
