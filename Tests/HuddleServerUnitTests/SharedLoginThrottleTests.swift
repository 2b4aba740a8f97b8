import Glibc
import HuddleCore
import HuddleIO
@testable import HuddleServer
import Logging
import Synchronization
import Testing

/// Cluster mode's login limit shared by the nodes, as the runner asks it: before a login's
/// password is hashed, keyed as the core keys its own throttle, a refusal answered as the
/// core's throttle answers and an unreachable Redis as `unavailable`, neither counted as a
/// failed password. Driven in process: the test plays the core thread.
@Suite struct SharedLoginThrottleTests {
    /// Records what it is asked and answers from a script, at once.
    final class ScriptedThrottle: Sendable {
        let asked = Mutex<[String]>([])
        let answers = Mutex<[SharedLoginThrottle.Admission]>([])

        var throttle: SharedLoginThrottle {
            SharedLoginThrottle(
                admit: { [self] account, address, answer in
                    asked.withLock { $0.append("\(account) \(address)") }
                    answer(answers.withLock { $0.removeFirst() })
                },
                succeeded: { _, _ in })
        }
    }

    @Test func refusedAndUnreachableLoginsAreAnsweredWithoutHashingOrCountingAFailure() throws {
        var template = Array("/tmp/huddle-shared-login-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { _ = system("rm -rf '\(directory)'") }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory
        let logger = Logger(label: "shared-login-test")
        let (persistence, core) = try Persistence.open(configuration: configuration, logger: logger)
        let photoUploads = PhotoUploads(maxUploads: configuration.maxUploads, maxUploadsPerUser: configuration.maxUploadsPerUser)
        let metrics = ServerMetrics(loopCount: 1, photoUploads: photoUploads)
        let runner = try CoreRunner(
            configuration: configuration, core: core, persistence: persistence, ioLoops: [try EventLoop(index: 0)], metrics: metrics, logger: logger)
        defer {
            runner.passwordHashes.stop()
            persistence.close()
        }
        runner.attach([ProtocolEndpoint(loopIndex: 0, runner: runner, configuration: configuration, metrics: metrics)])
        let scripted = ScriptedThrottle()
        runner.sharedLoginThrottle = scripted.throttle

        let alice = ConnectionRef(loop: 0, serial: 1)
        runner.process(CoreRequest(connection: alice, .connectionOpened(address: "192.0.2.1")), op: nil, submitted: 0)
        CoreRunnerRollbackTests.signUp(alice, "alice", "1", on: runner)
        runner.routeTurn()

        // Six attempts, more than the core's own limit of 5 failures per pair: each refused by
        // the shared limit, none hashed, none counted as a failure here.
        let stranger = ConnectionRef(loop: 0, serial: 2)
        runner.process(CoreRequest(connection: stranger, .connectionOpened(address: "198.51.100.7")), op: nil, submitted: 0)
        for attempt in 0..<6 {
            scripted.answers.withLock { $0.append(attempt.isMultiple(of: 2) ? .refused(retryAfterMilliseconds: 1_234) : .unavailable) }
            let login = attempt < 3 ? "ALICE" : "Nobody"
            runner.process(
                CoreRequest(connection: stranger, requestID: "L\(attempt)", .beginLogin(login: login, address: "198.51.100.7", password: "guess")),
                op: "login", submitted: 0)
            runner.routeTurn()  // routes verifyPassword: the shared limit is asked, its refusal submitted
            Self.runOneTurn(of: runner)  // the refusal reaches the core and is answered
        }
        // Keyed as the core keys its throttle: the account's name, an unknown login's spelling.
        #expect(scripted.asked.withLock { $0 } == ["alice 198.51.100.7", "alice 198.51.100.7", "alice 198.51.100.7", "nobody 198.51.100.7", "nobody 198.51.100.7", "nobody 198.51.100.7"])
        let text = metrics.prometheusText()
        #expect(text.contains(#"huddle_errors_total{code="too_many_attempts"} 3"#))
        #expect(text.contains(#"huddle_errors_total{code="unavailable"} 3"#))
        #expect(!text.contains(#"huddle_errors_total{code="invalid_credentials"}"#), "no password was checked")
        let loginHashes = metrics.passwordHashes[.login]
        #expect(loginHashes.performed.load(ordering: .relaxed) + loginHashes.waiting.load(ordering: .relaxed) == 0)

        // Admitted: the password is checked, and the core's own limit (5 failures per pair) was
        // not spent by the refusals.
        scripted.answers.withLock { $0.append(.allowed) }
        runner.process(
            CoreRequest(connection: stranger, requestID: "L6", .beginLogin(login: "alice", address: "198.51.100.7", password: "guess")),
            op: "login", submitted: 0)
        runner.routeTurn()
        let deadline = MonotonicClock.milliseconds() + 20_000
        while !metrics.prometheusText().contains(#"huddle_errors_total{code="invalid_credentials"} 1"#) {
            try #require(MonotonicClock.milliseconds() < deadline, "the admitted login was never answered")
            Self.runOneTurn(of: runner)  // until the password worker's answer has been handled
        }
        #expect(scripted.asked.withLock { $0.count } == 7)
    }

    /// Runs the core loop for one turn on this thread: the tasks submitted meanwhile, then the
    /// turn's end (which routes them).
    static func runOneTurn(of runner: CoreRunner) {
        runner.loop.stop()
        runner.loop.run()
    }
}
