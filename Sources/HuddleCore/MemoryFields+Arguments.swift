import HuddleProtocol

// The memory ops' decoded arguments as the core takes them. `null` and absence of `position`
// mean the same at creation (no position); in an update, `null` takes the position away.

extension MemoryFields {
    init(_ arguments: MemoryArguments) {
        self.init(title: arguments.title, date: arguments.date, placeName: arguments.placeName, position: MemoryPositionEdit(arguments.position))
    }
}

extension MemoryPointFields {
    init(_ arguments: MemoryPointArguments) {
        self.init(
            time: arguments.time, position: MemoryPositionEdit(arguments.position), placeName: arguments.placeName, note: arguments.note,
            photos: arguments.photos)
    }
}

extension MemoryPositionEdit {
    /// nil: the argument was absent.
    init?(_ argument: MemoryPositionArgument) {
        switch argument {
        case .absent: return nil
        case .null: self = .remove
        case .coordinates(let latitude, let longitude): self = .set(MemoryPosition(latitude: latitude, longitude: longitude))
        }
    }
}
