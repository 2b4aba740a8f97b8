/// What changed in a user's memories, as the `memory_changed` event tells every live
/// connection of the owner. `Memory` values here are as after the change; the event shows them
/// without their points (a point change carries the point itself).
public enum MemoryChange: Sendable, Equatable {
    case created(Memory)
    case updated(Memory)
    case deleted(memory: UInt64)
    case pointAdded(Memory, MemoryPoint)
    case pointUpdated(Memory, MemoryPoint)
    case pointDeleted(Memory, point: UInt64)
}
