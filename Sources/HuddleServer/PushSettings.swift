/// The push gateway's settings (`--push-webhook` and the other `--push-*` flags, README.md
/// "Running it"; protocol.md "Notifications and push").
public struct PushSettings: Sendable {
    /// nil: no gateway. Notifications then only wait where they always wait — the inbox and
    /// the chat rooms' unread counts.
    public var webhook: WebhookURL?
    /// When set, every request carries `X-Huddle-Signature: sha256=HEX`, the HMAC-SHA256 of the
    /// body under this key: the receiver can check the sender without the key crossing the wire.
    public var secret: String?
    /// A PEM file of CA certificates an https webhook's certificate must lead to, instead of the
    /// system store (a private CA).
    public var caFile: String?
    /// Notifications waiting (new or waiting to retry); when full, the oldest is dropped.
    public var queueCapacity = 10_000
    /// Attempts per notification, the first included, before it is dropped.
    public var maxAttempts = 6
    /// Requests in flight at once.
    public var concurrency = 4
    /// Connect, send and read the status line within this, or the attempt failed.
    public var requestTimeoutMilliseconds: Int64 = 10_000
    /// The wait before the second attempt; it doubles per attempt up to `maxBackoffMilliseconds`,
    /// and each wait is drawn between half and all of it (jitter, so receivers coming back are
    /// not hit by every retry at once).
    public var initialBackoffMilliseconds: Int64 = 500
    public var maxBackoffMilliseconds: Int64 = 30_000

    public init() {}

    /// The nominal wait after `attempts` failed attempts (before jitter).
    func backoffMilliseconds(afterAttempts attempts: Int) -> Int64 {
        var wait = initialBackoffMilliseconds
        for _ in 1..<max(attempts, 1) where wait < maxBackoffMilliseconds { wait *= 2 }
        return min(wait, maxBackoffMilliseconds)
    }
}
