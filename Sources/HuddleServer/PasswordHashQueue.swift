import HuddleIO
import Synchronization

/// PBKDF2 jobs on the KDF threads, in two lanes: a free thread always takes a waiting login
/// before a waiting signup, so signups (which anyone can send) never make a returning user
/// wait behind them. How many may wait is the core's bound (`PasswordHashAdmission`); this
/// only orders them.
///
/// Each job queued posts one "take the next job" task to a worker (round-robin): as many
/// takes as jobs, so every job runs once, and each take picks the best job waiting when the
/// thread gets to it, not the one that was queued with it.
final class PasswordHashQueue: Sendable {
    enum Lane: Int, CaseIterable, Sendable {
        case login, signUp

        var label: String { self == .login ? "login" : "signup" }
    }

    private let workers: WorkerThreads
    private let lanes = Mutex<[[@Sendable () -> Void]]>(Lane.allCases.map { _ in [] })
    private let metrics: PasswordHashMetrics

    init(threads: Int, metrics: PasswordHashMetrics) throws {
        workers = try WorkerThreads(name: "huddle-kdf", count: threads)
        self.metrics = metrics
    }

    func run(_ lane: Lane, _ job: @escaping @Sendable () -> Void) {
        lanes.withLock { $0[lane.rawValue].append(job) }
        metrics[lane].waiting.add(1, ordering: .relaxed)
        workers.run { [self] in
            guard let (lane, next) = takeNext() else { return }
            metrics[lane].waiting.subtract(1, ordering: .relaxed)
            // Counted as it starts: the job's last act is to hand its result on, and a client
            // that got the reply must find the hash counted.
            metrics[lane].performed.add(1, ordering: .relaxed)
            next()
        }
    }

    private func takeNext() -> (Lane, @Sendable () -> Void)? {
        lanes.withLock { lanes in
            for lane in Lane.allCases where !lanes[lane.rawValue].isEmpty {
                return (lane, lanes[lane.rawValue].removeFirst())
            }
            return nil
        }
    }

    func stop() { workers.stop() }
}

/// The KDF's counters for `GET /metrics`, by lane.
final class PasswordHashMetrics: Sendable {
    final class Lane: Sendable {
        /// Hashes run (a login's, known account or not, or a signup's).
        let performed = Atomic<Int>(0)
        /// Hashes queued and not yet started.
        let waiting = Atomic<Int>(0)
    }

    private let lanes = PasswordHashQueue.Lane.allCases.map { _ in Lane() }

    init() {}

    subscript(lane: PasswordHashQueue.Lane) -> Lane { lanes[lane.rawValue] }

    func prometheusText() -> String {
        var text = "# HELP huddle_password_hashes_total Password hashes run (PBKDF2), by kind; an unknown login is hashed too.\n"
        text += "# TYPE huddle_password_hashes_total counter\n"
        for lane in PasswordHashQueue.Lane.allCases {
            text += "huddle_password_hashes_total{kind=\"\(lane.label)\"} \(self[lane].performed.load(ordering: .relaxed))\n"
        }
        text += "# HELP huddle_password_hashes_waiting Password hashes queued for a KDF thread, by kind (logins go first).\n"
        text += "# TYPE huddle_password_hashes_waiting gauge\n"
        for lane in PasswordHashQueue.Lane.allCases {
            text += "huddle_password_hashes_waiting{kind=\"\(lane.label)\"} \(self[lane].waiting.load(ordering: .relaxed))\n"
        }
        return text
    }
}
