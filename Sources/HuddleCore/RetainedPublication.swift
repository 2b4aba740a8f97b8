/// A publication as a channel keeps it: its channel name, epoch and offset are implied by where
/// it is stored, so neither memory nor snapshots repeat them.
struct RetainedPublication: Sendable, Equatable {
    var type: String
    var from: Username?
    var data: String
    var time: Int64
    /// The publisher's own id for it (`client_id`), which makes a retried publish idempotent.
    /// Optional in snapshots written before it existed.
    var clientID: String? = nil
    /// Removed (by the operator, or with its publisher's account): a tombstone that keeps the
    /// offset taken and its time (for trimming by age), nothing the publisher wrote.
    var removed = false

    /// The tombstone left at this publication's offset.
    var tombstone: RetainedPublication { RetainedPublication(type: "", from: nil, data: "", time: time, removed: true) }

    /// What fills a ring slot nobody uses, so a trimmed publication's strings are released.
    static let vacant = RetainedPublication(type: "", from: nil, data: "", time: 0)
}
