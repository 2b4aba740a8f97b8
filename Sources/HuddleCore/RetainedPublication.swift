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

    /// What fills a ring slot nobody uses, so a trimmed publication's strings are released.
    static let vacant = RetainedPublication(type: "", from: nil, data: "", time: 0)
}
