// swift-tools-version:6.0
// Huddle: a real-time WebSocket pub/sub server on POSIX sockets, epoll, OpenSSL and zlib.
// Layers (README.md, "Layout"): CHuddleShims <- HuddleIO, HuddleWebSocket; HuddleProtocol (the
// wire model) stands alone, HuddleCore <- HuddleProtocol (a client's decoded op is the core's
// request body); HuddleServer wires them all; huddle (CLI) runs HuddleServer;
// HuddleClient <- huddle-chat and huddle-loadtest.
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
        // Event loops, sockets, timers, TLS. Knows nothing of WebSocket.
        .target(name: "HuddleIO", dependencies: ["CHuddleShims"]),
        // HTTP/1.1 upgrade, RFC 6455 framing, RFC 7692 permessage-deflate: pure state machines, no sockets.
        .target(name: "HuddleWebSocket", dependencies: ["CHuddleShims"]),
        // The JSON wire protocol (protocol.md): request decoding, reply and event encoding.
        .target(name: "HuddleProtocol"),
        // The product: one deterministic state machine; no I/O, no clock, no randomness.
        .target(name: "HuddleCore", dependencies: ["HuddleProtocol"]),
        // Durability: the write-ahead log and snapshots, as checksummed bytes on disk.
        .target(name: "HuddleStore", dependencies: ["CHuddleShims"], exclude: ["README.md"]),
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
                "HuddleIO", "HuddleWebSocket", "HuddleProtocol", "HuddleCore", "HuddleStore", "HuddleWebApp", "HuddleBuildInfo",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "huddle",
            dependencies: [
                "HuddleServer",
                "HuddleBuildInfo",
                "HuddleIO",
                "HuddleProtocol",
                "HuddleCore",
                "HuddleStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The load-test harness (loadtest/README.md): scenarios on HuddleClient, many
        // connections per loop thread, latency in HdrHistogram.
        .executableTarget(
            name: "huddle-loadtest",
            dependencies: [
                "HuddleClient", "HuddleIO", "HuddleProtocol", "HuddleWebSocket", "HuddleBuildInfo",
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
                "HuddleClient", "HuddleIO", "HuddleProtocol", "HuddleBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "HuddleWebSocketTests", dependencies: ["HuddleWebSocket"]),
        .testTarget(name: "HuddleProtocolTests", dependencies: ["HuddleProtocol"]),
        .testTarget(name: "HuddleCoreTests", dependencies: ["HuddleCore", "HuddleProtocol"]),
        .testTarget(name: "HuddleStoreTests", dependencies: ["HuddleStore"]),
        // The server's state machines in process, without sockets (reply order, reply audit).
        .testTarget(name: "HuddleServerUnitTests", dependencies: ["HuddleServer", "HuddleCore", "HuddleProtocol"]),
        // Test support shared by the test targets that start processes.
        .target(name: "ChildProcessExit", path: "Tests/ChildProcessExit"),
        .testTarget(name: "LoadTestTests", dependencies: ["huddle-loadtest", "ChildProcessExit"]),
        .testTarget(name: "HuddleChatTests", dependencies: ["huddle-chat", "HuddleClient", "HuddleProtocol"]),
        .testTarget(
            name: "HuddleServerTests",
            dependencies: ["HuddleWebSocket", "HuddleIO", "HuddleProtocol", "HuddleClient", "ChildProcessExit"],
            exclude: ["Python"]
        ),
    ]
)
