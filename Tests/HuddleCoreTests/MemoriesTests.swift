import Foundation
@testable import HuddleCore
import HuddleProtocol
import Testing

/// protocol.md "Memories and photos", in the core: the rules, ownership, the bounds, the
/// `memory_changed` events, and that the commands rebuild the same state.
@Suite struct MemoriesTests {
    static let lisbon = MemoryPosition(latitude: 38.7223, longitude: -9.1393)

    static func hash(_ seed: Int) -> String {
        let hex = String(seed, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    /// alice on two devices, bob on one.
    private func setUp() -> (CoreHarness, alice: ConnectionRef, alicePhone: ConnectionRef, aliceSession: NewSession, bob: ConnectionRef) {
        let harness = CoreHarness()
        let (alice, session) = harness.signUp("alice")
        let alicePhone = harness.connectSignedIn(with: session)
        let (bob, _) = harness.signUp("bob")
        return (harness, alice, alicePhone, session, bob)
    }

    @discardableResult
    private func create(
        _ harness: CoreHarness, _ connection: ConnectionRef, title: String = "Lisbon", date: String = "2025-06-14",
        position: MemoryPositionEdit? = .set(MemoriesTests.lisbon)
    ) -> StoredMemory? {
        let step = harness.handle(.createMemory(connection, requestID: "c", MemoryFields(title: title, date: date, placeName: "Alfama", position: position)))
        guard case .memory(let memory, _)? = step.replies.first else { return nil }
        return memory
    }

    private func addPoint(_ harness: CoreHarness, _ connection: ConnectionRef, _ memory: UInt64, _ fields: MemoryPointFields) -> CoreStep {
        harness.handle(.addMemoryPoint(connection, requestID: "p", memory: memory, fields))
    }

    /// Records `hash` as uploaded by the session's user, as the server does after storing it.
    @discardableResult
    private func upload(_ harness: CoreHarness, _ session: NewSession, _ hash: String, size: Int = 100) -> CoreStep {
        harness.handle(.recordPhoto(caller: ConnectionRef(loop: 0, serial: 900), tokenHash: session.tokenHash, hash: hash, size: size))
    }

    private func photoAccess(_ step: CoreStep) -> PhotoAccess? {
        guard step.outputs.count == 1, case .photoAccess(_, let access) = step.outputs[0] else { return nil }
        return access
    }

    @Test func createListReadUpdateAndDelete() throws {
        let (harness, alice, alicePhone, _, bob) = setUp()
        let first = try #require(create(harness, alice, title: "Lisbon", date: "2025-06-14"))
        #expect(first.id == 1 && first.owner == "alice" && first.placeName == "Alfama" && first.position == Self.lisbon)
        #expect(first.createdAt == harness.time && first.updatedAt == harness.time && first.points.isEmpty)
        harness.advance(10)
        let second = try #require(create(harness, alice, title: "Porto", date: "2025-07-01", position: nil))
        let third = try #require(create(harness, alice, title: "Sintra", date: "2025-06-14"))
        #expect(second.position == nil)
        #expect(harness.handle(.listMemories(alice, requestID: "l")).replies == [.memories([second, third, first])], "newest date first, then newest")
        #expect(harness.handle(.listMemories(bob, requestID: "l")).replies == [.memories([])])

        harness.advance(10)
        let update = harness.handle(.updateMemory(alicePhone, requestID: "u", memory: first.id, MemoryFields(title: "Lisboa", position: .remove)))
        guard case .memory(let updated, includingPoints: false)? = update.replies.first else {
            Issue.record("\(update.outputs)")
            return
        }
        #expect(updated.title == "Lisboa" && updated.date == "2025-06-14" && updated.placeName == "Alfama" && updated.position == nil)
        #expect(updated.updatedAt == harness.time && updated.createdAt == first.createdAt)
        #expect(harness.handle(.readMemory(alice, requestID: "r", memory: first.id)).replies == [.memory(updated, includingPoints: true)])

        #expect(harness.handle(.deleteMemory(alice, requestID: "d", memory: second.id)).replies == [.done])
        #expect(harness.handle(.readMemory(alice, requestID: "r", memory: second.id)).errorCode == .memoryNotFound)
        #expect(harness.handle(.deleteMemory(alice, requestID: "d", memory: second.id)).errorCode == .memoryNotFound)
        // Ids are never reused.
        #expect(create(harness, alice)?.id == 4)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func everyChangeReachesEveryDeviceOfTheOwnerAndNobodyElse() throws {
        let (harness, alice, alicePhone, session, bob) = setUp()
        let step = harness.handle(.createMemory(alice, requestID: "c", MemoryFields(title: "Lisbon", date: "2025-06-14")))
        let memory = try #require(harness.core.durableState.memories[1])
        #expect(step.outputs == [
            .reply(alice, requestID: "c", .memory(memory, includingPoints: true)),
            .memoryChanged(.created(memory.shown()), to: [alice, alicePhone]),
        ])
        upload(harness, session, Self.hash(1))
        let added = addPoint(harness, alicePhone, 1, MemoryPointFields(time: 5, note: "tram 28", photos: [Self.hash(1)]))
        let point = try #require(harness.core.durableState.memories[1]?.point(1))
        #expect(point.photos == [Self.hash(1)] && point.note == "tram 28" && point.placeName == "" && point.position == nil)
        #expect(added.outputs == [
            .reply(alicePhone, requestID: "p", .memoryPoint(memory: 1, point)),
            .memoryChanged(.pointAdded(harness.core.durableState.memories[1]!.shown(), point), to: [alice, alicePhone]),
        ])
        let changed = harness.handle(.updateMemoryPoint(alice, requestID: "u", memory: 1, point: 1, MemoryPointFields(note: "")))
        #expect(changed.outputs.last.map { if case .memoryChanged(.pointUpdated(_, let updated), [alice, alicePhone]) = $0 { updated.note == "" } else { false } } == true)
        let deleted = harness.handle(.deleteMemoryPoint(alice, requestID: "d", memory: 1, point: 1))
        #expect(deleted.outputs.last == .memoryChanged(.pointDeleted(harness.core.durableState.memories[1]!.shown(), point: 1), to: [alice, alicePhone]))
        let gone = harness.handle(.deleteMemory(alicePhone, requestID: "d", memory: 1))
        #expect(gone.outputs.last == .memoryChanged(.deleted(memory: 1), to: [alice, alicePhone]))
        // bob's own changes go to bob alone.
        let bobs = harness.handle(.createMemory(bob, requestID: "c", MemoryFields(title: "Bob's", date: "2024-01-01")))
        #expect(bobs.outputs.count == 2)
        #expect(bobs.outputs.last.map { if case .memoryChanged(_, [bob]) = $0 { true } else { false } } == true)
    }

    @Test func someoneElsesMemoryIsNotFoundAndUntouched() throws {
        let (harness, alice, alicePhone, session, bob) = setUp()
        let memory = try #require(create(harness, alice))
        upload(harness, session, Self.hash(1))
        #expect(addPoint(harness, alice, memory.id, MemoryPointFields(time: 1)).errorCode == nil)
        let before = harness.core.durableState
        let attempts: [CoreRequest] = [
            .readMemory(bob, requestID: "x", memory: memory.id),
            .updateMemory(bob, requestID: "x", memory: memory.id, MemoryFields(title: "mine")),
            .deleteMemory(bob, requestID: "x", memory: memory.id),
            .addMemoryPoint(bob, requestID: "x", memory: memory.id, MemoryPointFields(time: 1)),
            .updateMemoryPoint(bob, requestID: "x", memory: memory.id, point: 1, MemoryPointFields(note: "mine")),
            .deleteMemoryPoint(bob, requestID: "x", memory: memory.id, point: 1),
        ]
        for request in attempts {
            let step = harness.handle(request)
            #expect(step.errorCode == .memoryNotFound, "\(request)")
            #expect(step.commands.isEmpty && step.outputs.count == 1, "no event to anyone")
            // Exactly what a memory that does not exist gets: nothing tells the two apart.
            #expect(step.error?.message == "you have no memory \(memory.id)")
        }
        #expect(harness.handle(.readMemory(bob, requestID: "x", memory: 99)).error?.message == "you have no memory 99")
        #expect(harness.core.durableState == before)
        // alice's photo is not bob's to use either.
        let bobsMemory = try #require(create(harness, bob))
        #expect(addPoint(harness, bob, bobsMemory.id, MemoryPointFields(time: 1, photos: [Self.hash(1)])).errorCode == .photoNotFound)
        #expect(harness.handle(.updateMemoryPoint(alicePhone, requestID: "x", memory: memory.id, point: 9, MemoryPointFields(note: ""))).errorCode == .pointNotFound)
        #expect(harness.handle(.deleteMemoryPoint(alicePhone, requestID: "x", memory: memory.id, point: 9)).errorCode == .pointNotFound)
    }

    @Test func valuesAreCheckedAndRefusalsChangeNothing() throws {
        let (harness, alice, _, session, _) = setUp()
        let memory = try #require(create(harness, alice))
        upload(harness, session, Self.hash(1))
        let before = harness.core.durableState
        let badMemories: [(MemoryFields, String)] = [
            (MemoryFields(date: "2025-01-01"), "title is required"),
            (MemoryFields(title: "t"), "date is required"),
            (MemoryFields(title: "", date: "2025-01-01"), "title must be 1 to 200 characters"),
            (MemoryFields(title: String(repeating: "é", count: 201), date: "2025-01-01"), "title must be 1 to 200 characters"),
            (MemoryFields(title: "t", date: "2025-02-29"), "date must be a calendar day written YYYY-MM-DD"),
            (MemoryFields(title: "t", date: "2025-13-01"), "date must be a calendar day written YYYY-MM-DD"),
            (MemoryFields(title: "t", date: "2025-6-14"), "date must be a calendar day written YYYY-MM-DD"),
            (MemoryFields(title: "t", date: "0000-01-01"), "date must be a calendar day written YYYY-MM-DD"),
            (MemoryFields(title: "t", date: "2025-01-0x"), "date must be a calendar day written YYYY-MM-DD"),
            (MemoryFields(title: "t", date: "2025-01-01", placeName: String(repeating: "p", count: 201)), "place_name must be at most 200 characters"),
            (MemoryFields(title: "t", date: "2025-01-01", position: .set(MemoryPosition(latitude: 90.000001, longitude: 0))),
             "position.lat must be a number from -90 to 90"),
            (MemoryFields(title: "t", date: "2025-01-01", position: .set(MemoryPosition(latitude: 0, longitude: -180.5))),
             "position.lon must be a number from -180 to 180"),
            (MemoryFields(title: "t", date: "2025-01-01", position: .set(MemoryPosition(latitude: .infinity, longitude: 0))),
             "position.lat must be a number from -90 to 90"),
            (MemoryFields(title: "t", date: "2025-01-01", position: .set(MemoryPosition(latitude: 0, longitude: .nan))),
             "position.lon must be a number from -180 to 180"),
        ]
        for (fields, message) in badMemories {
            let step = harness.handle(.createMemory(alice, requestID: "c", fields))
            #expect(step.error == CoreError(.badRequest, message), "\(fields)")
        }
        let update = harness.handle(.updateMemory(alice, requestID: "u", memory: memory.id, MemoryFields(position: .set(MemoryPosition(latitude: -91, longitude: 0)))))
        #expect(update.error == CoreError(.badRequest, "position.lat must be a number from -90 to 90"))
        let badPoints: [(MemoryPointFields, String)] = [
            (MemoryPointFields(note: "n"), "time is required"),
            (MemoryPointFields(time: MemoryRules.times.upperBound + 1), "time must be milliseconds since 1970 between the years 1 and 9999"),
            (MemoryPointFields(time: 1, position: .set(MemoryPosition(latitude: 0, longitude: 181))), "position.lon must be a number from -180 to 180"),
            (MemoryPointFields(time: 1, note: String(repeating: "n", count: 2001)), "note must be at most 2000 characters"),
            (MemoryPointFields(time: 1, placeName: String(repeating: "p", count: 201)), "place_name must be at most 200 characters"),
            (MemoryPointFields(time: 1, photos: (1...21).map(Self.hash)), "a point holds at most 20 photos"),
            (MemoryPointFields(time: 1, photos: [Self.hash(1), "ABC"]), "photos[1] is not a photo hash (64 lowercase hex digits)"),
            (MemoryPointFields(time: 1, photos: [Self.hash(0xABCDEF).uppercased()]), "photos[0] is not a photo hash (64 lowercase hex digits)"),
            (MemoryPointFields(time: 1, photos: [Self.hash(1), Self.hash(1)]), "photos lists a photo twice"),
        ]
        for (fields, message) in badPoints {
            #expect(addPoint(harness, alice, memory.id, fields).error == CoreError(.badRequest, message), "\(fields)")
        }
        #expect(harness.core.durableState == before)
        // The edges are in.
        #expect(create(harness, alice, title: String(repeating: "é", count: 200), date: "2024-02-29",
                       position: .set(MemoryPosition(latitude: -90, longitude: 180))) != nil)
        #expect(create(harness, alice, date: "9999-12-31") != nil && create(harness, alice, date: "0001-01-01") != nil)
        #expect(addPoint(harness, alice, memory.id, MemoryPointFields(time: MemoryRules.times.lowerBound, note: String(repeating: "n", count: 2000))).errorCode == nil)
    }

    @Test func pointsStayInTimeOrderAndKeepTheirIds() throws {
        let (harness, alice, _, session, _) = setUp()
        let memory = try #require(create(harness, alice))
        upload(harness, session, Self.hash(1))
        upload(harness, session, Self.hash(2))
        for time: Int64 in [30, 10, 20] { #expect(addPoint(harness, alice, memory.id, MemoryPointFields(time: time)).errorCode == nil) }
        var points = harness.core.durableState.memories[memory.id]!.points
        #expect(points.map(\.id) == [2, 3, 1] && points.map(\.time) == [10, 20, 30])
        let moved = harness.handle(.updateMemoryPoint(
            alice, requestID: "u", memory: memory.id, point: 2,
            MemoryPointFields(time: 40, position: .set(Self.lisbon), placeName: "Belém", photos: [Self.hash(2), Self.hash(1)])))
        #expect(moved.errorCode == nil)
        points = harness.core.durableState.memories[memory.id]!.points
        #expect(points.map(\.id) == [3, 1, 2])
        #expect(points[2] == MemoryPoint(id: 2, time: 40, position: Self.lisbon, placeName: "Belém", note: "", photos: [Self.hash(2), Self.hash(1)]))
        #expect(harness.handle(.updateMemoryPoint(alice, requestID: "u", memory: memory.id, point: 2, MemoryPointFields(position: .remove))).errorCode == nil)
        #expect(harness.core.durableState.memories[memory.id]!.point(2)?.position == nil)
        #expect(harness.handle(.deleteMemoryPoint(alice, requestID: "d", memory: memory.id, point: 2)).replies == [.done])
        #expect(addPoint(harness, alice, memory.id, MemoryPointFields(time: 1)).replies.first.map { if case .memoryPoint(_, let point) = $0 { point.id == 4 } else { false } } == true)
        #expect(harness.core.durableState.memories[memory.id]!.updatedAt == harness.time)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func theBoundsHold() throws {
        let (harness, alice, _, session, bob) = setUp()
        for index in 0..<MemoryLimits.memoriesPerUser {
            #expect(create(harness, alice, title: "m\(index)") != nil)
        }
        #expect(harness.handle(.createMemory(alice, requestID: "c", MemoryFields(title: "one more", date: "2025-01-01"))).errorCode == .tooManyMemories)
        #expect(create(harness, bob) != nil, "the bound is per user")
        harness.handle(.deleteMemory(alice, requestID: "d", memory: 1))
        #expect(create(harness, alice) != nil, "deleting makes room")

        let memory = try #require(create(harness, bob))
        for index in 0..<MemoryLimits.pointsPerMemory {
            #expect(addPoint(harness, bob, memory.id, MemoryPointFields(time: Int64(index))).errorCode == nil)
        }
        #expect(addPoint(harness, bob, memory.id, MemoryPointFields(time: 0)).errorCode == .tooManyPoints)

        for index in 0..<MemoryLimits.photosPerUser {
            #expect(photoAccess(upload(harness, session, Self.hash(index)))?.isStored == true)
        }
        #expect(photoAccess(upload(harness, session, Self.hash(MemoryLimits.photosPerUser)))?.isRefusal(.tooManyPhotos) == true)
        #expect(photoAccess(upload(harness, session, Self.hash(0))) == .stored(hash: Self.hash(0), size: 100, newlyOwned: false), "one already owned is still fine")
    }

    /// Issue 12: 10 000 photos of 10 MiB each were allowed per user; the quota bounds the bytes.
    @Test func thePhotoQuotaCountsTheBytesAUserOwns() throws {
        var configuration = CoreConfiguration()
        configuration.photoQuotaBytes = 1000
        let harness = CoreHarness(configuration: configuration)
        let (_, alice) = harness.signUp("alice")
        let (_, bob) = harness.signUp("bob")
        #expect(photoAccess(upload(harness, alice, Self.hash(1), size: 600))?.isStored == true)
        let over = upload(harness, alice, Self.hash(2), size: 401)
        #expect(over.commands.isEmpty && photoAccess(over)?.isRefusal(.photoQuotaExceeded) == true)
        #expect(photoAccess(upload(harness, alice, Self.hash(2), size: 400))?.isStored == true, "exactly the quota fits")
        #expect(photoAccess(upload(harness, alice, Self.hash(1), size: 600))?.isStored == true, "one already owned costs nothing")
        let caller = ConnectionRef(loop: 1, serial: 7)
        #expect(photoAccess(harness.handle(.authorizePhotoUpload(caller: caller, tokenHash: alice.tokenHash, size: 1)))?.isRefusal(.photoQuotaExceeded) == true,
                "an upload that cannot fit is refused before any body is read")
        // Another user's quota is their own; the same bytes count at their stored size.
        #expect(photoAccess(harness.handle(.authorizePhotoUpload(caller: caller, tokenHash: bob.tokenHash, size: 1000))) == .uploadAllowed(user: "bob"))
        #expect(photoAccess(harness.handle(.authorizePhotoUpload(caller: caller, tokenHash: bob.tokenHash, size: 1001)))?.isRefusal(.photoQuotaExceeded) == true)
        #expect(photoAccess(upload(harness, bob, Self.hash(1), size: 600))?.isStored == true)
    }

    @Test func photosBelongToWhoeverUploadedTheBytes() throws {
        let harness = CoreHarness()
        let (_, alice) = harness.signUp("alice")
        let (_, bob) = harness.signUp("bob")
        let (_, carol) = harness.signUp("carol")
        let caller = ConnectionRef(loop: 1, serial: 7)
        let photo = Self.hash(42)
        #expect(harness.handle(.authorizePhotoUpload(caller: caller, tokenHash: alice.tokenHash, size: 1234)).outputs == [.photoAccess(caller: caller, .uploadAllowed(user: "alice"))])
        let first = upload(harness, alice, photo, size: 1234)
        #expect(first.commands == [.addPhotoOwner(owner: "alice", hash: photo, size: 1234, time: harness.time)])
        #expect(photoAccess(first) == .stored(hash: photo, size: 1234, newlyOwned: true))
        let again = upload(harness, alice, photo, size: 1234)
        #expect(again.commands.isEmpty && photoAccess(again) == .stored(hash: photo, size: 1234, newlyOwned: false))
        // bob uploads the same bytes: he owns them too, and is not told anyone else had them.
        #expect(photoAccess(upload(harness, bob, photo, size: 1234)) == .stored(hash: photo, size: 1234, newlyOwned: true))
        #expect(harness.core.durableState.photos.count == 1)
        let read = { (session: NewSession) in self.photoAccess(harness.handle(.authorizePhotoRead(caller: caller, tokenHash: session.tokenHash, hash: photo))) }
        #expect(read(alice) == .readAllowed(hash: photo, size: 1234))
        #expect(read(bob) == .readAllowed(hash: photo, size: 1234))
        // A stranger hears what a missing photo gets.
        let stranger = read(carol)
        let missing = photoAccess(harness.handle(.authorizePhotoRead(caller: caller, tokenHash: alice.tokenHash, hash: Self.hash(43))))
        #expect(stranger == .refused(CoreError(.photoNotFound, "no such photo")) && stranger == missing)

        let unknown = CoreHarness.tokenHash(999)
        #expect(photoAccess(harness.handle(.authorizePhotoUpload(caller: caller, tokenHash: unknown, size: 1))) == .refused(CoreError(.invalidToken, "unknown or revoked token")))
        #expect(photoAccess(harness.handle(.recordPhoto(caller: caller, tokenHash: unknown, hash: photo, size: 1)))
            == .refused(CoreError(.invalidToken, "unknown or revoked token")))
        #expect(photoAccess(harness.handle(.recordPhoto(caller: caller, tokenHash: carol.tokenHash, hash: "x", size: 1)))?.isRefusal(.badRequest) == true)
        harness.advance(CoreHarness.sessionLifetime)
        #expect(photoAccess(harness.handle(.authorizePhotoRead(caller: caller, tokenHash: alice.tokenHash, hash: photo)))?.isRefusal(.tokenExpired) == true)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    /// The scenario's commands rebuild the state, the state survives its snapshot encoding, and
    /// a snapshot from before memories existed still loads.
    @Test func replayAndSnapshotsRebuildTheSameMemories() throws {
        let (harness, alice, _, session, bob) = setUp()
        upload(harness, session, Self.hash(7), size: 99)
        let memory = try #require(create(harness, alice))
        #expect(addPoint(harness, alice, memory.id, MemoryPointFields(time: 3, position: .set(MemoryPosition(latitude: -0.0, longitude: 1e-5)), photos: [Self.hash(7)])).errorCode == nil)
        #expect(addPoint(harness, alice, memory.id, MemoryPointFields(time: 1, note: "\u{1}\"quoted\"")).errorCode == nil)
        harness.handle(.updateMemory(alice, requestID: "u", memory: memory.id, MemoryFields(date: "2024-12-31")))
        create(harness, bob, title: "Bob's", position: nil)
        let doomed = try #require(create(harness, bob, title: "gone"))
        harness.handle(.deleteMemory(bob, requestID: "d", memory: doomed.id))
        harness.handle(.deleteMemoryPoint(alice, requestID: "d", memory: memory.id, point: 2))

        let state = harness.core.durableState
        #expect(state.memories[memory.id]?.points.first?.position == MemoryPosition(latitude: 0, longitude: 1e-5), "-0 kept as 0")
        #expect(harness.replayed().durableState == state)
        let decoded = try RecordCoding.roundTrip(state)
        #expect(decoded == state)
        #expect(decoded.memories.nextID == state.memories.nextID && decoded.memories.memories(of: "bob").count == 1)
        for command in harness.log {
            #expect(try RecordCoding.roundTrip(command) == command)
        }

        let old = #"{"accounts":[],"sessions":[],"channels":{"createdCount":0,"channels":[]}}"#
        let loaded = try RecordCoding.state(old)
        #expect(loaded.memories.count == 0 && loaded.photos.count == 0)
    }

    @Test func corruptMemoriesAreRefused() {
        let empty = #""accounts":[],"sessions":[],"channels":{"createdCount":0,"channels":[]}"#
        let memory = { (id: Int, points: String) in
            #"{"id":\#(id),"owner":"alice","title":"t","date":"2025-01-01","placeName":"","createdAt":1,"updatedAt":1,"points":\#(points),"nextPointID":3}"#
        }
        let point = { (id: Int, time: Int) in #"{"id":\#(id),"time":\#(time),"placeName":"","note":"","photos":[]}"# }
        let valid = #"{\#(empty),"memories":{"nextID":3,"memories":[\#(memory(1, "[\(point(1, 5)),\(point(2, 6))]"))]}}"#
        #expect(throws: Never.self) { try RecordCoding.state(valid) }
        let corrupt = [
            #"{\#(empty),"memories":{"nextID":3,"memories":[\#(memory(1, "[]")),\#(memory(1, "[]"))]}}"#,
            #"{\#(empty),"memories":{"nextID":1,"memories":[\#(memory(1, "[]"))]}}"#,
            #"{\#(empty),"memories":{"nextID":3,"memories":[\#(memory(1, "[\(point(1, 6)),\(point(2, 5))]"))]}}"#,
            #"{\#(empty),"memories":{"nextID":3,"memories":[\#(memory(1, "[\(point(3, 5))]"))]}}"#,
            #"{\#(empty),"photos":[{"hash":"\#(Self.hash(1))","size":1,"owners":["a","a"]}]}"#,
            #"{\#(empty),"photos":[{"hash":"../etc/passwd","size":1,"owners":["a"]}]}"#,
            #"{\#(empty),"photos":[{"hash":"\#(Self.hash(1))","size":1,"owners":["a"]},{"hash":"\#(Self.hash(1))","size":1,"owners":["b"]}]}"#,
        ]
        for text in corrupt {
            #expect(throws: RecordDecodingError.self, "\(text)") { try RecordCoding.state(text) }
        }
    }

    /// The log stores these names: renaming a case or label breaks every existing log.
    @Test func theLoggedFieldNamesAreStable() throws {
        let text = { (command: CoreCommand) in RecordCoding.json(command) }
        #expect(try text(.createMemory(owner: "alice", id: 1, title: "t", date: "2025-01-01", placeName: "p", position: MemoryPosition(latitude: 1.5, longitude: -2), time: 9))
            == #"{"createMemory":{"date":"2025-01-01","id":1,"owner":"alice","placeName":"p","position":{"latitude":1.5,"longitude":-2.0},"time":9,"title":"t"}}"#)
        #expect(try text(.deleteMemory(owner: "alice", id: 1, time: 9)) == #"{"deleteMemory":{"id":1,"owner":"alice","time":9}}"#)
        #expect(try text(.putMemoryPoint(owner: "alice", memory: 1, point: MemoryPoint(id: 2, time: 3, position: nil, placeName: "", note: "n", photos: ["h"]), time: 9))
            == #"{"putMemoryPoint":{"memory":1,"owner":"alice","point":{"id":2,"note":"n","photos":["h"],"placeName":"","time":3},"time":9}}"#)
        #expect(try text(.deleteMemoryPoint(owner: "alice", memory: 1, point: 2, time: 9)) == #"{"deleteMemoryPoint":{"memory":1,"owner":"alice","point":2,"time":9}}"#)
        #expect(try text(.addPhotoOwner(owner: "alice", hash: "h", size: 5, time: 9)) == #"{"addPhotoOwner":{"hash":"h","owner":"alice","size":5,"time":9}}"#)
    }
}

extension PhotoAccess {
    var isStored: Bool {
        if case .stored = self { return true }
        return false
    }

    func isRefusal(_ code: CoreErrorCode) -> Bool {
        if case .refused(let error) = self { return error.code == code }
        return false
    }
}
