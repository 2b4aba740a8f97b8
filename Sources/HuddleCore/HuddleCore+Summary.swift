extension HuddleCore {
    /// Users online as friends see them: with a live signed-in connection, or in their grace.
    public var usersOnline: Int { connections.userCount + presence.usersInGrace }
}
