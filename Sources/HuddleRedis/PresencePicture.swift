/// What changed in the picture of the other nodes' online users.
public enum PresenceChange: Sendable, Equatable {
    case online(user: String, node: String)
    case offline(user: String, node: String)
    /// The node is gone (its lease expired, or it left): all its users are offline there.
    case nodeGone(String)
}

/// The other nodes' online users as one node knows them, from the presence channel's messages
/// and from full reads of every node's set (a rebuild), without I/O.
///
/// Ordering: each node's messages carry its own increasing sequence, and a full read returns
/// each node's set together with the sequence it reflects (one Lua script, atomic). A rebuild
/// is requested only once the channel is subscribed, so every message after the read reaches
/// us; messages arriving while it is in flight are held and applied on top of its result when
/// their sequence is above the read's. A message whose sequence is not the next one (one was
/// missed) or that names a node not known yet asks for a rebuild, so a loss is repaired.
struct PresencePicture {
    private struct NodeView {
        var users: Set<String> = []
        var sequence: UInt64 = 0
        /// Kept after the node is gone so that its older messages, still in flight, are ignored.
        var isGone = false
    }

    let ownNode: String
    private var nodes: [String: NodeView] = [:]
    /// Non-nil while a rebuild is in flight: the messages received meanwhile.
    private var held: [PresenceMessage]?

    init(ownNode: String) { self.ownNode = ownNode }

    /// Live nodes other than this one, each with its online users.
    var elsewhere: [String: Set<String>] {
        nodes.compactMapValues { $0.isGone ? nil : $0.users }
    }

    var isRebuilding: Bool { held != nil }

    /// A message from another node; returns what changed and whether a rebuild is needed.
    mutating func receive(_ message: PresenceMessage) -> (changes: [PresenceChange], needsRebuild: Bool) {
        guard message.node != ownNode else { return ([], false) }
        if held != nil {
            held!.append(message)
            return ([], false)
        }
        return apply(message)
    }

    mutating func beginRebuild() {
        if held == nil { held = [] }
    }

    /// The result of a rebuild: every live node's set and sequence. Returns the changes from
    /// the picture before, and whether a held message showed a gap (rebuild again).
    mutating func rebuilt(_ sets: [String: (sequence: UInt64, users: Set<String>)]) -> (changes: [PresenceChange], needsRebuild: Bool) {
        let before = elsewhere
        for (name, view) in nodes where !view.isGone && sets[name] == nil {
            nodes[name] = NodeView(users: [], sequence: view.sequence, isGone: true)
        }
        for (name, set) in sets where name != ownNode {
            nodes[name] = NodeView(users: set.users, sequence: max(set.sequence, nodes[name]?.sequence ?? 0))
        }
        var needsRebuild = false
        for message in held ?? [] where apply(message).needsRebuild { needsRebuild = true }
        held = nil
        return (Self.difference(from: before, to: elsewhere), needsRebuild)
    }

    /// The rebuild failed: the held messages are applied as they came, and a rebuild is still needed.
    mutating func rebuildFailed() -> [PresenceChange] {
        let messages = held ?? []
        held = nil
        return messages.flatMap { apply($0).changes }
    }

    private mutating func apply(_ message: PresenceMessage) -> (changes: [PresenceChange], needsRebuild: Bool) {
        let known = nodes[message.node]
        var view = known ?? NodeView()
        guard message.sequence > view.sequence else { return ([], false) }
        let gap = known == nil || message.sequence != view.sequence + 1
        view.sequence = message.sequence
        var changes: [PresenceChange] = []
        var needsRebuild = gap
        switch message.operation {
        case .online(let user):
            view.isGone = false
            if view.users.insert(user).inserted { changes.append(.online(user: user, node: message.node)) }
        case .offline(let user):
            view.isGone = false
            if view.users.remove(user) != nil { changes.append(.offline(user: user, node: message.node)) }
        case .registered:
            view.isGone = false
            needsRebuild = true
        case .gone:
            if known.map({ !$0.isGone }) == true { changes.append(.nodeGone(message.node)) }
            view = NodeView(users: [], sequence: message.sequence, isGone: true)
            needsRebuild = false
        }
        nodes[message.node] = view
        return (changes, needsRebuild)
    }

    private static func difference(from before: [String: Set<String>], to after: [String: Set<String>]) -> [PresenceChange] {
        var changes: [PresenceChange] = []
        for name in before.keys.sorted() where after[name] == nil { changes.append(.nodeGone(name)) }
        for name in after.keys.sorted() {
            let old = before[name] ?? [], new = after[name]!
            for user in old.subtracting(new).sorted() { changes.append(.offline(user: user, node: name)) }
            for user in new.subtracting(old).sorted() { changes.append(.online(user: user, node: name)) }
        }
        return changes
    }
}
