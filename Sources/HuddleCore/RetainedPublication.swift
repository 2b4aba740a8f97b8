/// A publication as a channel keeps it: its channel name, epoch and offset are implied by where
/// it is stored, so neither memory nor snapshots repeat them.
struct RetainedPublication: Sendable, Equatable, Codable {
    var type: String
    var from: Username?
    var data: String
    var time: Int64

    /// What fills a ring slot nobody uses, so a trimmed publication's strings are released.
    static let vacant = RetainedPublication(type: "", from: nil, data: "", time: 0)
}
