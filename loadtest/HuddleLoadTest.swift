import ArgumentParser
import Foundation
import HuddleClient
import HuddleIO

@main
struct HuddleLoadTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle-loadtest",
        abstract: "Measure what a Huddle server carries (see loadtest/README.md).",
        subcommands: [Fanout.self, Login.self]
    )
}

/// Options every scenario shares.
struct CommonOptions: ParsableArguments {
    @Option(help: "Server base URL (ws:// or wss://); the scenario adds /v1.") var url = "ws://127.0.0.1:8080"
    @Option(help: "Seconds of warm-up before measuring.") var warmup: Double = 2
    @Option(help: "Seconds to measure.") var duration: Double = 10
    @Option(help: "The server's pid: its CPU and memory are sampled from /proc.") var serverPid: Int32?
    @Option(help: "Write the result as JSON to this file.") var json: String?
    @Option(help: "CA file to trust for wss://.") var ca: String?
    @Flag(help: "Do not verify the server's certificate (self-signed test servers).") var insecure = false
    @Flag(help: "Do not offer permessage-deflate.") var noCompression = false

    func endpoint() throws -> ClientURL {
        try ClientURL(url.hasSuffix("/v1") ? url : url + "/v1")
    }

    var connectionOptions: ClientConnectionOptions {
        var options = ClientConnectionOptions()
        options.tls.caFile = ca
        options.tls.insecure = insecure
        if noCompression { options.compression = nil }
        return options
    }

    func report(_ result: ScenarioResult?) throws {
        guard let result else { throw ValidationError("the scenario produced no result") }
        print(result.table)
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(result).write(to: URL(fileURLWithPath: json))
        }
        if !result.isClean { throw ExitCode(2) }
    }
}

/// Runs `start` on a fresh event loop thread and waits until the scenario stops the loop.
func runOnLoop(_ start: @escaping @Sendable (EventLoop) -> Void) throws {
    let loop = try EventLoop(index: 0)
    loop.execute { start(loop) }
    let thread = try LoopThread.spawn(name: "loadtest-io") { loop.run() }
    thread.join()
}

struct Fanout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "P publishers → one room with N subscribers at R messages/s each (open loop)."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Subscribers.") var subscribers = 1000
    @Option(help: "Publishers.") var publishers = 1
    @Option(help: "Messages per second per publisher.") var rate: Double = 100
    @Option(help: "Bytes of padding in each message.") var payload = 32

    func run() throws {
        let settings = FanoutScenario.Settings(
            url: try common.endpoint(), options: common.connectionOptions, subscribers: subscribers, publishers: publishers,
            rate: rate, payloadBytes: payload, warmupSeconds: common.warmup, durationSeconds: common.duration, serverPID: common.serverPid)
        let box = ScenarioBox()
        try runOnLoop { loop in
            let scenario = FanoutScenario(settings: settings, loop: loop, progress: Progress())
            box.scenario = scenario
            scenario.start()
        }
        try common.report(box.scenario?.result)
    }
}

struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The cost of a login: sign up once, then log in N times on fresh connections, one at a time."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Logins to time.") var count = 20

    func run() throws {
        let url = try common.endpoint()
        let options = common.connectionOptions
        let box = ScenarioBox()
        let count = self.count
        try runOnLoop { loop in
            let scenario = LoginScenario(url: url, options: options, count: count, loop: loop, progress: Progress())
            box.scenario = scenario
            scenario.start()
        }
        try common.report(box.scenario?.result)
    }
}

/// A scenario runs on its loop thread and leaves its result for the main thread, which reads
/// it after joining that thread.
protocol Scenario: AnyObject {
    var result: ScenarioResult? { get }
}

final class ScenarioBox: @unchecked Sendable {
    var scenario: (any Scenario)?
}
