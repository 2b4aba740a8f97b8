import HuddleProtocol

/// Every user's memories (durable), by id, with each owner's set of ids so that one user's
/// list and count are lookups.
///
/// Memory ids come from one counter for all users (carried in the `createMemory` command, so a
/// replay gives the same ids). Coded as the counter and the memories sorted by id; the owner
/// index is rebuilt when decoding.
public struct Memories: Sendable, Equatable {
    private var byID: [UInt64: StoredMemory] = [:]
    private var idsByOwner: [Username: Set<UInt64>] = [:]
    /// The id the next memory gets.
    public private(set) var nextID: UInt64 = 1

    public init() {}

    public subscript(id: UInt64) -> StoredMemory? { byID[id] }

    public var count: Int { byID.count }

    public func count(of owner: Username) -> Int {
        idsByOwner[owner]?.count ?? 0
    }

    /// The owner's memories, newest date first (then the most recently created).
    public func memories(of owner: Username) -> [StoredMemory] {
        (idsByOwner[owner] ?? []).compactMap { byID[$0] }.sorted(by: StoredMemory.newestFirst)
    }

    /// Adds the memory or replaces the one with its id (same owner).
    mutating func put(_ memory: StoredMemory) {
        byID[memory.id] = memory
        idsByOwner[memory.owner, default: []].insert(memory.id)
        nextID = max(nextID, memory.id + 1)
    }

    /// Changes a stored memory in place; nothing if there is none with this id and owner.
    mutating func modify(_ id: UInt64, ownedBy owner: Username, _ change: (inout StoredMemory) -> Void) {
        guard byID[id]?.owner == owner else { return }
        change(&byID[id]!)
    }

    mutating func remove(_ id: UInt64, ownedBy owner: Username) {
        guard byID[id]?.owner == owner else { return }
        byID[id] = nil
        idsByOwner[owner]?.remove(id)
        if idsByOwner[owner]?.isEmpty == true { idsByOwner[owner] = nil }
    }

    /// Account deletion: every memory of the user, with its points (the id counter stays).
    mutating func erase(_ user: Username) {
        for id in idsByOwner.removeValue(forKey: user) ?? [] { byID[id] = nil }
    }
}

/// The memory counter and the memories by id.
extension Memories: PersistedValue {
    var persisted: JSONValue { .record([("nextID", nextID.persisted), ("memories", .array(byID.keys.sorted().map { byID[$0]!.persisted }))]) }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Memories")
        let next: UInt64 = try f("nextID")
        let memories: [StoredMemory] = try f("memories")
        for memory in memories {
            guard byID[memory.id] == nil, memory.id < next, memory.isConsistent else {
                throw RecordDecodingError("memory \(memory.id) is repeated, beyond the counter or inconsistent")
            }
            put(memory)
        }
        nextID = next
    }
}
