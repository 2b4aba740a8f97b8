import HuddleProtocol

extension Place {
    /// Smaller radius first, then the older place: the order in which overlapping places win.
    static func narrowerFirst(_ first: Place, _ second: Place) -> Bool {
        first.radius != second.radius ? first.radius < second.radius : first.id < second.id
    }
}
