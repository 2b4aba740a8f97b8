/// Presence across the nodes of a cluster: a user is online while they have a connection or
/// are in grace on this node, or any other live node says so. Each node tells the others of
/// its own part (`localPresence`) and hears theirs (`presenceElsewhere`, `nodeGone`); friends
/// are told only when the whole flips, so moving from one node to another tells nobody.
extension HuddleCore {
    /// This node's part of the user's presence flipped: the other nodes are told (cluster
    /// mode), the friends here only when no other node holds the user online.
    func localPresenceChanged(of user: Username, online: Bool, into step: inout CoreStep) {
        if configuration.tellsLocalPresence { step.outputs.append(.localPresence(user: user, online: online)) }
        if !remotePresence.isOnline(user) { announcePresence(of: user, online: online, into: &step) }
    }

    func presenceElsewhere(_ user: Username, on node: String, online: Bool, into step: inout CoreStep) {
        let wasOnline = isOnline(user)
        remotePresence.set(user, online: online, on: node)
        if isOnline(user) != wasOnline { announcePresence(of: user, online: !wasOnline, into: &step) }
    }

    func nodeGone(_ node: String, into step: inout CoreStep) {
        for user in remotePresence.removeNode(node) where !isOnline(user) {
            announcePresence(of: user, online: false, into: &step)
        }
    }
}
