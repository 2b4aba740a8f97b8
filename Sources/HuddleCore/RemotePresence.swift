/// Cluster mode: the users other nodes say are online there (a connection, or their grace
/// period), by node. A user is online for friends if online here or on any live node, so a
/// user moving from one node to another never looks offline. Ephemeral, like all presence:
/// the nodes tell each other again after a restart.
struct RemotePresence: Sendable {
    private var nodesByUser: [Username: Set<String>] = [:]
    private var usersByNode: [String: Set<Username>] = [:]

    func isOnline(_ user: Username) -> Bool {
        nodesByUser[user] != nil
    }

    mutating func set(_ user: Username, online: Bool, on node: String) {
        if online {
            nodesByUser[user, default: []].insert(node)
            usersByNode[node, default: []].insert(user)
        } else {
            remove(user, from: node)
            usersByNode[node]?.remove(user)
            if usersByNode[node]?.isEmpty == true { usersByNode[node] = nil }
        }
    }

    /// Forgets everything the node said (it stopped, or its lease ran out); returns the users
    /// it held online, sorted.
    mutating func removeNode(_ node: String) -> [Username] {
        guard let users = usersByNode.removeValue(forKey: node) else { return [] }
        for user in users { remove(user, from: node) }
        return users.sorted()
    }

    private mutating func remove(_ user: Username, from node: String) {
        nodesByUser[user]?.remove(node)
        if nodesByUser[user]?.isEmpty == true { nodesByUser[user] = nil }
    }
}
