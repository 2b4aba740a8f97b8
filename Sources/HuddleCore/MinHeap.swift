/// A binary min-heap: the core's deadlines (presence grace, session purges, login failures
/// leaving their window) are popped in time order without sorting whole collections.
/// Ties pop in `Element`'s order, so outputs built from it are deterministic. Public because the
/// server's push queue orders its retries with it too.
public struct MinHeap<Element: Comparable>: Sendable where Element: Sendable {
    private var elements: [Element] = []

    public init() {}

    public var isEmpty: Bool { elements.isEmpty }
    public var count: Int { elements.count }
    public var min: Element? { elements.first }

    public mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    public mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let smallest = elements.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallestChild = parent
            if left < elements.count, elements[left] < elements[smallestChild] { smallestChild = left }
            if right < elements.count, elements[right] < elements[smallestChild] { smallestChild = right }
            guard smallestChild != parent else { break }
            elements.swapAt(parent, smallestChild)
            parent = smallestChild
        }
        return smallest
    }

    public mutating func removeAll() {
        elements.removeAll()
    }
}
