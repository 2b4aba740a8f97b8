/// What one `SnapshotStore` knows of its snapshots' health, by last sequence: those it wrote or
/// loaded are good, those it passed over are damaged, the rest are unknown until checked.
struct SnapshotVerdicts {
    var good: Set<UInt64> = []
    var damaged: Set<UInt64> = []

    func verdict(_ sequence: UInt64) -> Bool? {
        if good.contains(sequence) { return true }
        if damaged.contains(sequence) { return false }
        return nil
    }

    mutating func record(_ sequence: UInt64, valid: Bool) {
        if valid {
            damaged.remove(sequence)
            good.insert(sequence)
        } else {
            good.remove(sequence)
            damaged.insert(sequence)
        }
    }
}
