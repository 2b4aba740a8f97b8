import ChildProcessExit
import Foundation
import Testing

/// Photos and memories on a disk that refuses writes (a file-size limit, as in
/// `DurabilityDiskFullTests`): refused with `unavailable`, never half-stored, and still served.
@Suite(.ownThread) struct DurabilityPhotoTests {
    @Test func aFullDiskRefusesNewPhotosAndMemoriesAndStillServesTheOldOnes() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        // No file of the server may grow past 32 KiB.
        let server = try await DurableServer.start(["--max-photo-size", "100000"], dataDirectory: data, fileSizeBlocks: 64)
        let alice = try ProtocolClient(port: server.port)
        let token = try alice.signup("alice")
        let small = PhotoRequest.photo(1, count: 1000)
        #expect(try PhotoRequest.upload(small, token: token, port: server.port).status == 201)
        let memory = try #require(try alice.ok("memory_create", ["title": "Kept", "date": "2025-05-05"])["memory"] as? JSONObject)
        let id = try #require(JSON.int(memory["id"]))
        try alice.ok("point_add", ["memory": id, "time": 1, "photos": [PhotoRequest.hash(small)]])

        // A photo larger than a file may grow: its write fails, and nobody owns it.
        let big = PhotoRequest.photo(2, count: 40_000)
        let refusedPhoto = try PhotoRequest.upload(big, token: token, port: server.port)
        #expect(refusedPhoto.status == 503 && refusedPhoto.errorCode == "unavailable")
        #expect(try alice.errorCode("point_add", ["memory": id, "time": 2, "photos": [PhotoRequest.hash(big)]]) == "photo_not_found")

        // Fill the log until it refuses a write.
        var full = false
        for n in 1...400 where !full {
            let reply = try alice.request("publish", ["channel": "room:full", "data": ["n": n, "text": String(repeating: "full disk ", count: 60)]])
            guard let error = reply["error"] as? JSONObject else { continue }
            if error["code"] as? String == "rate_limited" {
                try await Task.sleep(for: .milliseconds(JSON.int(error["retry_after_ms"]) ?? 100))
                continue
            }
            #expect(error["code"] as? String == "unavailable")
            full = true
        }
        #expect(full, "400 publishes of 600 bytes fit in a 32 KiB log?")
        // Writes are refused up front now: an upload before its body is sent.
        let early = try PhotoRequest(port: server.port)
        try early.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: 500", "Expect: 100-continue"])
        let refusedEarly = try early.readResponse()
        #expect(refusedEarly.status == 503 && refusedEarly.errorCode == "unavailable")
        #expect(try alice.errorCode("memory_create", ["title": "t", "date": "2025-01-01"]) == "unavailable")
        #expect(try alice.errorCode("point_delete", ["memory": id, "point": 1]) == "unavailable")
        // Reads go on.
        let kept = try #require(try alice.ok("memory", ["memory": id])["memory"] as? JSONObject)
        #expect(JSON.int(kept["point_count"]) == 1)
        #expect(try PhotoRequest.download(PhotoRequest.hash(small), token: token, port: server.port).body == small)
        #expect(try await server.stop() == 0)
    }
}
