/// Everything a turn can change — the durable state with its indexes (`CoreCheckpoint`) and
/// the ephemeral state: connections, subscriptions, presence, throttles — saved before a turn
/// in O(1) (every field a copy-on-write value). Cluster mode: when another node took the log
/// position a turn's append asked for, the turn is taken back whole and every one of its
/// requests decided again on top of the entries it missed. Taking back only the durable state
/// would leave a sign-in's connection signed in and decide its request again as
/// `already_authenticated`. Not the readers behind: the server reports those between turns,
/// and a report must not be undone by a turn taken back.
public struct CoreTurnCheckpoint: Sendable {
    /// The durable part alone: what a turn that never reached the log goes back to, its
    /// other requests' effects standing.
    public let durable: CoreCheckpoint
    let connections: ConnectionRegistry
    let subscriptions: Subscriptions
    let presence: PresenceTracker
    let loginThrottle: LoginThrottle
    let friendRequestThrottle: FriendRequestThrottle
    let roomQuota: RoomQuota
    let passwordHashes: PasswordHashAdmission
}

extension HuddleCore {
    public func turnCheckpoint() -> CoreTurnCheckpoint {
        CoreTurnCheckpoint(
            durable: checkpoint(), connections: connections, subscriptions: subscriptions,
            presence: presence, loginThrottle: loginThrottle, friendRequestThrottle: friendRequestThrottle, roomQuota: roomQuota,
            passwordHashes: passwordHashes)
    }

    public func restore(_ checkpoint: CoreTurnCheckpoint) {
        restore(checkpoint.durable)
        connections = checkpoint.connections
        subscriptions = checkpoint.subscriptions
        presence = checkpoint.presence
        loginThrottle = checkpoint.loginThrottle
        friendRequestThrottle = checkpoint.friendRequestThrottle
        roomQuota = checkpoint.roomQuota
        passwordHashes = checkpoint.passwordHashes
    }
}
