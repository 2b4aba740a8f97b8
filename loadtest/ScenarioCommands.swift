import ArgumentParser
import HuddleClient
import HuddleProtocol

// The subcommands: each reads its options, builds its scenario's settings and runs it.
// loadtest/README.md explains every scenario and option.

struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Ramp to N connections at C per second, hold them: connections/s, failures by reason, server memory per connection.",
        discussion: "--warmup and --duration do not apply: the window runs from the first attempt to the end of --hold."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Connections to open.") var connections = 10_000
    @Option(help: "New connections per second (open loop).") var rate: Double = 1_000
    @Option(help: "Seconds to hold them all open after the ramp.") var hold: Double = 5
    @Flag(help: "Any WebSocket server: no sign-up and no token; a connection counts once the upgrade succeeds.") var raw = false
    @Option(help: "Users the connections belong to, signed up first (connection i is user i mod N).") var users = 1
    @Option(help: ArgumentHelp(
        "Rooms: each connection subscribes to its user's inbox and to room i mod N (0: no subscriptions).",
        discussion: "A connection then counts once both subscribe replies are in."))
    var subscribeRooms = 0
    @Option(help: ArgumentHelp(
        "The server's --app-token-secret: each connection authenticates with app_auth and a token the harness signs for its user, instead of signing users up first.",
        discussion: "The server makes each account the first time it sees it (no password to hash)."))
    var appTokenSecret: String?

    func validate() throws {
        guard connections > 0, rate > 0, hold >= 0 else { throw ValidationError("--connections and --rate must be > 0, --hold ≥ 0") }
        guard users > 0, subscribeRooms >= 0 else { throw ValidationError("--users must be > 0, --subscribe-rooms ≥ 0") }
        guard !raw || (users == 1 && subscribeRooms == 0) else { throw ValidationError("--users and --subscribe-rooms are for /v1, not --raw") }
        guard appTokenSecret == nil || (!raw && appTokenSecret?.isEmpty == false) else {
            throw ValidationError("--app-token-secret: a non-empty secret, and not with --raw")
        }
    }

    func run() throws {
        let settings = ConnectScenario.Settings(
            urls: raw ? try common.rawEndpoint(defaultPath: "/") : try common.endpoint(), options: common.connectionOptions,
            connections: connections, rate: rate, holdSeconds: hold, raw: raw, users: users, subscribeRooms: subscribeRooms,
            // The server hashes at most 4 sign-up passwords per client address at once, 64 in all.
            setupConcurrency: min(64, 4 * max(1, common.sourceAddress.count)),
            appTokens: appTokenSecret.map { AppTokenSigner(secret: Array($0.utf8)) }, serverPID: common.serverPid)
        try common.report(runScenario { ConnectScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct FanoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "P publishers → one room with N subscribers at R messages/s each (open loop)."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Subscribers.") var subscribers = 1000
    @Option(help: "Publishers.") var publishers = 1
    @Option(help: "Messages per second per publisher.") var rate: Double = 100
    @Option(help: "Bytes of padding in each message.") var payload = 32
    @Option(help: ArgumentHelp(
        "Where the publishers connect (repeatable), instead of sharing --url with the subscribers.",
        discussion: "A cluster's cross-node latency: publishers on one node, subscribers on the others."))
    var publisherUrl: [String] = []
    @Option(help: "The room (room:NAME); a fresh random one by default. Processes sharing one room's subscribers name it alike.") var room: String?
    @Option(help: startAtHelp) var startAt: Double?
    @Flag(help: ArgumentHelp(
        "Open no publishers: another harness process publishes to --room (same --publishers and --start-at); this one subscribes and checks.",
        discussion: "Of each publisher it expects every number up to the highest any of its subscribers heard."))
    var listenOnly = false

    func validate() throws {
        guard subscribers > 0, publishers > 0, rate > 0, payload >= 0 else { throw ValidationError("counts and --rate must be > 0") }
        for text in publisherUrl { _ = try ClientURL(text) }
        guard room?.hasPrefix("room:") ?? true else { throw ValidationError("--room: a room: channel") }
        guard !listenOnly || room != nil else { throw ValidationError("--listen-only needs the publisher's --room") }
    }

    func run() throws {
        let urls = try common.endpoint()
        let settings = FanoutScenario.Settings(
            urls: urls, publisherURLs: publisherUrl.isEmpty ? urls : try common.endpoint(publisherUrl),
            options: common.connectionOptions, subscribers: subscribers, publishers: publishers,
            rate: rate, payloadBytes: payload, measurement: common.measurement, room: room, startAt: startAt, listenOnly: listenOnly)
        try common.report(runScenario { FanoutScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct ChatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "N users in befriended pairs, each sending R messages/s to its pair's chat room (open loop)."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Users (even: they come in pairs).") var users = 1000
    @Option(help: "Messages per second per user.") var rate: Double = 1
    @Option(help: "Bytes of padding in each message.") var payload = 32

    func validate() throws {
        guard users >= 2, users % 2 == 0 else { throw ValidationError("--users must be even and at least 2") }
        guard rate > 0, payload >= 0 else { throw ValidationError("--rate must be > 0") }
    }

    func run() throws {
        let settings = ChatScenario.Settings(
            urls: try common.endpoint(), options: common.connectionOptions, users: users, rate: rate, payloadBytes: payload,
            measurement: common.measurement)
        try common.report(runScenario { ChatScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct ReconnectStormCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconnect-storm",
        abstract: "Drop a fraction of the subscribers at once; they reconnect and resume with `since`: nothing may be missed."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Subscribers, spread over the rooms.") var subscribers = 1000
    @Option(help: "Rooms.") var rooms = 10
    @Option(help: "Publishers per room.") var publishers = 1
    @Option(help: "Messages per second per publisher.") var rate: Double = 10
    @Option(help: "Seconds into the measured window when the connections drop.") var dropAfter: Double = 3
    @Option(help: "Fraction of the subscribers dropped at once (0–1).") var dropFraction: Double = 0.5
    @Option(help: "Bytes of padding in each message.") var payload = 32
    @Option(help: startAtHelp) var startAt: Double?

    func validate() throws {
        guard subscribers > 0, rooms > 0, publishers > 0, rate > 0, payload >= 0 else { throw ValidationError("counts and --rate must be > 0") }
        guard (0...1).contains(dropFraction) else { throw ValidationError("--drop-fraction must be between 0 and 1") }
        guard dropAfter >= 0, dropAfter < common.duration else { throw ValidationError("--drop-after must fall inside --duration") }
    }

    func run() throws {
        let settings = ReconnectStormScenario.Settings(
            urls: try common.endpoint(), options: common.connectionOptions, subscribers: subscribers, rooms: rooms,
            publishersPerRoom: publishers, rate: rate, dropAfterSeconds: dropAfter, dropFraction: dropFraction,
            payloadBytes: payload, measurement: common.measurement, startAt: startAt)
        try common.report(runScenario { ReconnectStormScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "The cost of a login: sign up once, then log in N times on fresh connections, one at a time."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Logins to time.") var count = 20

    func validate() throws {
        guard count > 0 else { throw ValidationError("--count must be > 0") }
    }

    func run() throws {
        let urls = try common.endpoint()
        let options = common.connectionOptions
        let (count, serverPID) = (self.count, common.serverPid)
        try common.report(runScenario { LoginScenario(urls: urls, options: options, count: count, serverPID: serverPID, loop: $0, progress: $1) }, target: urls.first)
    }
}

struct EchoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "Raw: N connections to any server's echo endpoint, W messages in flight each (or R/s each, open loop).",
        discussion: "The URL's path defaults to /echo (Huddle's, with --bench)."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Connections.") var connections = 100
    @Option(help: "Messages in flight per connection (closed loop; ignored with --rate).") var window = 1
    @Option(help: "Messages per second per connection, open loop; 0 for the closed loop.") var rate: Double = 0
    @Option(help: "Message size in bytes.") var payload = 32

    func validate() throws {
        guard connections > 0, window > 0, rate >= 0, payload >= 0 else { throw ValidationError("--connections and --window must be > 0") }
    }

    func run() throws {
        let settings = EchoScenario.Settings(
            urls: try common.rawEndpoint(defaultPath: "/echo"), options: common.connectionOptions, connections: connections,
            window: window, rate: rate, payloadBytes: payload, measurement: common.measurement)
        try common.report(runScenario { EchoScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct BroadcastCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Raw: N subscribers + P publishers on any server's broadcast endpoint, R messages/s per publisher (open loop).",
        discussion: "The endpoint must send every message to every connection. The URL's path defaults to /broadcast (Huddle's, with --bench)."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Subscribers.") var subscribers = 1000
    @Option(help: "Publishers.") var publishers = 1
    @Option(help: "Messages per second per publisher.") var rate: Double = 1000
    @Option(help: "Message size in bytes.") var payload = 32

    func validate() throws {
        guard subscribers > 0, publishers > 0, rate > 0, payload >= 0 else { throw ValidationError("counts and --rate must be > 0") }
    }

    func run() throws {
        let settings = BroadcastScenario.Settings(
            urls: try common.rawEndpoint(defaultPath: "/broadcast"), options: common.connectionOptions, subscribers: subscribers,
            publishers: publishers, rate: rate, payloadBytes: payload, measurement: common.measurement)
        try common.report(runScenario { BroadcastScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct MatchesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matches",
        abstract: "N users in a ring of friendships toggling an activity on and off at R/s each: match notices, checked and timed."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Users.") var users = 1000
    @Option(help: "Friends per user (even: ring neighbours on both sides).") var friends = 4
    @Option(help: "Toggles (on, off, on, …) per second per user.") var rate: Double = 0.5
    @Option(help: "Activities, comma-separated, from the server's list; user u toggles the (u mod count)-th.") var activities = "Coffee"

    func validate() throws {
        guard friends >= 2, friends % 2 == 0, friends < users else { throw ValidationError("--friends must be even, at least 2 and below --users") }
        guard rate > 0 else { throw ValidationError("--rate must be > 0") }
        guard !activityList.isEmpty else { throw ValidationError("--activities names none") }
    }

    private var activityList: [String] { activities.split(separator: ",").map { String($0.trimmingSpaces) }.filter { !$0.isEmpty } }

    func run() throws {
        let settings = MatchesScenario.Settings(
            urls: try common.endpoint(), options: common.connectionOptions, users: users, friends: friends, rate: rate,
            activities: activityList, measurement: common.measurement)
        try common.report(runScenario { MatchesScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

struct LocationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "location",
        abstract: "N users each followed by K friends, reporting fixes at R/s each between home and work: place changes, checked and timed."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Users.") var users = 1000
    @Option(help: "Followers per user (each user follows as many; at most 100, the subscription limit).") var followers = 5
    @Option(help: "Fixes per second per user.") var rate: Double = 1

    func validate() throws {
        guard followers >= 1, followers <= 100, 2 * followers < users else { throw ValidationError("--followers must be 1–100 and below half of --users") }
        guard rate > 0 else { throw ValidationError("--rate must be > 0") }
    }

    func run() throws {
        let settings = LocationScenario.Settings(
            urls: try common.endpoint(), options: common.connectionOptions, users: users, followers: followers, rate: rate,
            measurement: common.measurement)
        try common.report(runScenario { LocationScenario(settings: settings, loop: $0, progress: $1) }, target: settings.urls.first)
    }
}

private let startAtHelp = ArgumentHelp(
    "Start the traffic at this wall-clock time (seconds since 1970, e.g. $(( $(date +%s) + 60 ))) instead of when the set-up is done.",
    discussion: "Harness processes run side by side (each under its own descriptor limit) measure one window together; one whose set-up ends later fails.")
