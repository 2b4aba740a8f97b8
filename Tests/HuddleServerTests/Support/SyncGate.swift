import Foundation

/// The store's test gate for the server's background log syncs (`HUDDLE_TEST_SYNC_GATE`, a
/// FIFO; HuddleStore's `LogSyncGate`): the test holds every sync (`h`), lets one through (`s`)
/// or opens the gate (`o`), and watches the server's "test sync gate holds a sync" lines.
final class SyncGate {
    static let heldLine = "test sync gate holds a sync"
    let path: String
    private let fd: Int32

    /// A FIFO next to `data`, opened read-write: opening never waits for a reader, and a server
    /// started without the gate has none.
    init(nextTo data: URL) throws {
        path = data.deletingLastPathComponent().appendingPathComponent("sync-gate-\(UUID().uuidString)").path
        guard mkfifo(path, 0o600) == 0 else { throw TestFailure("cannot make the sync gate's FIFO") }
        fd = Glibc.open(path, O_RDWR)
        guard fd >= 0 else {
            unlink(path)
            throw TestFailure("cannot open the sync gate's FIFO")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// What to start the server with.
    var environment: [String: String] { ["HUDDLE_TEST_SYNC_GATE": path] }

    func hold() throws { try command("h") }
    func step() throws { try command("s") }
    func release() throws { try command("o") }

    private func command(_ letter: Unicode.Scalar) throws {
        var byte = UInt8(ascii: letter)
        guard write(fd, &byte, 1) == 1 else { throw TestFailure("cannot write to the sync gate") }
    }
}
