import ChildProcessExit
import Foundation
import Testing

/// huddle-chat's memories as people use them: one user on two devices (two real processes in
/// their line mode against the real server), checked by the lines they print.
@Suite(.ownThread) struct HuddleChatMemoryProcessTests {
    static let password = HuddleChatProcessTests.password

    /// `[ok] memory 12 2025-06-14 "Lisbon" (0 points); …` → 12.
    static func memoryID(_ line: String) -> Int? {
        guard line.hasPrefix("[ok] memory "), line.contains(" 2025-06-14 \"Lisbon\" (0 points); /point ") else { return nil }
        return Int(line.dropFirst("[ok] memory ".count).prefix { $0.isNumber })
    }

    /// The phone makes a memory and the laptop is told; the laptop adds a point and the phone is
    /// told; neither prints its own change twice; the point is listed; a delete reaches the
    /// other device; a missing memory and a bad id read as clear lines.
    @Test func aChangeOnOneDeviceShowsOnTheOther() async throws {
        let server = try await startHuddle()
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let phone = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("phone.json"))
        let laptop = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("laptop.json"))

        try phone.send("/signup alice alice@example.com \(Self.password)")
        try await phone.line("[ok] signed up as alice")
        try laptop.send("/login alice \(Self.password)")
        try await laptop.line("[ok] logged in as alice")

        try phone.send("/memory-new 2025-06-14 Lisbon")
        let created = try await phone.line("the new memory") { Self.memoryID($0) != nil }
        let id = try #require(Self.memoryID(created))
        try await laptop.line("[memory] new: \(id) 2025-06-14 \"Lisbon\" (0 points)")

        try laptop.send("/point \(id) tram 28")
        try await laptop.line("the point") { $0.hasPrefix("[ok] point \(id).1 added: ") && $0.hasSuffix(" \"tram 28\"") }
        try await phone.line("the point, live") { $0.hasPrefix("[memory] point \(id).1 added to \"Lisbon\": ") && $0.hasSuffix(" \"tram 28\"") }

        try phone.send("/memory \(id)")
        try await phone.line("[memory] \(id) 2025-06-14 \"Lisbon\" (1 point)")
        try await phone.line("the point listed") { $0.hasPrefix("[point \(id).1] ") && $0.hasSuffix(" \"tram 28\"") }
        try phone.send("/memories")
        try await phone.line("[memories] \(id) 2025-06-14 \"Lisbon\" (1 point)")

        try laptop.send("/memory-delete \(id)")
        try await laptop.line("[ok] memory \(id) deleted")
        try await phone.line("[memory] \(id) deleted")
        try phone.send("/memory \(id)")
        try await phone.line("the missing memory") { $0.hasPrefix("[error] memory_not_found: ") && $0.hasSuffix(" (/memories lists yours)") }
        try phone.send("/memory twelve")
        try await phone.line("[error] bad_argument: \"twelve\" is not a memory number (/memories shows them)")
        try laptop.send("/memories")
        try await laptop.line("[memories] none yet: /memory-new DATE TITLE")

        // Each device's own changes came back as events too (the server tells every connection),
        // and were not shown as if another device had made them.
        #expect(!phone.lines.contains { $0.hasPrefix("[memory] new:") })
        #expect(!laptop.lines.contains { $0.hasPrefix("[memory] point ") || $0 == "[memory] \(id) deleted" })
    }
}
