import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Memories and photos" and "Photos", over real sockets against the real binary:
/// memories kept in step across the owner's devices and hidden from everyone else, photos
/// uploaded and read with a session token, the size limit before and while the body arrives,
/// and everything across a restart.
@Suite(.ownThread) struct ProtocolMemoriesTests {
    static let maxPhotoSize = 100_000

    static func start(dataDirectory: URL? = nil, fsync: String = "no") async throws -> ServerProcess {
        try await startHuddle(["--max-photo-size", String(maxPhotoSize)], dataDirectory: dataDirectory, fsync: fsync)
    }

    /// alice on two devices (two sessions: her phone logged in on its own) and bob.
    private func people(port: Int) throws -> (
        laptop: ProtocolClient, laptopToken: String, phone: ProtocolClient, phoneToken: String, bob: ProtocolClient, bobToken: String
    ) {
        let (laptop, laptopToken) = try ProtocolClient.signedUp("alice", port: port)
        let phone = try ProtocolClient(port: port)
        let phoneToken = try phone.login("alice")
        let (bob, bobToken) = try ProtocolClient.signedUp("bob", port: port)
        return (laptop, laptopToken, phone, phoneToken, bob, bobToken)
    }

    @Test func aMemoryChangesOnEveryDeviceOfItsOwnerAndNowhereElse() async throws {
        let server = try await Self.start()
        let (laptop, _, phone, _, bob, _) = try people(port: server.port)

        let created = try laptop.ok("memory_create", [
            "title": "Lisbon", "date": "2025-06-14", "place_name": "Alfama", "position": ["lat": 38.7223, "lon": -9.1393],
        ])
        let memory = try #require(created["memory"] as? JSONObject)
        let id = try #require(JSON.int(memory["id"]))
        #expect(memory["title"] as? String == "Lisbon" && memory["date"] as? String == "2025-06-14" && memory["place_name"] as? String == "Alfama")
        #expect(JSON.text(memory["position"] ?? 0) == #"{"lat":38.7223,"lon":-9.1393}"#, "the coordinates as sent")
        #expect((memory["points"] as? [Any])?.isEmpty == true && JSON.int(memory["point_count"]) == 0)
        #expect(JSON.int(memory["created_at"]) == JSON.int(memory["updated_at"]))
        for device in [phone, laptop] {
            let event = try device.nextEvent("memory_changed")
            #expect(event["action"] as? String == "created" && JSON.int(event["memory_id"]) == id)
            #expect((event["memory"] as? JSONObject)?["title"] as? String == "Lisbon")
            #expect((event["memory"] as? JSONObject)?["points"] == nil, "events carry the memory without its points")
        }

        let point = try #require(try phone.ok("point_add", ["memory": id, "time": 1_750_000_000_000, "note": "tram 28"])["point"] as? JSONObject)
        #expect(JSON.int(point["id"]) == 1 && point["note"] as? String == "tram 28" && JSON.isNull(point["position"]))
        let added = try laptop.nextEvent("memory_changed")
        #expect(added["action"] as? String == "point_added" && (added["point"] as? JSONObject)?["note"] as? String == "tram 28")
        #expect(JSON.int((added["memory"] as? JSONObject)?["point_count"]) == 1)
        _ = try phone.nextEvent("memory_changed")

        try laptop.ok("point_update", ["memory": id, "point": 1, "place_name": "Graça", "position": ["lat": 38.716, "lon": -9.13]])
        try laptop.ok("memory_update", ["memory": id, "title": "Lisboa", "position": NSNull()])
        let updates = try (0..<2).map { _ in try phone.nextEvent("memory_changed") }
        #expect(updates.map { $0["action"] as? String } == ["point_updated", "updated"])
        #expect((updates[0]["point"] as? JSONObject)?["place_name"] as? String == "Graça")
        #expect(JSON.isNull((updates[1]["memory"] as? JSONObject)?["position"]), "null took the position away")

        let read = try #require(try phone.ok("memory", ["memory": id])["memory"] as? JSONObject)
        #expect(read["title"] as? String == "Lisboa")
        #expect((read["points"] as? [JSONObject])?.map { $0["place_name"] as? String } == ["Graça"])
        let second = try #require(try phone.ok("memory_create", ["title": "Porto", "date": "2025-07-01"])["memory"] as? JSONObject)
        let list = try #require(try laptop.ok("memories")["memories"] as? [JSONObject])
        #expect(list.map { $0["title"] as? String } == ["Porto", "Lisboa"], "newest date first")
        #expect(list.allSatisfy { $0["points"] == nil })

        // bob sees nothing of it, and his attempts on alice's ids are told "not found".
        #expect(try bob.eventIfAny(within: 0.3) == nil)
        #expect((try bob.ok("memories")["memories"] as? [Any])?.isEmpty == true)
        for (op, fields) in [
            ("memory", ["memory": id]), ("memory_update", ["memory": id, "title": "mine"]), ("memory_delete", ["memory": id]),
            ("point_add", ["memory": id, "time": 1]), ("point_update", ["memory": id, "point": 1, "note": "x"]),
            ("point_delete", ["memory": id, "point": 1]),
        ] as [(String, JSONObject)] {
            #expect(try bob.errorCode(op, fields) == "memory_not_found", "\(op)")
        }
        #expect(try bob.errorCode("memory", ["memory": 999]) == "memory_not_found")

        try phone.ok("point_delete", ["memory": id, "point": 1])
        try phone.ok("memory_delete", ["memory": JSON.int(second["id"])!])
        // The laptop heard of its own changes too (after their replies), then of the phone's.
        let laptopEvents = try (0..<5).map { _ in try laptop.nextEvent("memory_changed") }
        #expect(laptopEvents.map { $0["action"] as? String } == ["point_updated", "updated", "created", "point_deleted", "deleted"])
        #expect(JSON.int(laptopEvents[3]["point_id"]) == 1 && JSON.int(laptopEvents[4]["memory_id"]) == JSON.int(second["id"]))
        #expect(try laptop.errorCode("memory", ["memory": JSON.int(second["id"])!]) == "memory_not_found")
        #expect(try bob.eventIfAny(within: 0.2) == nil)
    }

