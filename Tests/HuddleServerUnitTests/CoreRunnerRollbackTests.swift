import Glibc
import HuddleCore
import HuddleIO
import HuddleProtocol
@testable import HuddleServer
import Logging
import Testing

/// A turn the log refuses is taken back (`CoreRunner.routeUnlogged`), driven in process: the
/// runner's thread and I/O loops never start, the test plays the core thread and reads what
/// the turn left for the loops.
@Suite struct CoreRunnerRollbackTests {
    struct DiskRefuses: Error {}

    static let reader = ConnectionRef(loop: 0, serial: 1)
    static let writer = ConnectionRef(loop: 0, serial: 2)
    static let writersOtherDevice = ConnectionRef(loop: 0, serial: 3)
    static let newcomer = ConnectionRef(loop: 0, serial: 4)

    @Test func aRefusedTurnAnswersUnavailableDropsItsEventsStillClosesAndEndsNewSignIns() throws {
        var template = Array("/tmp/huddle-rollback-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { _ = system("rm -rf '\(directory)'") }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory
        let logger = Logger(label: "rollback-test")
        let (persistence, core) = try Persistence.open(configuration: configuration, logger: logger)
        let photoUploads = PhotoUploads(maxUploads: configuration.maxUploads, maxUploadsPerUser: configuration.maxUploadsPerUser)
        let runner = try CoreRunner(
            configuration: configuration, core: core, persistence: persistence, ioLoops: [try EventLoop(index: 0)],
            metrics: ServerMetrics(loopCount: 1, photoUploads: photoUploads), logger: logger)
        defer {
            runner.passwordHashes.stop()
            persistence.close()
        }

        // Logged: the reader and the writer (on two devices) signed in, the reader subscribed.
        for (ref, user, id) in [(Self.reader, "reader", "1"), (Self.writer, "writer", "2")] {
            runner.process(CoreRequest(connection: ref, .connectionOpened(address: "192.0.2.1")), op: nil, submitted: 0)
            Self.signUp(ref, user, id, on: runner)
        }
        // The writer's other device signs in with the same session's token (a header token).
        runner.process(CoreRequest(connection: Self.writersOtherDevice, .connectionOpened(address: "192.0.2.1")), op: nil, submitted: 0)
        runner.process(CoreRequest(connection: Self.writersOtherDevice, .authenticate(tokenHash: Self.tokenHash(of: Self.writer))), op: nil, submitted: 0)
        runner.process(CoreRequest(ClientRequest(id: "4", operation: .subscribe(channel: "room:a", since: nil)), on: Self.reader), op: nil, submitted: 0)
        runner.routeTurn()
        let signedIn = runner.outbox[0]
        #expect(Self.closes(in: signedIn).isEmpty)
        #expect(Self.texts(in: signedIn, to: Self.writersOtherDevice).contains { $0.contains(#""event":"session""#) })
        #expect(Self.texts(in: signedIn, to: Self.reader).contains { $0.contains(#""id":"4","ok":true"#) })
        runner.outbox[0] = []

        // Refused: a publish the reader would hear, a logout of all the writer's devices, a
        // newcomer's sign-up.
        runner.appendToLog = { _ in throw DiskRefuses() }
        runner.process(
            CoreRequest(ClientRequest(id: "5", operation: .publish(channel: "room:a", type: "message", data: #"{"text":"lost"}"#)), on: Self.writer),
            op: nil, submitted: 0)
        runner.process(CoreRequest(ClientRequest(id: "6", operation: .logout(all: true)), on: Self.writersOtherDevice), op: nil, submitted: 0)
        runner.process(CoreRequest(connection: Self.newcomer, .connectionOpened(address: "192.0.2.9")), op: nil, submitted: 0)
        Self.signUp(Self.newcomer, "newcomer", "7", on: runner)
        runner.routeTurn()
        let refused = runner.outbox[0]

        let unavailable = #""code":"unavailable""#
        #expect(Self.texts(in: refused, to: Self.writer).contains { $0.contains(#""id":"5""#) && $0.contains(unavailable) })
        #expect(Self.texts(in: refused, to: Self.writersOtherDevice).contains { $0.contains(#""id":"6""#) && $0.contains(unavailable) })
        // The publication was taken back: the reader hears nothing of it.
        #expect(Self.texts(in: refused, to: Self.reader).isEmpty)
        #expect(!refused.contains { if case .fanOut = $0 { true } else { false } })
        // The logout's closes happen (the core already forgot those connections); the
        // newcomer's session does not exist after the rollback: closed 1013.
        let closes = Self.closes(in: refused)
        #expect(closes[Self.writer] == 4001)
        #expect(closes[Self.writersOtherDevice] == 4001)
        #expect(closes[Self.newcomer] == 1013)
        #expect(closes[Self.reader] == nil)
        #expect(!Self.texts(in: refused, to: Self.newcomer).contains { $0.contains(#""ok":true"#) })
        // And the state is what the disk holds: no offset 1 in room:a.
        #expect((core.durableState.channels["room:a"]?.lastOffset ?? 0) == 0)
    }

    /// A sign-up, from its first request (which the reply audit counts) to the one the password
    /// workers send once the password is hashed.
    static func signUp(_ ref: ConnectionRef, _ user: String, _ id: String, on runner: CoreRunner) {
        let session = NewSession(tokenHash: tokenHash(of: ref), expiresAt: WallClock.milliseconds() + 86_400_000)
        let email = "\(user)@example.com"
        runner.replyAudit.expect(
            CoreRequest(connection: ref, requestID: id, .beginSignUp(username: user, email: email, password: "password123", address: "192.0.2.1")))
        runner.process(
            CoreRequest(
                connection: ref, requestID: id,
                .signUp(
                    username: user, email: email, passwordLength: 11, passwordEqualsUsername: false, address: "192.0.2.1",
                    credentials: Credentials(salt: [1], hash: [2], iterations: 1), session: session)),
            op: nil, submitted: 0)
    }

    static func tokenHash(of ref: ConnectionRef) -> [UInt8] { Array("token-\(ref.serial)".utf8) }

    static func texts(in deliveries: [LoopDelivery], to ref: ConnectionRef) -> [String] {
        deliveries.compactMap {
            guard case .send(let serial, let text, _) = $0, serial == ref.serial else { return nil }
            return String(decoding: text, as: UTF8.self)
        }
    }

    static func closes(in deliveries: [LoopDelivery]) -> [ConnectionRef: UInt16] {
        var codes: [ConnectionRef: UInt16] = [:]
        for case .close(let serial, let code, _) in deliveries { codes[ConnectionRef(loop: 0, serial: serial)] = code }
        return codes
    }
}
