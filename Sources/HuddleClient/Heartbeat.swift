/// How a `HuddleClient` notices a connection that died without a FIN (a phone that changed
/// networks, a NAT that forgot it): after `pingAfterMilliseconds` without any frame from the
/// server it sends a ping, and after `deadAfterMilliseconds` without any frame it drops the
/// connection and reconnects. Our pings also keep the server's idle timeout (75 s) away.
public struct Heartbeat: Sendable, Equatable {
    public var pingAfterMilliseconds: Int64
    public var deadAfterMilliseconds: Int64

    public init(pingAfterMilliseconds: Int64 = 20_000, deadAfterMilliseconds: Int64 = 35_000) {
        self.pingAfterMilliseconds = max(1, pingAfterMilliseconds)
        self.deadAfterMilliseconds = max(self.pingAfterMilliseconds + 1, deadAfterMilliseconds)
    }
}
