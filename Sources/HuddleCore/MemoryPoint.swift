import HuddleProtocol

extension MemoryPoint {
    /// The order of a memory's points: by time, then by id (the order they were added).
    static func precedes(_ lhs: MemoryPoint, _ rhs: MemoryPoint) -> Bool {
        (lhs.time, lhs.id) < (rhs.time, rhs.id)
    }
}
