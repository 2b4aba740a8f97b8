import HuddleProtocol

// The wire model (HuddleProtocol) under the names this library's API has always used.

/// A signed-in user as the server describes it.
public typealias HuddleUser = UserInfo
/// The result of `signup`, `login`, `auth` and `whoami`.
public typealias HuddleSession = AccountSession
/// A friend in the `friends` list.
public typealias Friend = FriendStatus
