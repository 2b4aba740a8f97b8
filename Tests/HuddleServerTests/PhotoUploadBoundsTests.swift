import ChildProcessExit
import Foundation
import Testing

/// Issue 12, problem 6: unfinished photo uploads were buffered whole (24 held one byte short
/// pinned 240 MiB), their deadline moved with every byte, and nothing bounded the uploads in
/// flight or the bytes a user stores (protocol.md, "Limits").
@Suite(.ownThread) struct PhotoUploadBoundsTests {
    /// The server's resident memory, from /proc.
    private static func residentBytes(_ server: ServerProcess) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ")[1])
        else { throw TestFailure("no VmRSS in /proc status") }
        return kilobytes * 1024
    }

    /// Waits until a metric reaches `value` (the server's own account of what it has received).
    private static func waitForMetric(_ name: String, _ labels: [String: String] = [:], atLeast value: Double, port: Int) async throws {
        let deadline = Date().addingTimeInterval(30)
        while (try PrometheusText.fetch(port: port).value(name, labels) ?? 0) < value {
            guard Date() < deadline else { throw TestFailure("\(name) \(labels) never reached \(value)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A head with `Expect: 100-continue`; returns once the server said 100 (it holds a slot).
    private static func startUpload(length: Int, token: String, port: Int) throws -> (PhotoRequest, PhotoRequest.Response) {
        let request = try PhotoRequest(port: port)
        try request.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: \(length)", "Expect: 100-continue"])
        return (request, try request.readResponse())
    }

    @Test func uploadsHeldOneByteShortHoldNoMemory() async throws {
        let server = try await startHuddle(["--max-photo-size", String(8 << 20)])
        let size = 4 << 20
        let body = [UInt8](repeating: 0x42, count: size - 1)
        var held: [PhotoRequest] = []
        for user in 0..<4 {
            let (_, token) = try ProtocolClient.signedUp("holder\(user)", port: server.port)
            for _ in 0..<4 {
                let (request, interim) = try Self.startUpload(length: size, token: token, port: server.port)
                #expect(interim.status == 100)
                held.append(request)
            }
        }
        let before = try Self.residentBytes(server)
        for request in held { request.sendBody(body) }
        try await Self.waitForMetric("huddle_photo_upload_bytes_spooled", atLeast: Double(held.count * (size - 1)), port: server.port)
        let growth = try Self.residentBytes(server) - before
        print("16 uploads of 4 MiB held one byte short: RSS +\(growth >> 10) KiB")
        // Buffered whole, the 16 bodies would be 64 MiB; on disk they are a few read buffers.
        #expect(growth < 16 << 20, "RSS grew \(growth >> 20) MiB while \(held.count) uploads of 4 MiB were held short")
        #expect(try PrometheusText.fetch(port: server.port).value("huddle_photo_uploads_in_flight") == 16)

        // The last byte completes one; closing the others frees their slots and files.
        held[0].sendBody([0x42])
        let stored = try held[0].readResponse()
        #expect(stored.status == 201 && JSON.int(stored.json?["size"]) == size, "\(stored.status) \(String(decoding: stored.body, as: UTF8.self))")
        for request in held.dropFirst() { shutdown(request.client.fd, Int32(SHUT_RDWR)) }
        let deadline = Date().addingTimeInterval(30)
        while try PrometheusText.fetch(port: server.port).value("huddle_photo_upload_bytes_spooled") != 0 {
            guard Date() < deadline else { throw TestFailure("closed uploads still counted") }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try PrometheusText.fetch(port: server.port).value("huddle_photo_uploads_in_flight") == 0)
    }

    @Test func aTricklingUploadMeetsItsDeadline() async throws {
        let server = try await startHuddle(["--photo-upload-timeout", "1"])
        let (_, token) = try ProtocolClient.signedUp("trickler", port: server.port)
        let request = try PhotoRequest(port: server.port)
        try request.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: 1000"])
        // A byte every 100 ms never lets a per-byte deadline pass; the upload's own one does.
        var answered = false
        for _ in 0..<300 where !answered {
            request.sendBody([0x41])
            var descriptor = pollfd(fd: request.client.fd, events: Int16(POLLIN), revents: 0)
            answered = poll(&descriptor, 1, 100) > 0
        }
        try #require(answered, "no answer after 30 s of trickling")
        let response = try request.readResponse()
        #expect(response.status == 408 && response.errorCode == "upload_timeout", "\(response.status) \(String(decoding: response.body, as: UTF8.self))")
        #expect(try PrometheusText.fetch(port: server.port).value("huddle_photo_upload_refusals_total", ["reason": "timeout"]) == 1)
        // A normal upload still works.
        let photo = PhotoRequest.photo(1)
        #expect(try PhotoRequest.upload(photo, token: token, port: server.port).status == 201)
    }

    /// protocol.md: an upload's Content-Type is optional and ignored; a download's comes from
    /// the bytes' signature.
    @Test func anUploadsContentTypeIsIgnored() async throws {
        let server = try await startHuddle()
        let (_, token) = try ProtocolClient.signedUp("typist", port: server.port)
        let photos = (1...3).map { PhotoRequest.photo(UInt8($0)) }  // JPEG signatures
        for (photo, contentType) in zip(photos, ["text/plain", "application/json; charset=utf-8", nil]) {
            let request = try PhotoRequest(port: server.port)
            let headers = ["Content-Length: \(photo.count)"] + (contentType.map { ["Content-Type: \($0)"] } ?? [])
            try request.sendHead("PUT", "/api/v1/photos", token: token, headers: headers)
            request.sendBody(photo)
            #expect(try request.readResponse().status == 201, "Content-Type \(contentType ?? "none")")
            let fetched = try PhotoRequest.download(PhotoRequest.hash(photo), token: token, port: server.port)
            #expect(fetched.headers["content-type"] == "image/jpeg" && fetched.body == photo)
        }
    }

    @Test func uploadsInFlightAreCappedPerUserAndOverall() async throws {
        let server = try await startHuddle(["--max-uploads-per-user", "2", "--max-uploads", "3"])
        let (_, alice) = try ProtocolClient.signedUp("alice", port: server.port)
        let (_, bob) = try ProtocolClient.signedUp("bob", port: server.port)
        let (_, carol) = try ProtocolClient.signedUp("carol", port: server.port)
        let photos = (1...5).map { PhotoRequest.photo(UInt8($0)) }

        let (aliceFirst, first) = try Self.startUpload(length: photos[0].count, token: alice, port: server.port)
        let (aliceSecond, second) = try Self.startUpload(length: photos[1].count, token: alice, port: server.port)
        #expect(first.status == 100 && second.status == 100)
        let (_, third) = try Self.startUpload(length: photos[2].count, token: alice, port: server.port)
        #expect(third.status == 429 && third.errorCode == "too_many_uploads", "\(third.status)")
        #expect(third.headers["retry-after"] == "1")
        #expect(JSON.int((third.json?["error"] as? [String: Any])?["retry_after_ms"]) == 1000)

        // Another user is not held up by alice's two…
        let (bobUpload, bobContinue) = try Self.startUpload(length: photos[3].count, token: bob, port: server.port)
        #expect(bobContinue.status == 100)
        // …but the server's three slots are all taken now.
        let (_, carolRefused) = try Self.startUpload(length: photos[4].count, token: carol, port: server.port)
        #expect(carolRefused.status == 429 && carolRefused.errorCode == "too_many_uploads")

        bobUpload.sendBody(photos[3])
        #expect(try bobUpload.readResponse().status == 201)
        #expect(try PhotoRequest.upload(photos[4], token: carol, port: server.port).status == 201, "a freed slot is taken again")
        aliceFirst.sendBody(photos[0])
        aliceSecond.sendBody(photos[1])
        #expect(try aliceFirst.readResponse().status == 201)
        #expect(try aliceSecond.readResponse().status == 201)
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_photo_upload_refusals_total", ["reason": "user_busy"]) == 1)
        #expect(metrics.value("huddle_photo_upload_refusals_total", ["reason": "server_busy"]) == 1)
        #expect(metrics.value("huddle_photo_uploads_in_flight") == 0)
    }

    @Test func aUsersPhotosStayWithinTheirQuota() async throws {
        let server = try await startHuddle(["--photo-quota", "10000", "--max-photo-size", "4000"])
        let (_, alice) = try ProtocolClient.signedUp("alice", port: server.port)
        let (_, bob) = try ProtocolClient.signedUp("bob", port: server.port)
        let first = PhotoRequest.photo(1, count: 2996)  // 3000 bytes
        #expect(try PhotoRequest.upload(first, token: alice, port: server.port).status == 201)
        #expect(try PhotoRequest.upload(first, token: alice, port: server.port).status == 200, "one already owned costs nothing")
        #expect(try PhotoRequest.upload(PhotoRequest.photo(2, count: 3996), token: alice, port: server.port).status == 201)

        // Refused from the head: 7000 + 3500 would not fit; no body is read.
        let declared = try PhotoRequest(port: server.port)
        try declared.sendHead("PUT", "/api/v1/photos", token: alice, headers: ["Content-Length: 3500"])
        let refused = try declared.readResponse()
        #expect(refused.status == 507 && refused.errorCode == "photo_quota_exceeded", "\(refused.status)")
        // A chunked body may reach --max-photo-size, so it counts as that much.
        let chunked = try PhotoRequest(port: server.port)
        try chunked.sendHead("PUT", "/api/v1/photos", token: alice, headers: ["Transfer-Encoding: chunked"])
        #expect(try chunked.readResponse().status == 507)
        // Exactly the quota fits, and bob's quota is his own.
        #expect(try PhotoRequest.upload(PhotoRequest.photo(3, count: 2996), token: alice, port: server.port).status == 201)
        #expect(try PhotoRequest.upload(first, token: bob, port: server.port).status == 201)
        #expect(try PrometheusText.fetch(port: server.port).value("huddle_photo_upload_refusals_total", ["reason": "quota"]) == 2)
    }

    /// An upload's temporary file goes when the upload ends without a photo, and a kill -9
    /// mid-upload leaves one that the next start removes.
    @Test func unfinishedUploadsLeaveNoTemporaryFiles() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let temporary = data.appendingPathComponent("photos/tmp")
        func temporaryFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: temporary.path) }
        let server = try await DurableServer.start(dataDirectory: data)
        let token = try V1Client(port: server.port).signUp("spooler")

        let (closed, _) = try Self.startUpload(length: 100_000, token: token, port: server.port)
        closed.sendBody([UInt8](repeating: 1, count: 50_000))
        try await Self.waitForMetric("huddle_photo_upload_bytes_spooled", atLeast: 50_000, port: server.port)
        #expect(try temporaryFiles().count == 1)
        shutdown(closed.client.fd, Int32(SHUT_RDWR))
        let deadline = Date().addingTimeInterval(30)
        while try !temporaryFiles().isEmpty {
            guard Date() < deadline else { throw TestFailure("a closed upload's file stayed: \(try temporaryFiles())") }
            try await Task.sleep(for: .milliseconds(20))
        }

        let (killed, _) = try Self.startUpload(length: 100_000, token: token, port: server.port)
        killed.sendBody([UInt8](repeating: 2, count: 50_000))
        try await Self.waitForMetric("huddle_photo_upload_bytes_spooled", atLeast: 50_000, port: server.port)
        server.kill9()
        #expect(try temporaryFiles().count == 1)
        let restarted = try await DurableServer.start(dataDirectory: data)
        #expect(try temporaryFiles() == [])
        #expect(try await restarted.stop() == 0)
    }
}
