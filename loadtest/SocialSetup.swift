import HuddleClient
import HuddleIO
import HuddleProtocol

/// The set-up the social scenarios share: N users, one connection each, signed up on it, and a
/// given list of friendships made the way users make them (`friend_request`, then
/// `friend_accept` by the other side). Steps run a bounded number at a time; the first failure
/// ends the run (a closed session would never answer what set-up waits for).
final class SocialSetup {
    let users = LoadTestUsers()
    private(set) var sessions: [HarnessSession] = []
    private let urls: ServerURLs
    private let options: ClientConnectionOptions
    private let loop: EventLoop
    private let progress: Progress
    private let measurement: Measurement
    private let concurrency: Int
    private var queue: SetupQueue?
    /// Gets each user's events once its session exists (set before `run`).
    var onEvent: ((Int, ServerEvent) -> Void)?

    init(urls: ServerURLs, options: ClientConnectionOptions, loop: EventLoop, progress: Progress, measurement: Measurement, concurrency: Int = 100) {
        self.urls = urls
        self.options = options
        self.loop = loop
        self.progress = progress
        self.measurement = measurement
        self.concurrency = concurrency
    }

    /// Signs up `count` users and makes `friendships` (pairs of user indexes; the first asks).
    func run(count: Int, friendships: [(Int, Int)], then next: @escaping () -> Void) {
        progress.say("signing up \(count) users (\(users.prefix)_*), one connection each")
        stage(count: count, name: "sign-up", step: signUp) { [self] in
            progress.say("making \(friendships.count) friendships (friend_request, friend_accept)")
            stage(count: friendships.count, name: "friendship", step: { [self] index, done in
                let (asker, answerer) = friendships[index]
                sessions[asker].expectOK(.friendRequest(user: users.username(answerer), message: RequestDefaults.friendMessage)) { [self] refusal in
                    if let refusal { measurement.error(refusal); return done(false) }
                    sessions[answerer].expectOK(.friendAccept(user: users.username(asker))) { [self] refusal in
                        if let refusal { measurement.error(refusal) }
                        done(refusal == nil)
                    }
                }
            }, then: next)
        }
    }

    /// Runs `step` for 0..<count, a bounded number at a time; any failure ends the run.
    func stage(count: Int, name: String, step: @escaping (Int, @escaping (Bool) -> Void) -> Void, then next: @escaping () -> Void) {
        let queue = SetupQueue(count: count, concurrency: concurrency, step: step) { [self] failed in
            if failed > 0 { return measurement.abort("\(name): \(failed) of \(count) failed") }
            next()
        }
        self.queue = queue
        measurement.track(queue, name)
        queue.run()
    }

    private func signUp(_ user: Int, done: @escaping (Bool) -> Void) {
        let session = HarnessSession(url: urls[node: user], loop: loop, options: options)
        sessions.append(session)
        session.onOpen = { [self] in
            measurement.connections += 1
            users.signUp(users.username(user), on: session) { [self] outcome in
                if case .failure(let failure) = outcome { measurement.error(failure.description) }
                done((try? outcome.get()) != nil)
            }
        }
        session.onEvent = { [self] event in onEvent?(user, event) }
        session.onClose = { [self] code, reason in
            if code != nil { measurement.connections -= 1 }
            let problem = "user \(user) closed: \(code.map { "\($0.rawValue)" } ?? "never opened") \(reason)"
            switch measurement.phase {
            case .setup: measurement.abort(problem)
            case .done: break
            default: measurement.error(problem)
            }
            done(false)
        }
        session.connect()
    }

    func closeAll() {
        for session in sessions { session.close() }
    }

    /// Friendships of a ring: each user with the next `count` users (mod N), so every user has
    /// 2 × `count` friends and nobody is left out. Needs 2 × `count` < N (no pair twice).
    static func ring(users: Int, neighbours count: Int) -> [(Int, Int)] {
        precondition(2 * count < users)
        return (0..<users).flatMap { user in (1...count).map { step in (user, (user + step) % users) } }
    }
}
