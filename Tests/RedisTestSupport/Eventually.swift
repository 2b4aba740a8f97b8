import Foundation

/// Waits until `condition` holds (checked every 10 ms), failing with `what` after `timeout`
/// seconds: for a positive event the test cannot be called back on (a Sentinel's view, a
/// message on another thread), never to show that something did not happen.
public func eventually(_ what: String, timeout: Double = 20, _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !condition() {
        guard Date() < deadline else { throw TestFailure("\(what) did not happen within \(timeout) s") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
