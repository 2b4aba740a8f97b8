import ArgumentParser
import Glibc
import HuddleBuildInfo
import HuddleClient
import HuddleProtocol

/// huddle-chat: a terminal client for a Huddle server, in the spirit of a minimal IRC client.
/// On a terminal it edits a line while events print above it; otherwise it reads one command
/// per line and prints one line per reply or event, for scripts and tests.
@main
struct HuddleChat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle-chat",
        abstract: "Chat with friends on a Huddle server from a terminal.",
        discussion: """
            Type /help once connected. Sessions are kept per server and user in \
            ~/.config/huddle/chat/SERVER/USER.json (mode 0600), so the next start is signed in; \
            --user picks one when several are saved. $HUDDLE_CHAT_CONFIG names one file instead.

            Exit status: 0 done; 1 a command or message failed (an [error] line answered it, \
            when stdin is not a terminal); 2 the connection cannot be made or was refused for \
            good (certificate, wrong scheme, wrong path); 64 bad arguments.
            """,
        version: BuildInfo.versionLine)

    @Option(help: ArgumentHelp(
        "The server's protocol endpoint (ws:// or wss://; /v1 is added to a bare host). Default: the one saved in $HUDDLE_CHAT_CONFIG, else ws://127.0.0.1:8080/v1.",
        discussion: "Give it again for each node of a cluster (--url ws://a:8080 --url ws://b:8080): huddle-chat starts on the first and moves to the next whenever a connection fails or drops; the saved session is kept under the first."))
    var url: [String] = []

    @Option(help: "Resume this user's saved session on the server (needed when several are saved; /login or /signup still sign in anyone).")
    var user: String?

    @Option(help: "A PEM file of CA certificates to trust for wss:// instead of the system store.")
    var ca: String?

    @Flag(help: "Accept any certificate for wss:// (self-signed test servers only: the traffic can then be read and changed).")
    var insecure = false

    mutating func run() throws {
        signal(SIGPIPE, SIG_IGN)
        // A single settings file also remembers the server; per-user ones are found by it.
        var urlText = url.first ?? "ws://127.0.0.1:8080/v1"
        if url.isEmpty, let path = ChatSessionStore.singleFilePath() {
            urlText = (try? ChatConfigFile(path: path).load())?.url ?? urlText
        }
        let clientURLs = try ([urlText] + url.dropFirst()).map(Self.endpoint)
        if let ca, access(ca, R_OK) != 0 { throw ValidationError("--ca: cannot read \(ca)") }

        let store = ChatSessionStore.choose(serverURL: clientURLs[0].description)
        let session: (file: ChatConfigFile?, settings: ChatSettings, note: String?)
        do {
            session = try store.initial(requested: user)
        } catch {
            throw ValidationError("\(error)")
        }
        let settings = session.settings
        // A saved session belongs to the server it was made on.
        let savedToken = store.isPerServer || settings.url == urlText ? settings.token : nil
        var configuration = HuddleClientConfiguration(urls: clientURLs, credentials: savedToken.map { .token($0) } ?? .none)
        configuration.connection.tls = ClientTLSOptions(caFile: ca, insecure: insecure)
        configuration.device = "huddle-chat"
        // A message typed while the server restarts waits for it rather than failing.
        configuration.requestTimeoutMilliseconds = 30_000
        configuration.reconnect = ReconnectPolicy(initialDelayMilliseconds: 250, maxDelayMilliseconds: 10_000)

        let interactive = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
        let runLoop = try ClientRunLoop()
        let terminal = interactive ? TerminalDisplay() : nil
        if interactive { try TerminalMode.enterRaw() }
        let display: any ChatDisplay = terminal ?? PlainDisplay()
        let app = ChatApp(
            client: HuddleClient(configuration: configuration, runLoop: runLoop), display: display, store: store, configFile: session.file,
            settings: settings, urlText: urlText, signedInAs: savedToken != nil ? settings.username : nil,
            stopLoop: { runLoop.stop() })
        if interactive {
            display.show("huddle-chat: connecting to \(clientURLs.map(\.description).joined(separator: ", ")); /help for commands, Ctrl-C to quit")
        }
        if let note = session.note { display.show(note) }
        // This thread runs the loop next, so it owns the app until then: started before the
        // input is read, the app sees every line of it.
        app.start()
        try runLoop.readInput(
            from: STDIN_FILENO,
            received: { bytes in
                if let terminal { app.receivedKeys(bytes, on: terminal) } else { app.receivedLines(bytes) }
            },
            ended: { app.inputDidEnd() })
        runLoop.run()
        display.close()
        throw ExitCode(app.exitStatus)
    }

    /// One `--url`: a bare host gets the protocol's path.
    static func endpoint(_ text: String) throws -> ClientURL {
        var endpoint: ClientURL
        do {
            endpoint = try ClientURL(text)
        } catch {
            throw ValidationError("--url \(text): \(error)")
        }
        if endpoint.target == "/" { endpoint.target = "/v1" }
        return endpoint
    }
}