    @Test func badValuesAreRefusedByName() async throws {
        let server = try await Self.start()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let refusals: [(JSONObject, String)] = [
            (["title": "t", "date": "2025-06-14", "position": ["lat": 91, "lon": 0]], "position.lat must be a number from -90 to 90"),
            (["title": "t", "date": "2025-06-14", "position": ["lat": 0, "lon": -180.01]], "position.lon must be a number from -180 to 180"),
            (["title": "t", "date": "2025-06-14", "position": ["lat": "north", "lon": 0]], "position.lat must be a number"),
            (["title": "t", "date": "2025-02-30"], "date must be a calendar day written YYYY-MM-DD"),
            (["title": "", "date": "2025-06-14"], "title must be 1 to 200 characters"),
            (["date": "2025-06-14"], "title is required"),
        ]
        for (fields, message) in refusals {
            let error = try alice.failure("memory_create", fields)
            #expect(error["code"] as? String == "bad_request" && error["message"] as? String == message, "\(JSON.text(fields))")
        }
        // A JSON number too large to be finite is still only a number out of range.
        try alice.sendText(#"{"id":"big","op":"memory_create","title":"t","date":"2025-06-14","position":{"lat":1e400,"lon":0}}"#)
        let big = try alice.reply(to: "big")
        #expect((big["error"] as? JSONObject)?["message"] as? String == "position.lat must be a number from -90 to 90")
        let id = try #require(JSON.int(try alice.ok("memory_create", ["title": "t", "date": "2025-06-14"])["memory"].flatMap { ($0 as? JSONObject)?["id"] }))
        let error = try alice.failure("point_add", ["memory": id, "time": 1, "position": ["lat": 0, "lon": 500]])
        #expect(error["message"] as? String == "position.lon must be a number from -180 to 180")
        #expect(try alice.errorCode("point_add", ["memory": id, "time": 1, "photos": ["nothex"]]) == "bad_request")
        #expect(try alice.errorCode("point_add", ["memory": id, "time": 1, "photos": [String(repeating: "0", count: 64)]]) == "photo_not_found")
        #expect((try alice.ok("memory", ["memory": id])["memory"] as? JSONObject).map { JSON.int($0["point_count"]) } == 0)
    }

    /// The integrator's scenario: a memory with a photo made on one device appears on the
    /// user's other device, which can fetch the photo; a stranger cannot.
    @Test func aPhotoIsReadableByItsOwnerOnAnyDeviceAndByNoStranger() async throws {
        let server = try await Self.start()
        let (laptop, laptopToken, phone, phoneToken, bob, bobToken) = try people(port: server.port)
        let bytes = PhotoRequest.photo(1)
        let hash = PhotoRequest.hash(bytes)

        let uploaded = try PhotoRequest.upload(bytes, token: laptopToken, port: server.port)
        #expect(uploaded.status == 201, "\(String(decoding: uploaded.body, as: UTF8.self))")
        #expect(uploaded.json?["hash"] as? String == hash && JSON.int(uploaded.json?["size"]) == bytes.count)
        #expect(try PhotoRequest.upload(bytes, token: phoneToken, port: server.port).status == 200, "alice has it already")

        let created = try laptop.ok("memory_create", ["title": "Beach", "date": "2025-08-02"])
        let id = try #require(JSON.int((created["memory"] as? JSONObject)?["id"]))
        try laptop.ok("point_add", ["memory": id, "time": 1_754_000_000_000, "photos": [hash]])
        _ = try phone.nextEvent("memory_changed")
        let event = try phone.nextEvent("memory_changed")
        #expect(event["action"] as? String == "point_added")
        let shared = try #require((event["point"] as? JSONObject)?["photos"] as? [String])
        #expect(shared == [hash])

        let fetched = try PhotoRequest.download(shared[0], token: phoneToken, port: server.port)
        #expect(fetched.status == 200 && fetched.body == bytes)
        #expect(fetched.headers["content-type"] == "image/jpeg" && fetched.headers["etag"] == "\"\(hash)\"")
        #expect(fetched.headers["x-content-type-options"] == "nosniff")

        // A stranger is told exactly what a photo nobody has gets.
        let stranger = try PhotoRequest.download(hash, token: bobToken, port: server.port)
        let nobodys = try PhotoRequest.download(PhotoRequest.hash([1, 2, 3]), token: bobToken, port: server.port)
        #expect(stranger.status == 404 && stranger.errorCode == "photo_not_found")
        #expect(stranger.body == nobodys.body && nobodys.status == 404)
        #expect(try PhotoRequest.download("not-a-hash", token: bobToken, port: server.port).status == 404)
        #expect(try bob.errorCode("point_add", ["memory": id, "time": 1, "photos": [hash]]) == "memory_not_found")
        let bobs = try #require(JSON.int((try bob.ok("memory_create", ["title": "b", "date": "2025-01-01"])["memory"] as? JSONObject)?["id"]))
        #expect(try bob.errorCode("point_add", ["memory": bobs, "time": 1, "photos": [hash]]) == "photo_not_found")
        // Uploading the same bytes makes bob an owner, and the status does not tell him alice had them.
        #expect(try PhotoRequest.upload(bytes, token: bobToken, port: server.port).status == 201)
        #expect(try PhotoRequest.download(hash, token: bobToken, port: server.port).body == bytes)

        // Without a session there is nothing to see or store.
        for response in [
            try PhotoRequest.download(hash, token: nil, port: server.port), try PhotoRequest.download(hash, token: "nonsense", port: server.port),
            try PhotoRequest.upload(bytes, token: nil, port: server.port), try PhotoRequest.upload(bytes, token: "nonsense", port: server.port),
        ] {
            #expect(response.status == 401 && response.headers["www-authenticate"] == "Bearer", "\(response.status)")
        }
        #expect(try PhotoRequest.upload(bytes, token: nil, port: server.port).errorCode == "not_authenticated")
        #expect(try PhotoRequest.download(hash, token: "nonsense", port: server.port).errorCode == "invalid_token")
        // A revoked session stops working for photos at once.
        try phone.ok("logout")
        #expect(try PhotoRequest.download(hash, token: phoneToken, port: server.port).status == 401)
        #expect(try PhotoRequest.download(hash, token: laptopToken, port: server.port).status == 200)
    }

    @Test func photosOverTheLimitAreRefusedBeforeAndWhileTheBodyArrives() async throws {
        let server = try await Self.start()
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)

        // An honest Content-Length over the limit: refused from the head, no body sent at all.
        let declared = try PhotoRequest(port: server.port)
        try declared.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: \(Self.maxPhotoSize + 1)"])
        let tooLarge = try declared.readResponse()
        #expect(tooLarge.status == 413 && tooLarge.errorCode == "payload_too_large")
        // The same with the body on its way.
        #expect(try PhotoRequest.upload(PhotoRequest.photo(2, count: Self.maxPhotoSize), token: token, port: server.port).status == 413)
        // Exactly the limit is fine.
        let largest = PhotoRequest.photo(3, count: Self.maxPhotoSize - 4)
        let stored = try PhotoRequest.upload(largest, token: token, port: server.port)
        #expect(stored.status == 201 && JSON.int(stored.json?["size"]) == Self.maxPhotoSize)
        #expect(try PhotoRequest.download(PhotoRequest.hash(largest), token: token, port: server.port).body == largest)

        // A chunked body is counted as it arrives: the chunk that crosses the limit is refused.
        let chunked = try PhotoRequest(port: server.port)
        try chunked.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Transfer-Encoding: chunked"])
        let chunk = [UInt8](repeating: 0x5A, count: 40_000)
        for _ in 0..<3 { chunked.sendBody(Array("9c40\r\n".utf8) + chunk + Array("\r\n".utf8)) }
        let refused = try chunked.readResponse()
        #expect(refused.status == 413 && refused.errorCode == "payload_too_large")
        // Within the limit a chunked upload is stored like any other.
        let small = PhotoRequest.photo(4, count: 5000)
        let chunkedOK = try PhotoRequest(port: server.port)
        try chunkedOK.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Transfer-Encoding: chunked"])
        chunkedOK.sendBody(Array("1000\r\n".utf8) + small[..<4096] + Array("\r\n\(String(small.count - 4096, radix: 16))\r\n".utf8) + small[4096...] + Array("\r\n0\r\n\r\n".utf8))
        let chunkedStored = try chunkedOK.readResponse()
        #expect(chunkedStored.status == 201 && chunkedStored.json?["hash"] as? String == PhotoRequest.hash(small))

        // A body longer than its Content-Length: the photo is the declared bytes, never more.
        let lying = try PhotoRequest(port: server.port)
        let declaredBytes = PhotoRequest.photo(5, count: 1000)
        try lying.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: \(declaredBytes.count)"])
        lying.sendBody(declaredBytes + [UInt8](repeating: 0x41, count: Self.maxPhotoSize * 2))
        let truncated = try lying.readResponse()
        #expect(truncated.status == 201 && JSON.int(truncated.json?["size"]) == declaredBytes.count)
        #expect(truncated.json?["hash"] as? String == PhotoRequest.hash(declaredBytes))

        // Framing the server will not guess at.
        let noLength = try PhotoRequest(port: server.port)
        try noLength.sendHead("PUT", "/api/v1/photos", token: token)
        #expect(try noLength.readResponse().status == 411)
        #expect(try PhotoRequest.upload([], token: token, port: server.port).status == 400)
        let both = try PhotoRequest(port: server.port)
        try both.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: 5", "Transfer-Encoding: chunked"])
        #expect(try both.readResponse().status == 400)
        let wrongMethod = try PhotoRequest(port: server.port)
        try wrongMethod.sendHead("POST", "/api/v1/photos", token: token, headers: ["Content-Length: 1"])
        let notAllowed = try wrongMethod.readResponse()
        #expect(notAllowed.status == 405 && notAllowed.headers["allow"] == "PUT")
        #expect(try alice.ok("whoami")["user"] != nil, "the WebSocket side is unaffected")
    }

