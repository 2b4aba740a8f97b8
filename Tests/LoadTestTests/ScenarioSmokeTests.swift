import ChildProcessExit
import Foundation
import Testing

@testable import huddle_loadtest

/// Runs the harness binary for a couple of seconds per scenario against a real server and reads
/// its JSON result back. Serialized: each run drives a server, and the machine has two cores.
@Suite(.serialized, .ownThread) struct ScenarioSmokeTests {
    /// Runs `huddle-loadtest ARGUMENTS --json … --html …` and returns its exit status, result,
    /// report and output (stdout and stderr together); `meanwhile` gets the running process
    /// (to interrupt it).
    private func harness(
        _ arguments: [String], timeout: Double = 90, meanwhile: (ChildProcess) async throws -> Void = { _ in }
    ) async throws -> (status: Int32, result: ScenarioResult, html: String, output: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("loadtest-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: base.appendingPathExtension("json"))
            try? FileManager.default.removeItem(at: base.appendingPathExtension("html"))
        }
        let run = try ChildProcess(
            ChildProcess.products.appendingPathComponent("huddle-loadtest"),
            arguments + ["--json", base.appendingPathExtension("json").path, "--html", base.appendingPathExtension("html").path])
        try await meanwhile(run)
        let status = try await run.exitStatus(timeout: timeout)
        let data: Data
        do {
            data = try Data(contentsOf: base.appendingPathExtension("json"))
        } catch {
            throw ChildProcessFailure("no JSON result (exit \(status)); output:\n\(run.text)")
        }
        let result = try JSONDecoder().decode(ScenarioResult.self, from: data)
        let html = try String(contentsOf: base.appendingPathExtension("html"), encoding: .utf8)
        return (status, result, html, run.text)
    }

    /// The last line of the output: the verdict comes after everything else, stdout and stderr.
    private func lastLine(_ output: String) -> String {
        output.split(separator: "\n").last.map(String.init) ?? ""
    }

