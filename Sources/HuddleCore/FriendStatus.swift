/// One entry of the `friends` list: a friend and whether they are online now (presence, with
/// its grace period).
public struct FriendStatus: Sendable, Equatable {
    public var username: Username
    public var online: Bool

    public init(username: Username, online: Bool) {
        self.username = username
        self.online = online
    }
}
