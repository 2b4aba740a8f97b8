import HuddleProtocol

extension HuddleCore {
    /// Applies commands another node decided (cluster mode: an entry of the shared log) and
    /// returns what this node owes its own live connections because of them: the events its
    /// subscribers would have got had the request been handled here (`deliver` and
    /// `tellLive`, the same functions `handle` calls). Never replies (the deciding node
    /// answered) and never pushes (the deciding node handed those over).
    public func applyReplicated(_ commands: [CoreCommand], at time: Int64) -> [CoreOutput] {
        var step = CoreStep()
        var newFriends: [(Username, Username)] = []
        for command in commands {
            if case let .acceptFriendRequest(requester, accepter, _) = command { newFriends.append((requester, accepter)) }
            let prior = priorFacts(of: command)
            if let publication = apply(command) { deliver(publication, into: &step) }
            tellLive(after: command, prior: prior, at: time, into: &step)
        }
        // After the whole entry, as `befriend` tells them after its notices and matches.
        for (requester, accepter) in newFriends { tellPresenceOfNewFriends(requester, accepter, into: &step) }
        return step.outputs
    }
}
