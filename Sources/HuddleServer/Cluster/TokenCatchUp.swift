import HuddleCore

/// Cluster mode's token sign-ins this node does not know yet (docs/ARCHITECTURE.md, "Cluster
/// mode"): a session opened on another node a moment ago is in the shared log before its
/// client hears ok, but this node may not have applied that entry. Such a sign-in waits until
/// the node has applied the log up to its top as read after the request arrived, then is
/// decided again; refused only if still unknown, or when `deadlineMilliseconds` passed first.
///
/// At most one per connection: the endpoint holds a connection's later requests behind its
/// sign-in, so the replies keep their order. Core thread only.
struct TokenCatchUp {
    struct Waiting {
        var request: CoreRequest
        var op: String?
        var submitted: UInt64
        var since: Int64
        /// The log position to apply first; nil until a read of the top that began after the
        /// request arrived has answered.
        var target: UInt64?
        /// Caught up, or out of time: the next `process` decides it.
        var released = false
    }

    static let deadlineMilliseconds: Int64 = 2_000

    var waiting: [ConnectionRef: Waiting] = [:]
    /// A read of the log's top is in flight; those that came after it began wait for the next.
    var reading = false
    var readAgain = false
}
