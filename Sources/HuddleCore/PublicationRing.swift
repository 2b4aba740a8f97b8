import HuddleProtocol

/// A channel's retained publications, oldest first, in a growable ring: appending and trimming
/// the oldest are O(1), so trimming history by count on every publish costs nothing.
///
/// Storage grows by doubling up to the channel's limit (a quiet channel never reserves its
/// whole limit) and shrinks when mostly empty. Equality and coding see only the elements in
/// order, never the physical layout, so a ring rebuilt from a snapshot equals the original.
struct PublicationRing: Sendable {
    private var storage: [RetainedPublication] = []
    /// Index in `storage` of the oldest element.
    private var head = 0
    private(set) var count = 0

    init() {}

    init<Elements: Sequence<RetainedPublication>>(_ elements: Elements) {
        storage = Array(elements)
        count = storage.count
    }

    var isEmpty: Bool { count == 0 }
    var capacity: Int { storage.count }

    /// The element `index` places after the oldest.
    subscript(index: Int) -> RetainedPublication {
        get {
            precondition(index >= 0 && index < count, "PublicationRing index out of range")
            return storage[physicalIndex(index)]
        }
        set {
            precondition(index >= 0 && index < count, "PublicationRing index out of range")
            storage[physicalIndex(index)] = newValue
        }
    }

    var first: RetainedPublication? { isEmpty ? nil : storage[head] }

    /// Appends, first dropping the oldest elements so that at most `limit` remain.
    mutating func append(_ publication: RetainedPublication, keepingAtMost limit: Int) {
        let limit = Swift.max(limit, 1)
        while count >= limit { removeFirst() }
        if count == storage.count { relocate(capacity: Swift.min(Swift.max(storage.count * 2, 8), limit)) }
        storage[physicalIndex(count)] = publication
        count += 1
    }

    mutating func removeFirst() {
        precondition(count > 0, "removeFirst on an empty PublicationRing")
        storage[head] = .vacant
        head = head + 1 == storage.count ? 0 : head + 1
        count -= 1
        if count == 0 {
            storage = []
            head = 0
        } else if storage.count > 8, count <= storage.count / 4 {
            relocate(capacity: storage.count / 2)
        }
    }

    private func physicalIndex(_ index: Int) -> Int {
        let unwrapped = head + index
        return unwrapped < storage.count ? unwrapped : unwrapped - storage.count
    }

    /// Copies the elements, oldest first, into storage of `capacity` slots (≥ count).
    private mutating func relocate(capacity: Int) {
        var relocated: [RetainedPublication] = []
        relocated.reserveCapacity(capacity)
        for index in 0..<count { relocated.append(storage[physicalIndex(index)]) }
        relocated.append(contentsOf: repeatElement(.vacant, count: capacity - count))
        storage = relocated
        head = 0
    }
}

extension PublicationRing: Equatable {
    static func == (lhs: PublicationRing, rhs: PublicationRing) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return (0..<lhs.count).allSatisfy { lhs[$0] == rhs[$0] }
    }
}

/// The publications oldest first.
extension PublicationRing: PersistedValue {
    var persisted: JSONValue { .array((0..<count).map { self[$0].persisted }) }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        self.init(try [RetainedPublication](persisted: persisted))
    }
}