    @Test func anUploadWaitsForItsTokenToBeAcceptedBeforeTheBody() async throws {
        let server = try await Self.start()
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let bytes = PhotoRequest.photo(6, count: 20_000)

        // With Expect: 100-continue a refused token costs the client no upload at all.
        let refused = try PhotoRequest(port: server.port)
        try refused.sendHead("PUT", "/api/v1/photos", token: "nonsense", headers: ["Content-Length: \(bytes.count)", "Expect: 100-continue"])
        let unauthorized = try refused.readResponse()
        #expect(unauthorized.status == 401 && unauthorized.errorCode == "invalid_token")

        let accepted = try PhotoRequest(port: server.port)
        try accepted.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: \(bytes.count)", "Expect: 100-continue"])
        #expect(try accepted.readResponse().status == 100)
        accepted.sendBody(bytes)
        let stored = try accepted.readResponse()
        #expect(stored.status == 201 && stored.json?["hash"] as? String == PhotoRequest.hash(bytes))
    }

    /// A large photo to a slow reader takes longer than the 2 s a closing connection is given:
    /// the deadline moves with each write, so only a reader that stops reading is dropped.
    @Test func aLargePhotoReachesASlowReaderWhole() async throws {
        let server = try await startHuddle()  // the default limit, 10 MiB
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let bytes = PhotoRequest.photo(8, count: 5 * 1024 * 1024)
        let uploaded = try PhotoRequest.upload(bytes, token: token, port: server.port)
        #expect(uploaded.status == 201)
        let reader = try RawClient(port: server.port, receiveBufferSize: 16 * 1024)
        try reader.send("GET /api/v1/photos/\(PhotoRequest.hash(bytes)) HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer \(token)\r\n\r\n")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        received.reserveCapacity(bytes.count + 1024)
        let started = Date()
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(reader.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                // The response ends with the server's close; a failed read (a reset, or our
                // receive timeout) is another failure, and the server's last lines tell which.
                if count < 0 {
                    let code = errno
                    let tail = server.logText.split(separator: "\n").suffix(20).joined(separator: "\n")
                    Issue.record("the read failed with errno \(code) after \(received.count) bytes; server log ends:\n\(tail)")
                }
                break
            }
            received += buffer[0..<count]
            try await Task.sleep(for: .milliseconds(40))
        }
        let head = try #require(received.firstRange(of: Array("\r\n\r\n".utf8)))
        #expect(String(decoding: received[..<head.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        // Compared by size and hash: a failed #expect on two 8 MiB arrays would print them.
        let body = Array(received[head.upperBound...])
        #expect(body.count == bytes.count)
        #expect(PhotoRequest.hash(body) == PhotoRequest.hash(bytes))
        #expect(Date().timeIntervalSince(started) > 2, "slow enough to outlast a fixed closing deadline")
    }

    /// SIGKILL right after the replies: with `--fsync always` an ok reply, and a 201, mean it is on disk.
    @Test func memoriesAndPhotosSurviveACrash() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let bytes = PhotoRequest.photo(7, count: 50_000)
        let hash = PhotoRequest.hash(bytes)
        var token = ""
        var before: JSONObject = [:]
        do {
            let server = try await Self.start(dataDirectory: data, fsync: "always")
            let (alice, aliceToken) = try ProtocolClient.signedUp("alice", port: server.port)
            token = aliceToken
            #expect(try PhotoRequest.upload(bytes, token: token, port: server.port).status == 201)
            let id = try #require(JSON.int((try alice.ok("memory_create", [
                "title": "Snow", "date": "2024-12-24", "position": ["lat": 46.5, "lon": 7.98],
            ])["memory"] as? JSONObject)?["id"]))
            try alice.ok("point_add", ["memory": id, "time": 1_735_000_000_000, "note": "first light", "photos": [hash]])
            before = try #require(try alice.ok("memory", ["memory": id])["memory"] as? JSONObject)
            try await server.kill9()
        }
        let server = try await Self.start(dataDirectory: data)
        let alice = try ProtocolClient.authenticated(token, port: server.port)
        let after = try #require(try alice.ok("memory", ["memory": JSON.int(before["id"])!])["memory"] as? JSONObject)
        #expect(JSON.text(after) == JSON.text(before))
        let fetched = try PhotoRequest.download(hash, token: token, port: server.port)
        #expect(fetched.status == 200 && fetched.body == bytes)
        // Ids go on from where they were.
        let next = try #require(JSON.int((try alice.ok("memory_create", ["title": "t", "date": "2025-01-01"])["memory"] as? JSONObject)?["id"]))
        #expect(next == JSON.int(before["id"])! + 1)
        #expect(try PhotoRequest.upload(bytes, token: token, port: server.port).status == 200, "the ownership survived too")
    }
}
