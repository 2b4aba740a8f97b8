import Synchronization

/// What a callback on the loop thread received, for the test's thread to look at.
final class Received: Sendable {
    private let items = Mutex<[String]>([])

    func add(_ item: String) { items.withLock { $0.append(item) } }
    var all: [String] { items.withLock { $0 } }
}
