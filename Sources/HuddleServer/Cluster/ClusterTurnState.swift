import HuddleCore

/// The core thread's cluster-mode turn state (`CoreRunner+Cluster`).
struct ClusterTurnState {
    /// The durable state before the open turn's first request: what a refused or failed append
    /// goes back to.
    var checkpoint: CoreCheckpoint?
    /// A turn's append is in flight: its outputs are held, and new requests wait in `waiting`.
    var appending = false
    /// Requests that arrived during the append, unhandled: the next turn (group commit).
    var waiting: [WaitingRequest] = []

    struct WaitingRequest {
        var request: CoreRequest
        var op: String?
        var submitted: UInt64
    }
}
