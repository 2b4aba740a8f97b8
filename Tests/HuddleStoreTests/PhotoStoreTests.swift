import Foundation
import HuddleStore
import Testing

/// Photos as content-addressed files: stored once, durable names, nothing half-written
/// visible, unfinished uploads cleared at start-up, no path outside the directory.
@Suite struct PhotoStoreTests {
    static let hash = String(repeating: "ab", count: 32)

    @Test func storesOnceAndReadsBack() throws {
        let directory = TemporaryDirectory()
        let store = try PhotoStore(directory: directory.file("photos"))
        let bytes: [UInt8] = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try store.read(hash: Self.hash) == nil)
        #expect(try store.store(bytes, hash: Self.hash))
        #expect(try store.store(bytes, hash: Self.hash) == false, "the same name is not written twice")
        #expect(try store.read(hash: Self.hash) == bytes)
        #expect(directory.bytes("photos/ab/\(Self.hash)") == bytes, "sharded by the first two hex digits")
        #expect(directory.names() == ["photos"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("photos/tmp")).isEmpty)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.file("photos/ab/\(Self.hash)"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func startUpClearsUnfinishedUploadsAndKeepsPhotos() throws {
        let directory = TemporaryDirectory()
        let store = try PhotoStore(directory: directory.file("photos"))
        try store.store([1, 2, 3], hash: Self.hash)
        directory.write("photos/tmp/\(Self.hash).7.tmp", [9, 9])
        let reopened = try PhotoStore(directory: directory.file("photos"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("photos/tmp")).isEmpty)
        #expect(try reopened.read(hash: Self.hash) == [1, 2, 3])
    }

    @Test func onlyHashesNameFiles() throws {
        let directory = TemporaryDirectory()
        let store = try PhotoStore(directory: directory.file("photos"))
        for name in ["../../etc/passwd", String(repeating: "AB", count: 32), String(repeating: "a", count: 63), ""] {
            #expect(!PhotoStore.isValidHash(name))
            #expect(try store.read(hash: name) == nil)
        }
        #expect(PhotoStore.isValidHash(Self.hash))
    }
}
