import HuddleCore

/// A durable state built the way a node builds it, by applying logged commands: `users`
/// accounts with a session each, paired off as friends, each pair with `messagesPerChat`
/// messages in its chat. `seed` makes states of equal size differ.
enum SampleState {
    static func build(users: Int, messagesPerChat: Int, seed: Int = 0) -> CoreDurableState {
        let core = HuddleCore()
        let time: Int64 = 1_790_000_000_000
        let credentials = Credentials(salt: [UInt8](repeating: 7, count: 16), hash: [UInt8](repeating: 9, count: 32), iterations: 600_000)
        // Zero-padded, so that byte order is numeric order (a chat names its two users ascending).
        func name(_ index: Int) -> Username {
            let digits = String(index)
            return "u" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
        }
        for index in 0..<users {
            var token = [UInt8](repeating: UInt8(truncatingIfNeeded: seed), count: 32)
            withUnsafeBytes(of: UInt64(index).littleEndian) { token.replaceSubrange(0..<8, with: $0) }
            core.apply(.signUp(
                username: name(index), email: "\(name(index))@example.com", credentials: credentials,
                session: NewSession(tokenHash: token, expiresAt: time + 30 * 86_400_000, device: "phone"), time: time))
        }
        // Knuth's multiplicative hash of a counter: varied, and the same for the same seed.
        var counter = UInt64(seed) &* 1_000_003
        func next() -> UInt64 {
            counter &+= 1
            return (counter &* 0x9E37_79B9_7F4A_7C15) >> 17
        }
        for first in stride(from: 0, to: users - 1, by: 2) {
            let (a, b) = (name(first), name(first + 1))
            core.apply(.acceptFriendRequest(from: a, to: b, time: time + 1))
            for message in 0..<messagesPerChat {
                let from = message % 2 == 0 ? a : b
                // Text that compresses like chat does, not like one line repeated.
                let text = (0..<6).map { _ in words[Int(next() % UInt64(words.count))] }.joined(separator: " ")
                core.apply(.publishWithClientID(
                    channel: "chat:\(a)~\(b)", from: from, type: "message",
                    data: #"{"text":"\#(text) \#(String(next() % 100_000, radix: 36))"}"#,
                    clientID: "\(from)-\(seed)-\(message)", time: time + 2 + Int64(message)))
            }
        }
        return core.durableState
    }

    private static let words = """
        the a to you I it and is that of in for on me at be this we are was do not have with so just what \
        now see later tonight tomorrow coffee lunch dinner park beach movie game train bus home work \
        haha ok yes no maybe sure great thanks sorry love miss meet call text photo place soon
        """.split(whereSeparator: \.isWhitespace).map(String.init)
}
