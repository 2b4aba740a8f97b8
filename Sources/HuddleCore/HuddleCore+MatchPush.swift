/// Matches for a user with no live connection (protocol.md, "Notifications and push"): a match
/// means "someone is up for it *now*", which is worth a push — a user who only learns of it on
/// their next connection may find it has expired by then.
extension PushKind {
    /// A friend and the user now match on an activity.
    public static let match = PushKind(rawValue: "match")
}

extension HuddleCore {
    /// `user` and `partner` began to match on `activity`; called right after the `match` notice
    /// reached `user`'s inbox, so the notification's id is that notice's position.
    func notifyOfflineOfMatch(_ user: Username, with partner: Username, activity: String, at time: Int64, into step: inout CoreStep) {
        pushIfOffline(
            user, kind: .match, title: partner, body: .text("is up for \(activity) too"), target: "huddle://matches",
            id: latestInboxPosition(of: user), from: partner, at: time, into: &step)
    }
}
