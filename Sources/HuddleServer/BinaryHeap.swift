/// A binary min-heap: the push queue's retry times and arrival order, each popped in order
/// without sorting. (The core has its own for its deadlines; it keeps its types internal.)
struct BinaryHeap<Element: Comparable> {
    private var elements: [Element] = []

    init() {}

    var count: Int { elements.count }
    var min: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popMin() -> Element? {
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

    mutating func removeAll() {
        elements.removeAll()
    }
}
