/// The connections one loop's protocol endpoint serves, by serial: the core names a
/// connection by its serial, and a fan-out looks one up per delivery. A slot array, not a
/// dictionary: hashing a `UInt64` (SipHash) and probing cost ~250 instructions a delivery,
/// indexing an array a few.
///
/// A serial is a slot (low 32 bits) and the count of that slot's uses (high 32 bits), so a
/// serial the core still holds after its connection is gone never finds the connection that
/// reuses the slot (short of 2^32 reuses of one slot meanwhile). Serials are never 0.
struct ConnectionTable {
    private struct Entry {
        var uses: UInt32
        var connection: Connection?
    }

    private var entries: [Entry] = []
    private var freeSlots: [UInt32] = []

    /// Adds `connection` and returns its serial.
    mutating func insert(_ connection: Connection) -> UInt64 {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = Int(free)
        } else {
            slot = entries.count
            entries.append(Entry(uses: 0, connection: nil))
        }
        entries[slot].uses &+= 1
        if entries[slot].uses == 0 { entries[slot].uses = 1 }
        entries[slot].connection = connection
        return UInt64(entries[slot].uses) << 32 | UInt64(slot)
    }

    subscript(serial: UInt64) -> Connection? {
        guard let slot = slot(of: serial) else { return nil }
        return entries[slot].connection
    }

    /// Forgets the connection with `serial` and returns it (nil if it was gone already).
    @discardableResult
    mutating func remove(_ serial: UInt64) -> Connection? {
        guard let slot = slot(of: serial), let connection = entries[slot].connection else { return nil }
        entries[slot].connection = nil
        freeSlots.append(UInt32(slot))
        return connection
    }

    /// The slot `serial` names while its connection is in it.
    private func slot(of serial: UInt64) -> Int? {
        let slot = Int(truncatingIfNeeded: serial & 0xFFFF_FFFF)
        guard slot < entries.count, entries[slot].uses == UInt32(truncatingIfNeeded: serial >> 32),
              entries[slot].connection != nil
        else { return nil }
        return slot
    }
}
