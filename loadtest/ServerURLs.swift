import HuddleClient

/// The servers a run spreads its virtual clients over: one server, or the nodes of a cluster
/// (`--url` once per node; any node serves any client). Client `i` starts on node `i mod n`,
/// so the load is shared; a client that reconnects moves on to the next node, as HuddleClient
/// does, so a node that dies strands nobody.
struct ServerURLs: Sendable, CustomStringConvertible {
    /// Never empty.
    let all: [ClientURL]

    init(_ all: [ClientURL]) {
        precondition(!all.isEmpty, "at least one server URL")
        self.all = all
    }

    /// Where a run's one-off set-up connections go, and whose /metrics the report reads.
    var first: ClientURL { all[0] }

    /// Node `index mod n`: virtual client `index`'s first node, or `index` nodes further on.
    subscript(node index: Int) -> ClientURL { all[index % all.count] }

    var description: String { all.map(\.description).joined(separator: " ") }
}
