import ArgumentParser
import Foundation
import HuddleBuildInfo
import HuddleClient
import HuddleProtocol
import HuddleIO

@main
struct HuddleLoadTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle-loadtest",
        abstract: "Measure what a Huddle server (or any WebSocket server, in the raw modes) carries; see loadtest/README.md.",
        version: BuildInfo.versionLine,
        subcommands: [
            ConnectCommand.self, FanoutCommand.self, ChatCommand.self, MatchesCommand.self, LocationCommand.self,
            ReconnectStormCommand.self, LoginCommand.self, EchoCommand.self, BroadcastCommand.self,
        ]
    )
}

/// Options every scenario shares.
struct CommonOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Server URL (ws:// or wss://). Huddle scenarios add /v1 when the path is missing; raw modes add /echo or /broadcast.",
        discussion: "Give it once per node of a cluster: virtual client i starts on URL i mod n, and a reconnecting client moves to the next URL. Set-up connections and the report's /metrics use the first."))
    var url: [String] = ["ws://127.0.0.1:8080"]
    @Option(help: "Seconds of warm-up before measuring.") var warmup: Double = 2
    @Option(help: "Seconds to measure.") var duration: Double = 10
    @Option(help: "Longest wait, in seconds, for messages still under way after the measured window.") var drain: Double = 3
    @Option(help: "The server's pid: its CPU and memory are sampled from /proc.") var serverPid: Int32?
    @Option(help: "Write the result as JSON to this file.") var json: String?
    @Option(help: "Write a self-contained HTML report with charts to this file.") var html: String?
    @Option(help: "CA file to trust for wss://.") var ca: String?
    @Flag(help: "Do not verify the server's certificate (self-signed test servers).") var insecure = false
    @Flag(help: "Do not offer permessage-deflate.") var noCompression = false
    @Option(help: ArgumentHelp(
        "Local address to connect from (repeatable): connections take them in turn.",
        discussion: "Toward one server address each source address has its own ephemeral ports (ip_local_port_range: about 28,000 by default); past that many connections, give several loopback addresses (127.0.0.2, 127.0.0.3, …)."))
    var sourceAddress: [String] = []

    /// The Huddle protocol endpoints: `/v1` unless a URL names a path.
    func endpoint(_ urls: [String]? = nil) throws -> ServerURLs {
        try rawEndpoint(urls, defaultPath: "/v1")
    }

    /// The URLs as given (`--url` unless others are named), or with `defaultPath` when one has none.
    func rawEndpoint(_ urls: [String]? = nil, defaultPath: String) throws -> ServerURLs {
        ServerURLs(try (urls ?? url).map { text in
            var parsed = try ClientURL(text)
            if parsed.target == "/" { parsed.target = defaultPath }
            return parsed
        })
    }

    var connectionOptions: ClientConnectionOptions {
        var options = ClientConnectionOptions()
        options.tls.caFile = ca
        options.tls.insecure = insecure
        if noCompression { options.compression = nil }
        // Checked by `validate`.
        if !sourceAddress.isEmpty { options.sourceAddresses = try? SourceAddresses(sourceAddress) }
        return options
    }

    var measurement: Measurement.Settings {
        .init(warmupSeconds: warmup, durationSeconds: duration, drainSeconds: drain, serverPID: serverPid)
    }

    func validate() throws {
        guard warmup >= 0, duration > 0, drain >= 0 else { throw ValidationError("--warmup and --drain must be ≥ 0 and --duration > 0") }
        guard !url.isEmpty else { throw ValidationError("--url: at least one") }
        for text in url { _ = try ClientURL(text) }
        if !sourceAddress.isEmpty {
            do {
                _ = try SourceAddresses(sourceAddress)
            } catch {
                throw ValidationError("--source-address: \(error)")
            }
        }
    }

    /// Prints the summary, writes the JSON and the report, and ends with the verdict line;
    /// the exit status says the same (README: "Exit status").
    func report(_ result: ScenarioResult?, target: ClientURL) throws {
        guard var result else { throw ValidationError("the scenario produced no result") }
        result.server = ServerInfo.gather(url: target, pid: serverPid)
        print(result.table)
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(result).write(to: URL(fileURLWithPath: json))
        }
        if let html {
            try Data(HTMLReport(result: result).render().utf8).write(to: URL(fileURLWithPath: html))
        }
        print("verdict: \(result.verdict)")
        fflush(nil)
        if result.exitStatus != 0 { throw ExitCode(result.exitStatus) }
    }
}

/// Runs a scenario on a fresh event-loop thread and waits until it stops the loop; one loop
/// drives every connection of the run, and the other core stays free for a server on the same
/// machine.
func runScenario(_ makeScenario: @escaping @Sendable (EventLoop, Progress) -> any Scenario) throws -> ScenarioResult? {
    MachineInfo.raiseOpenFilesLimit()
    // Before any thread starts, so none of them takes a Ctrl-C: the watcher does.
    SignalWatcher.blockInterruptions()
    let loop = try EventLoop(index: 0)
    let box = ScenarioBox()
    loop.execute {
        let scenario = makeScenario(loop, Progress())
        box.scenario = scenario
        scenario.start()
    }
    let thread = try LoopThread.spawn(name: "loadtest-io") { loop.run() }
    try SignalWatcher.watch { signal in
        loop.execute { box.scenario?.measurement.interrupt(signal: signal) }
    }
    thread.join()
    return box.scenario?.result
}

/// A scenario runs on its loop thread and leaves its result for the main thread, which reads
/// it after joining that thread.
protocol Scenario: AnyObject {
    /// Starts the run on the loop thread; the scenario stops the loop when it is done.
    func start()
    var result: ScenarioResult? { get }
    /// Its clock and counters, which a Ctrl-C ends early.
    var measurement: Measurement { get }
}

final class ScenarioBox: @unchecked Sendable {
    var scenario: (any Scenario)?
}
