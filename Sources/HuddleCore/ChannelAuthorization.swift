/// Who may do what on a channel (protocol.md, the table in "Channels").
///
/// Reading covers `subscribe` and `history`. Friendship (for `loc:`) is asked through a closure
/// so that only `loc:` channels pay for the lookup.
extension ChannelName {
    /// nil when `user` may read; otherwise why not.
    func readRefusal(for user: Username, friendsOfOwner: (Username) -> Set<Username>) -> CoreError? {
        switch kind {
        case .inbox(let owner):
            user == owner ? nil : CoreError(.forbidden, "only \(owner) may read \(text)")
        case .chat(let first, let second):
            user == first || user == second ? nil : CoreError(.forbidden, "only members may read \(text)")
        case .loc(let owner):
            user == owner || friendsOfOwner(owner).contains(user)
                ? nil : CoreError(.forbidden, "only \(owner) and their friends may read \(text)")
        case .room:
            nil
        }
    }

    /// nil when `user` may publish; otherwise why not. The server (HTTP API) may publish
    /// anywhere and does not ask.
    /// A chat room is written only while its two members are friends; it stays readable after.
    func publishRefusal(for user: Username, areFriends: (Username, Username) -> Bool) -> CoreError? {
        switch kind {
        case .inbox:
            CoreError(.forbidden, "only the server publishes to \(text)")
        case .chat(let first, let second):
            if user != first && user != second {
                CoreError(.forbidden, "only members may publish to \(text)")
            } else if !areFriends(first, second) {
                CoreError(.notFriends, "only friends may write to \(text)")
            } else {
                nil
            }
        case .loc(let owner):
            // Location changes are the server's decision (protocol.md, "Places and location").
            CoreError(.forbidden, "the server publishes location changes to \(text); \(owner) sends location_fix or region")
        case .room:
            nil
        }
    }
}
