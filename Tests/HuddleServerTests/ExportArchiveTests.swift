import ChildProcessExit
import Foundation
import Testing

/// Issue 16, export: `GET /api/v1/export` streams a tar of `export.json` (what `account_export`
/// returns) and every photo the user holds (protocol.md, "Export"), with the photo endpoints'
/// token rules, a server-wide cap, a per-user interval, and a bounded queue for a slow reader.
@Suite(.ownThread) struct ExportArchiveTests {
    /// Waits until a metric satisfies `condition` (the server's own account of the export).
    private static func waitForMetric(
        _ name: String, _ labels: [String: String] = [:], port: Int, _ condition: (Double) -> Bool = { $0 >= 1 }
    ) async throws {
        let deadline = Date().addingTimeInterval(60)
        while !condition(try PrometheusText.fetch(port: port).value(name, labels) ?? 0) {
            guard Date() < deadline else { throw TestFailure("\(name) \(labels) never got there") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private static func metric(_ name: String, _ labels: [String: String] = [:], port: Int) throws -> Double {
        try PrometheusText.fetch(port: port).value(name, labels) ?? 0
    }

    /// Uploads `count` photos of `size` bytes (distinct bytes each) as `token`'s user; their hashes.
    private static func uploadPhotos(_ count: Int, size: Int, seed: UInt8, token: String, port: Int) throws -> [String: [UInt8]] {
        var photos: [String: [UInt8]] = [:]
        for index in 0..<count {
            let bytes = PhotoRequest.photo(seed &+ UInt8(index), count: size - 4)
            let response = try PhotoRequest.upload(bytes, token: token, port: port)
            guard [200, 201].contains(response.status) else { throw TestFailure("upload answered \(response.status)") }
            photos[PhotoRequest.hash(bytes)] = bytes
        }
        return photos
    }

    /// The export request's head sent on a socket with a tiny receive buffer that is not read:
    /// the server's writes back up at once.
    private static func heldExport(token: String, port: Int) throws -> PhotoRequest {
        let request = try PhotoRequest(port: port, receiveBufferSize: 4096)
        try request.sendHead("GET", "/api/v1/export", token: token)
        return request
    }

    private static func sameJSON(_ a: JSONObject?, _ b: JSONObject?) -> Bool {
        guard let a, let b else { return false }
        return NSDictionary(dictionary: a).isEqual(to: b)
    }

    @Test func theArchiveHoldsTheExportAndEveryPhotoByteForByte() async throws {
        let server = try await startHuddle()
        let port = server.port
        let (client, token) = try ProtocolClient.signedUp("archivist", port: port)
        // Sizes on and off the 512-byte blocks and across the 64 KiB chunks.
        var photos = try Self.uploadPhotos(2, size: 3000, seed: 1, token: token, port: port)
        photos.merge(try Self.uploadPhotos(1, size: 300_000, seed: 9, token: token, port: port)) { $1 }
        photos.merge(try Self.uploadPhotos(1, size: 65536 * 2, seed: 20, token: token, port: port)) { $1 }
        try client.publish("room:archive", "a message for the archive")
        try client.ok("post", ["text": "a post for the archive"])
        let expected = try #require(try client.ok("account_export")["export"] as? JSONObject)

        let (response, archive) = try ExportArchive.download(token: token, port: port)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(response.headers["content-type"] == "application/x-tar")
        #expect(response.headers["content-disposition"] == "attachment; filename=\"huddle-export-archivist.tar\"")
        #expect(response.headers["content-length"] == String(response.body.count))
        let entries = try #require(archive).entries
        #expect(entries.first?.name == "export.json")
        #expect(Self.sameJSON(archive?.document, expected), "export.json is what account_export returns")
        let inArchive = archive?.photos ?? [:]
        #expect(Set(inArchive.keys) == Set(photos.keys))
        for (hash, bytes) in inArchive {
            #expect(PhotoRequest.hash(bytes) == hash && bytes == photos[hash], "photo \(hash) is byte-identical")
        }
        #expect(entries.filter { $0.name.hasPrefix("photos/") }.allSatisfy { $0.name.hasSuffix(".jpg") }, "named by their kind")
        try await Self.waitForMetric("huddle_exports_completed_total", port: port)
        #expect(try Self.metric("huddle_exports_started_total", port: port) == 1)
        #expect(try Self.metric("huddle_export_bytes_sent_total", port: port) >= Double(response.body.count))
        #expect(try Self.metric("huddle_exports_in_flight", port: port) == 0)
        #expect(try await server.stop() == 0)
    }

    @Test func aMissingRevokedOrDeletedAccountsTokenIs401() async throws {
        let server = try await startHuddle()
        let port = server.port
        let (client, token) = try ProtocolClient.signedUp("leaver", port: port)
        let missing = try ExportArchive.download(token: nil, port: port).response
        #expect(missing.status == 401 && missing.headers["www-authenticate"] == "Bearer" && missing.errorCode == "not_authenticated")
        let unknown = try ExportArchive.download(token: "not-a-token", port: port).response
        #expect(unknown.status == 401 && unknown.headers["www-authenticate"] == "Bearer" && unknown.errorCode == "invalid_token")
        let posted = try PhotoRequest(port: port)
        try posted.sendHead("POST", "/api/v1/export", token: token, headers: ["Content-Length: 0"])
        #expect(try posted.readResponse().status == 405)

        // A second session, logged out: its token is revoked.
        let other = try ProtocolClient(port: port)
        let revoked = try other.login("leaver")
        try other.ok("logout")
        #expect(try ExportArchive.download(token: revoked, port: port).response.status == 401)

        // The account deleted: its last token is refused too.
        try client.ok("account_delete", ["password": ProtocolClient.password])
        let deleted = try ExportArchive.download(token: token, port: port).response
        #expect(deleted.status == 401 && deleted.errorCode == "invalid_token", "\(deleted.status) \(deleted.errorCode ?? "")")
        #expect(try Self.metric("huddle_exports_started_total", port: port) == 0)
        #expect(try await server.stop() == 0)
    }

    /// One export held by a reader that does not read: the next user's is refused at the cap,
    /// the server keeps a bounded queue for the held one, and it completes when its reader
    /// reads; the same user again within the interval is refused.
    @Test func theCapTheIntervalAndASlowReadersBoundedQueue() async throws {
        let server = try await startHuddle(["--max-concurrent-exports", "1"])
        let port = server.port
        let (_, heavyToken) = try ProtocolClient.signedUp("heavy", port: port)
        // 8 MiB of photos: far more than the socket buffers and the server's window.
        let photos = try Self.uploadPhotos(4, size: 2 << 20, seed: 40, token: heavyToken, port: port)
        let (_, otherToken) = try ProtocolClient.signedUp("other", port: port)

        let held = try Self.heldExport(token: heavyToken, port: port)
        try await Self.waitForMetric("huddle_exports_waiting_for_reader", port: port)
        let busy = try ExportArchive.download(token: otherToken, port: port).response
        #expect(busy.status == 429 && busy.errorCode == "too_many_exports", "\(busy.status) \(busy.errorCode ?? "")")
        #expect(busy.headers["retry-after"] == "5" && JSON.int((busy.json?["error"] as? JSONObject)?["retry_after_ms"]) == 5000)
        #expect(try Self.metric("huddle_exports_refused_total", ["reason": "server_busy"], port: port) == 1)
        // The held export's queue is the window, not the archive.
        let peak = try Self.metric("huddle_export_queued_bytes_peak", port: port)
        #expect(peak > 0 && peak <= 320 * 1024, "peak queued \(peak) bytes for an archive of 8 MiB")

        let response = try held.readResponse()
        #expect(response.status == 200 && response.headers["content-length"] == String(response.body.count))
        let archive = try ExportArchive(tar: response.body)
        #expect(archive.photos.count == photos.count && archive.photos.allSatisfy { photos[$0.key] == $0.value })
        #expect(try Self.metric("huddle_export_queued_bytes_peak", port: port) <= 320 * 1024)
        try await Self.waitForMetric("huddle_exports_in_flight", port: port) { $0 == 0 }
        #expect(try Self.metric("huddle_exports_completed_total", port: port) == 1)

        // The same user again, within the interval.
        let again = try ExportArchive.download(token: heavyToken, port: port).response
        #expect(again.status == 429 && again.errorCode == "exports_limited", "\(again.status) \(again.errorCode ?? "")")
        let wait = try #require(JSON.int((again.json?["error"] as? JSONObject)?["retry_after_ms"]))
        #expect(wait > 0 && wait <= 60_000 && Int(again.headers["retry-after"] ?? "") == (wait + 999) / 1000)
        #expect(try Self.metric("huddle_exports_refused_total", ["reason": "rate_limited"], port: port) == 1)
        // The refused user was never counted against the interval: the slot is free now.
        #expect(try ExportArchive.download(token: otherToken, port: port).response.status == 200)
        #expect(try await server.stop() == 0)
    }

    @Test func aReaderThatStopsIsClosedAfterTheIdleTimeout() async throws {
        let server = try await startHuddle(["--idle-timeout", "2", "--ping-interval", "1"])
        let port = server.port
        let (_, token) = try ProtocolClient.signedUp("stopper", port: port)
        _ = try Self.uploadPhotos(2, size: 2 << 20, seed: 60, token: token, port: port)
        let held = try Self.heldExport(token: token, port: port)
        try await Self.waitForMetric("huddle_exports_failed_total", ["reason": "reader_stalled"], port: port)
        #expect(try Self.metric("huddle_exports_in_flight", port: port) == 0)
        #expect(try Self.metric("huddle_exports_waiting_for_reader", port: port) == 0)
        // What it reads now ends short of the Content-Length: a failed download, not an archive.
        let response = try held.readResponse()
        #expect(response.status == 200 && Int(response.headers["content-length"] ?? "") ?? 0 > response.body.count)
        #expect(try await server.stop() == 0)
    }

    @Test func aReaderThatHangsUpFreesTheSlot() async throws {
        let server = try await startHuddle(["--max-concurrent-exports", "1"])
        let port = server.port
        let (_, token) = try ProtocolClient.signedUp("quitter", port: port)
        _ = try Self.uploadPhotos(2, size: 2 << 20, seed: 70, token: token, port: port)
        let held = try Self.heldExport(token: token, port: port)
        try await Self.waitForMetric("huddle_exports_waiting_for_reader", port: port)
        shutdown(held.client.fd, Int32(SHUT_RDWR))
        try await Self.waitForMetric("huddle_exports_failed_total", ["reason": "disconnected"], port: port)
        try await Self.waitForMetric("huddle_exports_in_flight", port: port) { $0 == 0 }
        #expect(try Self.metric("huddle_exports_waiting_for_reader", port: port) == 0)
        #expect(try Self.metric("huddle_exports_completed_total", port: port) == 0)
        #expect(try await server.stop() == 0)
    }

    @Test func anExportAfterAKill9HoldsEverythingAcknowledged() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await startHuddle(dataDirectory: data)
        let (client, token) = try ProtocolClient.signedUp("survivor", port: server.port)
        let photos = try Self.uploadPhotos(3, size: 100_000, seed: 80, token: token, port: server.port)
        for index in 0..<20 { try client.publish("room:survivor", "message \(index)") }
        try client.ok("place_set", ["label": "home", "lat": 48.85, "lon": 2.35, "radius": 100])
        let expected = try #require(try client.ok("account_export")["export"] as? JSONObject)
        try await server.kill9()

        let restarted = try await startHuddle(dataDirectory: data)
        let (response, archive) = try ExportArchive.download(token: token, port: restarted.port)
        #expect(response.status == 200)
        #expect(Self.sameJSON(archive?.document, expected), "export.json after the kill is what was acknowledged before it")
        #expect(archive?.photos == photos)
        #expect(try await restarted.stop() == 0)
    }
}