    private func expectClean(_ run: (status: Int32, result: ScenarioResult, html: String, output: String), sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 0, "\(run.result.table)", sourceLocation: sourceLocation)
        #expect(lastLine(run.output) == "verdict: clean", "\(run.output)", sourceLocation: sourceLocation)
        #expect(run.result.isClean, "\(run.result.table)", sourceLocation: sourceLocation)
        #expect(!run.result.series.isEmpty, sourceLocation: sourceLocation)
        #expect(run.result.measuredSeconds > 0, sourceLocation: sourceLocation)
        #expect(run.html.contains("<svg"), sourceLocation: sourceLocation)
    }

    private let short = ["--warmup", "0.5", "--duration", "1.5", "--drain", "3"]

    @Test func catchesAnInjectedGapDuplicateAndReorderingEndToEnd() async throws {
        let server = try await startFaultyBroadcastServer()
        let subscribers = 3
        let run = try await harness(["broadcast", "--url", server.url, "--subscribers", "\(subscribers)", "--rate", "40"] + short)
        let stream = run.result.stream
        #expect(run.status == 2)  // not clean
        #expect(run.result.sent > 17)
        // Two gaps each: number 5 (never filled: missing) and number 15 (filled late: reordered).
        #expect(stream.gaps == 2 * subscribers)
        #expect(stream.missing == subscribers)
        #expect(stream.duplicates == subscribers)
        #expect(stream.reordered == subscribers)
        #expect(stream.delivered == run.result.sent * subscribers)  // one lost, one extra, per subscriber
        #expect(run.html.contains("not clean"))
        #expect(lastLine(run.output) == "verdict: not clean: 6 gaps, 3 missing, 3 duplicates, 3 reordered", "\(run.output)")
    }

    /// Ctrl-C in the measured window: the sending stops, what is under way drains, and the
    /// summary, the JSON and the report still come, marked interrupted; exit status 130.
    @Test func ctrlCInTheWindowStillReportsWhatWasMeasured() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(
            ["fanout", "--url", server.url, "--subscribers", "5", "--rate", "20", "--warmup", "0", "--duration", "600",
             "--server-pid", "\(server.process.pid)"],
            timeout: 30
        ) { process in
            _ = try await process.waitFor("s measure: sent", timeout: 60)  // a whole second measured
            kill(process.pid, SIGINT)
        }
        #expect(run.status == 130, "\(run.output)")
        let interruption = try #require(run.result.interruption, "\(run.output)")
        #expect(interruption.signal == "SIGINT")
        #expect(interruption.phase == "measure")
        #expect(run.result.measuredSeconds > 0 && run.result.measuredSeconds < 600)
        #expect(run.result.sent > 0)
        #expect(run.result.stream.delivered == run.result.sent * 5)  // drained: nothing lost by stopping
        #expect(run.result.isClean, "\(run.result.table)")
        #expect(run.output.contains("interrupted by SIGINT during measure"))  // the summary
        #expect(lastLine(run.output) == "verdict: interrupted (SIGINT during measure); clean so far", "\(run.output)")
        #expect(run.html.contains("interrupted"))
        #expect(run.html.contains("verdict: interrupted (SIGINT during measure); clean so far"))
        // The server's side of the report: its URL and the flags it was started with.
        #expect(run.result.server?.url == server.url + "/v1")
        #expect(run.result.server?.commandLine?.contains("--kdf-iterations 1000") == true)
    }

    /// Ctrl-C while set-up waits on a server that never answers: no window was measured, and
    /// the report still comes, saying so.
    @Test func ctrlCDuringSetUpStillReports() async throws {
        let server = try await startFaultyBroadcastServer(silent: true)
        let run = try await harness(["fanout", "--url", server.url, "--subscribers", "5"] + short, timeout: 30) { process in
            _ = try await process.waitFor("s setup: starting", timeout: 60)
            kill(process.pid, SIGINT)
        }
        #expect(run.status == 130, "\(run.output)")
        #expect(run.result.interruption?.phase == "setup")
        #expect(run.result.measuredSeconds == 0)
        #expect(!run.result.series.isEmpty)
        #expect(lastLine(run.output) == "verdict: interrupted (SIGINT during setup); clean so far", "\(run.output)")
        #expect(run.html.contains("interrupted"))
    }

    @Test func echo() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["echo", "--url", server.url, "--connections", "10", "--window", "2", "--server-pid", "\(server.process.pid)"] + short)
        expectClean(run)
        #expect(run.result.stream.delivered == run.result.sent)
        #expect(run.result.figures["round_trips_per_second", default: 0] > 0)
        #expect(run.result.serverCPUPercent != nil)
    }

    @Test func broadcast() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["broadcast", "--url", server.url, "--subscribers", "20", "--publishers", "2", "--rate", "50"] + short)
        expectClean(run)
        #expect(run.result.stream.delivered == run.result.sent * 20)
    }

    @Test func connect() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["connect", "--url", server.url, "--connections", "60", "--rate", "200", "--hold", "0.5", "--server-pid", "\(server.process.pid)"])
        expectClean(run)
        #expect(run.result.figures["connections_opened"] == 60)
        #expect(run.result.figures["server_bytes_per_connection"] != nil)
        #expect(run.result.latency.count == 60)
    }

    /// `--source-address` twice: the connections bind the two loopback addresses in turn
    /// before connecting (the kernel's table shows them established from there, none from the
    /// default address); `--users` and `--subscribe-rooms`: each connection is one of 3
    /// signed-up users and counts once its inbox and its room are subscribed. Interrupted
    /// while holding, once the table has been read.
    @Test func connectFromSourceAddressesAsSubscribedUsers() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        var sources: [String: Int] = [:]
        let run = try await harness(
            ["connect", "--url", server.url, "--connections", "20", "--rate", "200", "--hold", "600", "--users", "3",
             "--subscribe-rooms", "2", "--source-address", "127.0.0.2", "--source-address", "127.0.0.3"],
            timeout: 60
        ) { process in
            _ = try await process.waitFor("holding for", timeout: 60)
            sources = try establishedConnectionsBySource(toPort: port)
            kill(process.pid, SIGINT)
        }
        #expect(run.status == 130, "\(run.output)")
        #expect(run.result.interruption?.phase == "measure")
        #expect(run.result.figures["connections_opened"] == 20, "\(run.output)")
        #expect(run.result.figures["connections_failed"] == 0)
        #expect(run.result.latency.count == 20)
        #expect(run.result.latencyMeaning.contains("subscribed"))
        #expect(run.result.parameters["users"] == "3")
        #expect(sources["127.0.0.2", default: 0] >= 10, "\(sources)")
        #expect(sources["127.0.0.3", default: 0] >= 10, "\(sources)")
        #expect(sources["127.0.0.1"] == nil, "\(sources)")
    }

    /// `--app-token-secret`: nobody signs up; each connection authenticates with `app_auth` and a
    /// token the harness signed for its user (the server makes each of the 4 accounts the first
    /// time it sees it), then subscribes to that user's inbox — which only that user may.
    @Test func connectAuthenticatedWithAppTokens() async throws {
        let secret = "loadtest-app-token-secret-0123456789abcdef"
        let server = try await startHuddle(["--app-token-secret", secret])
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness([
            "connect", "--url", server.url, "--connections", "12", "--rate", "200", "--hold", "0.2", "--users", "4",
            "--subscribe-rooms", "2", "--app-token-secret", secret,
        ])
        expectClean(run)
        #expect(run.result.figures["connections_opened"] == 12)
        #expect(run.result.parameters["auth"] == "app_auth")
        #expect(!run.output.contains("signing up"), "\(run.output)")
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let metrics = try await httpGet(port: port, path: "/metrics")
        #expect(metrics.contains(#"huddle_identity_verifications_total{kind="app_token",outcome="verified"} 12"#), "\(metrics)")
    }

    /// A secret the server does not share: every token is refused, and the run says why. A
    /// failed attempt closes its connection at once (a run of many thousands would otherwise
    /// keep the failed ones' sockets and descriptors for its whole hold), and that close is
    /// not counted as a connection lost while held.
    @Test func connectWithAnotherAppTokenSecretFails() async throws {
        let server = try await startHuddle(["--app-token-secret", "loadtest-app-token-secret-0123456789abcdef"])
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness([
            "connect", "--url", server.url, "--connections", "3", "--rate", "100", "--hold", "2", "--app-token-secret",
            "not-the-servers-secret-0123456789abcdefgh",
        ])
        #expect(run.status == 2, "\(run.output)")
        #expect(run.result.figures["connections_failed"] == 3)
        #expect(run.result.figures["lost_while_held"] == 0)
        #expect(run.output.contains("app_auth refused: invalid_identity_token"), "\(run.output)")
        #expect(run.result.series.last?.connections == 0, "\(run.result.series.map(\.connections))")
    }

    /// A source address the machine does not have: every attempt fails at bind, and says so.
    @Test func connectFromAnAddressNotOnTheMachineFails() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["connect", "--url", server.url, "--raw", "--connections", "3", "--rate", "100", "--hold", "0", "--source-address", "192.0.2.1"])
        #expect(run.status == 2, "\(run.output)")
        #expect(run.result.figures["connections_failed"] == 3)
        #expect(run.output.contains("bind(192.0.2.1"), "\(run.output)")
    }

    @Test func fanout() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["fanout", "--url", server.url, "--subscribers", "10", "--rate", "40"] + short)
        expectClean(run)
        #expect(run.result.stream.delivered == run.result.sent * 10)
    }

    /// One room's subscribers in two harness processes, windows aligned by `--start-at`: one
    /// publishes, the other only listens, and both hear every publication once, in order.
    @Test func fanoutOverTwoProcessesOnePublishingOneListening() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let room = "room:two-processes-\(UInt32.random(in: 0...UInt32.max))"
        let startAt = String(Int(Date().timeIntervalSince1970) + 10)
        let shared = ["fanout", "--url", server.url, "--subscribers", "5", "--rate", "20", "--room", room, "--start-at", startAt] + short
        async let publishing = harness(shared)
        async let listening = harness(shared + ["--listen-only"])
        let (publisher, listener) = try await (publishing, listening)
        expectClean(publisher)
        expectClean(listener)
        #expect(listener.result.parameters["listen_only"] == "true")
        #expect(publisher.result.sent > 20)
        #expect(listener.result.sent == publisher.result.sent, "the listener heard every publication")
        #expect(listener.result.stream.delivered == publisher.result.sent * 5)
        #expect(publisher.result.stream.delivered == publisher.result.sent * 5)
    }

    /// A set-up that ends after `--start-at` cannot share the others' window: the run aborts.
    @Test func aStartAtAlreadyPastAborts() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["fanout", "--url", server.url, "--subscribers", "2", "--rate", "20", "--start-at", "1000000000"] + short)
        #expect(run.status == 2, "\(run.output)")
        #expect(run.output.contains("after --start-at"), "\(run.output)")
        #expect(run.result.sent == 0)
    }

    @Test func chat() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["chat", "--url", server.url, "--users", "10", "--rate", "5"] + short)
        expectClean(run)
        #expect(run.result.stream.delivered == run.result.sent)  // each message reaches the partner once
        #expect(run.result.acknowledged == run.result.sent)
    }

    @Test func reconnectStorm() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness([
            "reconnect-storm", "--url", server.url, "--subscribers", "20", "--rooms", "2", "--rate", "20", "--drop-after", "0.5",
            "--drop-fraction", "0.5", "--warmup", "0.5", "--duration", "2",
        ])
        expectClean(run)
        #expect(run.result.figures["dropped"] == 10)
        #expect(run.result.figures["reconnected"] == 10)
        #expect(run.result.figures["recovered_true"] == 10)
        #expect(run.result.otherLatencies.values.contains { $0.count == 10 })  // one reconnect time each
        #expect(run.result.stream.delivered == run.result.sent * 10)  // 20 subscribers, 2 rooms
        // Where the turn that issues the reconnects spent its time: on a core, or waiting for one.
        #expect(run.output.contains("issued 10 reconnects in "), "\(run.output)")
        #expect((run.result.figures["reconnects_issued_s"] ?? 0) > 0)
        #expect(run.result.figures["reconnects_issued_run_s"] != nil && run.result.figures["reconnects_issued_wait_s"] != nil)
    }

    /// Two URLs of one server (the second through a forwarder, a stand-in for a second node
    /// that shares its state): the subscribers are spread over both, and when the forwarder is
    /// killed its subscribers move to the other URL and resume with no gap and no duplicate.
    @Test func reconnectStormSpreadsOverURLsAndFailsOver() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let forwarder = try await startTCPForwarder(to: port)
        let run = try await harness([
            "reconnect-storm", "--url", server.url, "--url", forwarder.url, "--subscribers", "20", "--rooms", "1", "--rate", "20",
            "--drop-after", "1.5", "--drop-fraction", "0", "--warmup", "0.5", "--duration", "2",
        ]) { harness in
            _ = try await harness.waitFor("measuring", timeout: 60)
            kill(forwarder.process.pid, SIGKILL)
        }
        expectClean(run)
        #expect(forwarder.process.text.components(separatedBy: "accepted").count - 1 == 10, "subscribers 1, 3, … 19 came through it")
        #expect(run.result.figures["dropped"] == 10, "the forwarder's subscribers lost their node")
        #expect(run.result.figures["reconnected"] == 10)
        #expect(run.result.figures["recovered_true"] == 10)
        #expect(run.result.stream.delivered == run.result.sent * 20, "every subscriber got everything once")
    }

    @Test func fanoutPutsPublishersWherePublisherURLSaysAndSubscribersOnURL() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let forwarder = try await startTCPForwarder(to: port)
        defer { kill(forwarder.process.pid, SIGKILL) }
        let run = try await harness([
            "fanout", "--url", server.url, "--publisher-url", forwarder.url, "--subscribers", "6", "--publishers", "2", "--rate", "20",
        ] + short)
        expectClean(run)
        #expect(forwarder.process.text.components(separatedBy: "accepted").count - 1 == 2, "the two publishers, and no subscriber, came through it")
        #expect(run.result.stream.delivered == run.result.sent * 6)
    }

    @Test func matches() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["matches", "--url", server.url, "--users", "12", "--friends", "4", "--rate", "2"] + short)
        expectClean(run)
        #expect(run.result.figures["matches", default: 0] > 0)
        #expect(run.result.figures["matches_ended"] == run.result.figures["matches"])
        #expect(run.result.stream.delivered == 4 * Int(run.result.figures["matches", default: 0]))  // both sides, start and end
    }

    @Test func location() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["location", "--url", server.url, "--users", "12", "--followers", "3", "--rate", "2"] + short)
        expectClean(run)
        let changes = Int(run.result.figures["place_changes", default: 0])
        #expect(changes >= 12)  // at least everyone's first fix (home)
        #expect(run.result.stream.delivered == 3 * changes)
    }

    @Test func login() async throws {
        let server = try await startHuddle()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let run = try await harness(["login", "--url", server.url, "--count", "3"])
        expectClean(run)
        #expect(run.result.latency.count == 3)
    }
}
