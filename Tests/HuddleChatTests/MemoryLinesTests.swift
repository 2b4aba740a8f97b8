import HuddleClient
import HuddleProtocol
import Testing
@testable import huddle_chat

/// huddle-chat's memory lines, its hints for the memory errors, and how it tells its own
/// changes' echoes from another device's changes.
@Suite struct MemoryLinesTests {
    static let lisbon = Memory(
        id: 12, title: "Lis\u{1B}[2Jbon", date: "2025-06-14", placeName: "Alfama", position: MemoryPosition(latitude: 38.7223, longitude: -9.1393),
        createdAt: 1, updatedAt: 2, pointCount: 2)

    @Test func memoriesAndPointsAreWordedForTheReader() {
        #expect(ChatLines.memory(Self.lisbon) == "12 2025-06-14 \"Lis\u{FFFD}[2Jbon\" at Alfama (38.7223, -9.1393) (2 points)")
        let porto = Memory(id: 3, title: "Porto", date: "2024-09-01", createdAt: 1, updatedAt: 1, pointCount: 1)
        #expect(ChatLines.memories([porto]) == "[memories] 3 2024-09-01 \"Porto\" (1 point)")
        #expect(ChatLines.memories([]) == "[memories] none yet: /memory-new DATE TITLE")

        let now = ChatClock.nowMilliseconds()
        let clock = ChatClock.time(now)
        let tram = MemoryPoint(id: 4, time: now, placeName: "Miradouro", note: "tram 28", photos: ["a", "b"])
        #expect(ChatLines.point(tram, now: now) == "\(clock) \"tram 28\" at Miradouro, 2 photos")
        let bare = MemoryPoint(id: 5, time: now, position: MemoryPosition(latitude: 1.5, longitude: -2), photos: ["a"])
        #expect(ChatLines.point(bare, now: now) == "\(clock) \"\" (1.5, -2.0), 1 photo")

        #expect(ChatLines.memoryChange(.created(porto)) == "[memory] new: 3 2024-09-01 \"Porto\" (1 point)")
        #expect(ChatLines.memoryChange(.updated(porto)) == "[memory] changed: 3 2024-09-01 \"Porto\" (1 point)")
        #expect(ChatLines.memoryChange(.deleted(memory: 3)) == "[memory] 3 deleted")
        #expect(ChatLines.memoryChange(.pointAdded(porto, tram), now: now) == "[memory] point 3.4 added to \"Porto\": \(clock) \"tram 28\" at Miradouro, 2 photos")
        #expect(ChatLines.memoryChange(.pointUpdated(porto, bare), now: now) == "[memory] point 3.5 changed in \"Porto\": \(clock) \"\" (1.5, -2.0), 1 photo")
        #expect(ChatLines.memoryChange(.pointDeleted(porto, point: 4)) == "[memory] point 3.4 deleted from \"Porto\"")
    }

    @Test func memoryErrorsSayWhatHelps() {
        #expect(ChatLines.error(.server(code: "memory_not_found", message: "no memory 9", retryAfterMilliseconds: nil))
            == "[error] memory_not_found: no memory 9 (/memories lists yours)")
        #expect(ChatLines.error(.server(code: "photo_not_found", message: "no photo", retryAfterMilliseconds: nil))
            == "[error] photo_not_found: no photo (upload it first: PUT /api/v1/photos)")
        #expect(ChatLines.memoryHint(code: "post_not_found", message: "m") == nil)
    }

    @Test func onlyTheEchoOfAnOwnChangeIsRecognised() {
        var echoes = MemoryEchoes()
        let porto = Memory(id: 3, title: "Porto", date: "2024-09-01", createdAt: 1, updatedAt: 1, pointCount: 1)
        let tram = MemoryPoint(id: 4, time: 1)
        echoes.expect(MemoryEchoes.key(.pointAdded(porto, tram)))
        echoes.expect(MemoryEchoes.key(.deleted(memory: 3)))
        let another = echoes.isEcho(.pointAdded(porto, MemoryPoint(id: 5, time: 1)))
        let created = echoes.isEcho(.created(porto))
        let deleted = echoes.isEcho(.deleted(memory: 3))
        let added = echoes.isEcho(.pointAdded(porto, tram))
        let addedAgain = echoes.isEcho(.pointAdded(porto, tram))
        #expect(!another, "another device's point")
        #expect(!created && deleted && added)
        #expect(!addedAgain, "an echo comes once")

        // Echoes lost with a dropped connection are forgotten, oldest first.
        for id in 1...UInt64(MemoryEchoes.limit + 1) { echoes.expect(MemoryEchoes.key(.deleted(memory: id))) }
        let oldest = echoes.isEcho(.deleted(memory: 1))
        let kept = echoes.isEcho(.deleted(memory: 2))
        #expect(!oldest && kept)
    }
}
