// swift-tools-version:6.0
// Huddle: a real-time WebSocket pub/sub server on POSIX sockets, epoll, OpenSSL and zlib.
// Layers (docs/ARCHITECTURE.md, "Layers and modules"), each depending only on layers below it:
//   C:         CHuddleShims (OpenSSL, zlib, the few macros Swift cannot import)
//   utilities: HuddleIO (loops, sockets, timers, TLS), HuddleCrypto (libcrypto), HuddleWebSocket
//              (HTTP/1.1, URLs, RFC 6455, RFC 7692), HuddleProtocol (the wire), HuddleCore (the
//              product's state machine), HuddleStore (the disk)
//   wiring:    HuddleServer (all of the above); HuddleClient (IO, WebSocket, Protocol)
//   programs:  huddle (HuddleServer; HuddleStore for `huddle data`), huddle-chat and
//              huddle-loadtest (HuddleClient).
//   cluster:   CHiredis (hiredis) <- HuddleRedis (IO): Redis for cluster mode (`huddle serve --redis`), used by HuddleServer.
import PackageDescription

let package = Package(
    name: "Huddle",
    products: [
        .executable(name: "huddle", targets: ["huddle"]),
        .executable(name: "huddle-loadtest", targets: ["huddle-loadtest"]),
        .executable(name: "huddle-chat", targets: ["huddle-chat"]),
        .library(name: "HuddleWebSocket", targets: ["HuddleWebSocket"]),
        .library(name: "HuddleIO", targets: ["HuddleIO"]),
        .library(name: "HuddleClient", targets: ["HuddleClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        // The few C declarations Swift cannot import on its own (macros, inline helpers),
        // plus the system libraries the transport links: OpenSSL (libssl, libcrypto) and zlib.
        .target(
            name: "CHuddleShims",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto"), .linkedLibrary("z")]
        ),
        // Event loops, sockets, timers, TLS, worker threads. Knows nothing of HTTP or WebSocket.
        .target(name: "HuddleIO", dependencies: ["CHuddleShims"]),
        // Hashes, HMAC, key derivation and secure randomness over OpenSSL's libcrypto; JWS/JWT
        // verification (RS256, ES256, HS256) with JWKs, whose JSON it reads with HuddleProtocol's parser.
        .target(name: "HuddleCrypto", dependencies: ["CHuddleShims", "HuddleProtocol"]),
        // HTTP/1.1 heads and upgrade, ws/http URLs, RFC 6455 framing, RFC 7692 permessage-deflate:
        // pure state machines, no sockets.
        .target(name: "HuddleWebSocket", dependencies: ["CHuddleShims"]),
        // The JSON wire protocol (protocol.md): the wire model, requests, replies and events, with
        // their one encoder and one decoder, for the server and the client alike.
        .target(name: "HuddleProtocol"),
        // The product: one deterministic state machine; no I/O, no clock, no randomness. Its
        // values that travel (Place, FeedPost, …) are the wire model's.
        .target(name: "HuddleCore", dependencies: ["HuddleProtocol"]),
        // Durability: the write-ahead log and snapshots, as checksummed bytes on disk.
        .target(name: "HuddleStore", dependencies: ["CHuddleShims"], exclude: ["README.md"]),
        // hiredis, the Redis client library (libhiredis-dev), as a system library. Not through
        // pkg-config: its `hiredis.pc` adds -D_FILE_OFFSET_BITS=64, a flag SwiftPM refuses with a
        // warning on every build; the headers are in /usr/include and the module map links it.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // Redis for cluster mode (issue 14): hiredis's async API driven by a HuddleIO event loop,
        // redis:// and redis+sentinel:// URLs, master discovery through Sentinel.
        .target(name: "HuddleRedis", dependencies: ["CHiredis", "CHuddleShims", "HuddleIO"]),
        // The client library: WebSocket connections over HuddleIO (many per loop), TLS, deflate.
        .target(name: "HuddleClient", dependencies: ["HuddleIO", "HuddleWebSocket", "HuddleProtocol"]),
        // The version and the git commit every binary reports (--version, huddle_build_info).
        .target(name: "HuddleBuildInfo", plugins: ["BuildCommit"]),
        .plugin(name: "BuildCommit", capability: .buildTool()),
        // The web app and the JavaScript SDK's file, embedded as bytes (served at /app/ and /sdk/).
        .target(name: "HuddleWebApp", resources: [.embedInCode("Files")]),
        // Wires connections, endpoints and limits together.
        .target(
            name: "HuddleServer",
            dependencies: [
                "HuddleIO", "HuddleCrypto", "HuddleWebSocket", "HuddleProtocol", "HuddleCore", "HuddleStore",
                "HuddleWebApp", "HuddleBuildInfo", "HuddleRedis",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command line: `huddle serve` configures and runs HuddleServer; `huddle data` runs
        // the store's offline tools (verify, inspect, backup) with no server at all.
        .executableTarget(
            name: "huddle",
            dependencies: [
                "HuddleServer",
                "HuddleStore",
                "HuddleRedis",
                "HuddleBuildInfo",
                "HuddleIO",
                "HuddleProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The load-test harness (loadtest/README.md): scenarios on HuddleClient, many
        // connections per loop thread, latency in HdrHistogram; HuddleCrypto signs app tokens.
        .executableTarget(
            name: "huddle-loadtest",
            dependencies: [
                "HuddleClient", "HuddleIO", "HuddleProtocol", "HuddleWebSocket", "HuddleBuildInfo", "HuddleCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "loadtest",
            exclude: ["README.md"]
        ),
        // The terminal client (README.md, "huddle-chat") on HuddleClient.
        .executableTarget(
            name: "huddle-chat",
            dependencies: [
                "HuddleClient", "HuddleProtocol", "HuddleBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "HuddleWebSocketTests", dependencies: ["HuddleWebSocket"]),
        .testTarget(name: "HuddleIOTests", dependencies: ["HuddleIO", "CHuddleShims"]),
        .testTarget(name: "HuddleProtocolTests", dependencies: ["HuddleProtocol"]),
        .testTarget(name: "HuddleCoreTests", dependencies: ["HuddleCore", "HuddleProtocol"], exclude: ["Records/Golden"]),
        .testTarget(name: "HuddleStoreTests", dependencies: ["HuddleStore"]),
        .testTarget(name: "HuddleCryptoTests", dependencies: ["HuddleCrypto", "HuddleProtocol", "JWTTestSupport"]),
        // Keys made with libcrypto and tokens signed with them, for the JWT tests (unit and end to end).
        .target(name: "JWTTestSupport", dependencies: ["CHuddleShims", "HuddleCrypto"], path: "Tests/JWTTestSupport"),
        .testTarget(name: "HuddleRedisTests", dependencies: ["HuddleRedis", "HuddleIO", "CHiredis", "ChildProcessExit", "RedisTestSupport"]),
        // The server's state machines in process, without sockets (reply order, reply audit).
        .testTarget(
            name: "HuddleServerUnitTests",
            dependencies: [
                "HuddleServer", "HuddleCore", "HuddleProtocol", "HuddleIO", "HuddleRedis", "HuddleStore", "ChildProcessExit",
                "RedisTestSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        // Test support shared by the test targets that start processes.
        .target(name: "ChildProcessExit", path: "Tests/ChildProcessExit"),
        // Real redis-server, replica and Sentinel processes for the Redis and cluster tests.
        .target(name: "RedisTestSupport", dependencies: ["HuddleRedis", "HuddleIO", "CHiredis", "ChildProcessExit"], path: "Tests/RedisTestSupport"),
        .testTarget(name: "LoadTestTests", dependencies: ["huddle-loadtest", "ChildProcessExit"]),
        .testTarget(name: "HuddleChatTests", dependencies: ["huddle-chat", "HuddleClient", "HuddleProtocol"]),
        .testTarget(
            name: "HuddleServerTests",
            dependencies: [
                "HuddleWebSocket", "HuddleIO", "HuddleCrypto", "HuddleProtocol", "HuddleClient", "ChildProcessExit", "CHuddleShims",
                "RedisTestSupport", "JWTTestSupport",
            ],
            exclude: ["Python", "Data"]
        ),
    ]
)
