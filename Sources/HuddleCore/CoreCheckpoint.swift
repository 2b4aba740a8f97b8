/// The core's durable state and what is derived from it, saved before a turn so that a turn
/// the shared log refused (cluster mode: another node took the position) can be taken back in
/// O(1): every field is a copy-on-write value, so saving copies nothing.
public struct CoreCheckpoint: Sendable {
    let durableState: CoreDurableState
    let sessionPurges: MinHeap<SessionPurge>
    let sessionExpiries: MinHeap<SessionPurge>
    let historyExpiries: HistoryExpiries
    let usernames: UsernameIndex
    let nextKeptResultSweep: Int64
    /// Where the decider is in pending erasures: a chunk taken back is decided again.
    let erasureScans: [Username: HuddleCore.ErasureScan]
}

extension HuddleCore {
    /// The durable state as it is now, with its derived indexes.
    public func checkpoint() -> CoreCheckpoint {
        CoreCheckpoint(
            durableState: durableState, sessionPurges: sessionPurges, sessionExpiries: sessionExpiries,
            historyExpiries: historyExpiries, usernames: usernames, nextKeptResultSweep: nextKeptResultSweep,
            erasureScans: erasureScans)
    }

    /// Puts the durable state back to `checkpoint`, keeping the ephemeral state (connections,
    /// subscriptions, presence), as `restoreDurableState` does without rebuilding anything.
    public func restore(_ checkpoint: CoreCheckpoint) {
        durableState = checkpoint.durableState
        sessionPurges = checkpoint.sessionPurges
        sessionExpiries = checkpoint.sessionExpiries
        historyExpiries = checkpoint.historyExpiries
        usernames = checkpoint.usernames
        nextKeptResultSweep = checkpoint.nextKeptResultSweep
        erasureScans = checkpoint.erasureScans
    }
}
