import ChildProcessExit
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's typed memory calls (protocol.md, "Memories and photos") against the real
/// server: every change answered in full and told as `HuddleEvent.memory` to each of the owner's
/// devices, and someone else's memory answered as one that does not exist.
@Suite(.ownThread) struct ClientSessionMemoriesTests {
    static let alfama = MemoryPosition(latitude: 38.7223, longitude: -9.1393)
    static let miradouro = MemoryPosition(latitude: 38.7139, longitude: -9.1334)
    static let photo = String(repeating: "ab", count: 32)

    /// The memory changes `client` was told, in order.
    static func changes(_ client: ClientHarness) -> [MemoryChange] {
        client.events.compactMap { if case .memory(let change, _) = $0 { return change } else { return nil } }
    }

    @Test func memoriesAndPointsReachEveryDeviceOfTheOwnerOnly() async throws {
        let server = try await startHuddle()
        let phone = try await ClientHarness.signedUp("alice", url: server.url)
        let laptop = try await ClientHarness(url: server.url, credentials: .password(login: "alice", password: testPassword))
        try await laptop.waitUntilConnected()
        let bob = try await ClientHarness.signedUp("bob", url: server.url)

        // A new memory comes back whole, with its (empty) points; the laptop is told without them.
        let lisbon = try await phone.ok("create") {
            $0.createMemory(title: "Lisbon", date: "2025-06-14", placeName: "Alfama", position: Self.alfama, completion: $1)
        }
        #expect(lisbon.title == "Lisbon" && lisbon.date == "2025-06-14" && lisbon.placeName == "Alfama")
        #expect(lisbon.position == Self.alfama && lisbon.pointCount == 0 && lisbon.points == [] && lisbon.createdAt == lisbon.updatedAt)
        var listed = lisbon
        listed.points = nil
        try await laptop.waitFor("created") { _ in Self.changes(laptop) == [.created(listed)] }
        let porto = try await phone.ok("create without a place") { $0.createMemory(title: "Porto", date: "2024-09-01", completion: $1) }
        #expect(porto.placeName == "" && porto.position == nil)
        #expect(try await phone.failure { $0.createMemory(title: "x", date: "2025-02-29", completion: $1) }.serverCode == "bad_request")

        // The list: the newest day first, without points.
        var portoListed = porto
        portoListed.points = nil
        #expect(try await laptop.ok("memories") { $0.memories(completion: $1) } == [listed, portoListed])

        // Points: added, changed, read back by time, deleted; each change told with the memory's new count.
        let start = lisbon.createdAt
        let tram = try await phone.ok("point") {
            $0.addPoint(to: lisbon.id, time: start + 60_000, position: Self.miradouro, placeName: "Miradouro", note: "tram 28", completion: $1)
        }
        #expect(tram.time == start + 60_000 && tram.position == Self.miradouro && tram.note == "tram 28" && tram.photos == [])
        let earlier = try await laptop.ok("point from the laptop") { $0.addPoint(to: lisbon.id, time: start, note: "arrival", completion: $1) }
        #expect(earlier.placeName == "" && earlier.position == nil && earlier.id != tram.id)
        let moved = try await phone.ok("point update") {
            $0.updatePoint(tram.id, of: lisbon.id, position: .remove, note: "tram 28, full", completion: $1)
        }
        #expect(moved == MemoryPoint(id: tram.id, time: tram.time, placeName: "Miradouro", note: "tram 28, full"))
        let read = try await bob.failure { $0.memory(lisbon.id, completion: $1) }
        #expect(read.serverCode == "memory_not_found", "a stranger's read is answered as a memory that does not exist")
        let full = try await laptop.ok("memory") { $0.memory(lisbon.id, completion: $1) }
        #expect(full.points == [earlier, moved] && full.pointCount == 2 && full.updatedAt >= lisbon.updatedAt)
        #expect(try await phone.failure { $0.addPoint(to: lisbon.id, time: start, photos: [Self.photo], completion: $1) }.serverCode == "photo_not_found")
        #expect(try await phone.failure { $0.deletePoint(99, of: lisbon.id, completion: $1) }.serverCode == "point_not_found")
        try await phone.ok("point delete") { $0.deletePoint(earlier.id, of: lisbon.id, completion: $1) }

        // The memory itself: renamed, its position removed; the result has no points.
        let renamed = try await laptop.ok("update") { $0.updateMemory(lisbon.id, title: "Lisboa", position: .remove, completion: $1) }
        #expect(renamed.title == "Lisboa" && renamed.position == nil && renamed.placeName == "Alfama" && renamed.pointCount == 1 && renamed.points == nil)

        // bob can neither change nor delete it, nor add to it: it does not exist for him.
        #expect(try await bob.failure { $0.updateMemory(lisbon.id, title: "mine", completion: $1) }.serverCode == "memory_not_found")
        #expect(try await bob.failure { $0.addPoint(to: lisbon.id, time: start, completion: $1) }.serverCode == "memory_not_found")
        #expect(try await bob.failure { $0.deletePoint(tram.id, of: lisbon.id, completion: $1) }.serverCode == "memory_not_found")
        #expect(try await bob.failure { $0.deleteMemory(lisbon.id, completion: $1) }.serverCode == "memory_not_found")
        #expect(try await bob.ok("bob's memories") { $0.memories(completion: $1) } == [])

        try await phone.ok("delete") { $0.deleteMemory(porto.id, completion: $1) }
        #expect(try await phone.failure { $0.memory(porto.id, completion: $1) }.serverCode == "memory_not_found")

        // Both devices were told every change, in order — the one that made it too.
        for device in [phone, laptop] {
            try await device.waitFor("every change") { _ in Self.changes(device).count == 8 }
            let changes = Self.changes(device)
            #expect(Array(changes.prefix(2)) == [.created(listed), .created(portoListed)])
            guard changes.count == 8 else { continue }
            guard case .pointAdded(let first, tram) = changes[2], case .pointAdded(let second, earlier) = changes[3] else {
                Issue.record("points added: \(changes[2...3])")
                continue
            }
            #expect(first.pointCount == 1 && second.pointCount == 2 && second.points == nil)
            guard case .pointUpdated(_, moved) = changes[4], case .pointDeleted(let after, earlier.id) = changes[5] else {
                Issue.record("point changes: \(changes[4...5])")
                continue
            }
            #expect(after.pointCount == 1)
            #expect(changes[6] == .updated(renamed) && changes[7] == .deleted(memory: porto.id) && changes[7].memoryID == porto.id)
        }
        #expect(Self.changes(bob).isEmpty, "memories are private: no event reaches another user")
    }
}
