/// A list of objects with O(1) removal, for the sets a loop walks often and changes often
/// (its connections, a topic's subscribers). Each element keeps its own index in a property
/// the list is given; removal moves the last element into the hole.
public struct SlottedList<Element: AnyObject> {
    public private(set) var elements: [Element] = []
    private let slot: ReferenceWritableKeyPath<Element, Int>

    /// `slot` is the element's index property; -1 means "not in this list".
    public init(slot: ReferenceWritableKeyPath<Element, Int>) {
        self.slot = slot
    }

    public var count: Int { elements.count }
    public var isEmpty: Bool { elements.isEmpty }

    /// Adds `element` unless it is in the list already.
    public mutating func append(_ element: Element) {
        guard element[keyPath: slot] < 0 else { return }
        element[keyPath: slot] = elements.count
        elements.append(element)
    }

    /// Removes `element`; false when it was not in the list.
    @discardableResult
    public mutating func remove(_ element: Element) -> Bool {
        let index = element[keyPath: slot]
        guard index >= 0, index < elements.count, elements[index] === element else { return false }
        let last = elements.removeLast()
        if index < elements.count {
            elements[index] = last
            last[keyPath: slot] = index
        }
        element[keyPath: slot] = -1
        return true
    }
}
