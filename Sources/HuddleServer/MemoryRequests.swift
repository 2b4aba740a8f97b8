import HuddleCore
import HuddleProtocol

/// The memory ops' arguments as the core takes them: decoded wire values become core fields.
/// `null` and absence of `position` mean the same at creation (no position); in an update,
/// `null` takes the position away.
enum MemoryRequests {
    static func fields(_ arguments: MemoryArguments) -> MemoryFields {
        MemoryFields(title: arguments.title, date: arguments.date, placeName: arguments.placeName, position: edit(arguments.position))
    }

    static func fields(_ arguments: MemoryPointArguments) -> MemoryPointFields {
        MemoryPointFields(
            time: arguments.time, position: edit(arguments.position), placeName: arguments.placeName, note: arguments.note,
            photos: arguments.photos)
    }

    private static func edit(_ position: MemoryPositionArgument) -> MemoryPositionEdit? {
        switch position {
        case .absent: return nil
        case .null: return .remove
        case .coordinates(let latitude, let longitude): return .set(MemoryPosition(latitude: latitude, longitude: longitude))
        }
    }
}
