import ChildProcessExit
import Foundation
import Testing

/// A node's accept queue is as deep as the kernel allows: a reconnect storm (every client of a
/// restarted node at once) overflowed a fixed 1,024 while `net.core.somaxconn` allowed more, and
/// each dropped handshake costs its client a 1-3-7 s SYN retry.
@Suite(.ownThread) struct ListenBacklogTests {
    @Test func theListeningSocketsBacklogIsTheKernelsMaximum() async throws {
        let server = try await ServerProcess(["--bench"])
        let somaxconn = try String(contentsOfFile: "/proc/sys/net/core/somaxconn", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // For a listening socket, ss's Send-Q is the backlog the kernel holds it to.
        let line = try socketStatistics(["-ltnH", "sport = :\(server.port)"])
        let columns = line.split(separator: " ", omittingEmptySubsequences: true)
        #expect(columns.count >= 4 && columns[0] == "LISTEN", "ss said \(line)")
        #expect(columns.count >= 4 && String(columns[2]) == somaxconn, "ss said \(line), somaxconn is \(somaxconn)")
        #expect(try await server.stop() == 0)
    }
}

/// Runs `ss` with `arguments`: what it printed.
private func socketStatistics(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ss"] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
