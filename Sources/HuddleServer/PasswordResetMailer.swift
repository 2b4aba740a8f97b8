import HuddleIO
import HuddleProtocol
import Logging

/// The reset-code hand-off (protocol.md, "Password reset"): each code the core issues is
/// POSTed as `{"username", "email", "code", "expires_at"}` to `--password-reset-webhook`, where
/// the operator's mail sender sits, from a thread of its own (the core never waits for it).
///
/// The code is in the request body and nowhere else: no log line, metric or error names it (nor
/// the address). A failed attempt is retried a few times with a backoff; what cannot be handed
/// off within them is dropped — the user asks again. Waiting mails are bounded; a restart loses
/// those still waiting, and the codes stay valid until they expire.
// Sendable: the core calls only `submit` (a task on its loop); the rest runs on the mailer's thread.
final class PasswordResetMailer: @unchecked Sendable {
    struct Mail {
        var username: String
        var request: [UInt8]
        var attempts = 0
    }

    static let capacity = 1000
    static let maxAttempts = 4
    static let timeoutMilliseconds: Int64 = 10_000

    private let webhook: WebhookURL
    private let tlsContext: TLSClientContext?
    private let signingKey: [UInt8]?
    private let metrics: PasswordResetMetrics
    private let logger: Logger
    private let loop: EventLoop
    private var thread: LoopThread?

    /// Requests to the webhook at once; the others wait in `ready`.
    static let concurrency = 8

    // Mailer-thread state.
    /// Mails to send now, oldest first.
    private var ready: [Mail] = []
    /// Mails waiting out a retry's backoff.
    private var backingOff = 0
    private var inFlight: [ObjectIdentifier: WebhookRequest] = [:]
    private var droppedLog = LogThrottle()

    init(webhook: WebhookURL, secret: String?, caFile: String?, metrics: PasswordResetMetrics, logger: Logger) throws {
        self.webhook = webhook
        self.metrics = metrics
        self.logger = logger
        tlsContext = webhook.isSecure ? try TLSClientContext(caFile: caFile) : nil
        signingKey = secret.map { Array($0.utf8) }
        // Not an I/O loop: its index only names it.
        loop = try EventLoop(index: -1, readBufferSize: 16 * 1024)
    }

    func start() throws {
        thread = try LoopThread.spawn(name: "huddle-mail") { [loop] in loop.run() }
        logger.notice("password reset mail enabled", metadata: ["webhook": "\(webhook.logged)", "signed": "\(signingKey != nil)"])
    }

    /// After the core's last turn: mails still waiting are given up (their codes stay valid).
    func stop() {
        loop.execute { [self] in
            for request in inFlight.values { request.cancel() }
            let abandoned = ready.count + backingOff + inFlight.count
            if abandoned > 0 {
                logger.warning("password reset mails not handed off before shutdown", metadata: ["count": "\(abandoned)"])
            }
            ready.removeAll()
            inFlight.removeAll()
            loop.stop()
        }
        thread?.join()
    }

    /// Queues a mail; callable from any thread (the core's).
    func submit(username: String, email: String, code: String, expiresAt: Int64) {
        let body = JSONWriter.bytes(.object([
            ("username", .string(username)), ("email", .string(email)), ("code", .string(code)), ("expires_at", .integer(expiresAt)),
        ]))
        let mail = Mail(username: username, request: webhook.post(body, signingKey: signingKey))
        loop.execute { [self] in
            guard ready.count + backingOff + inFlight.count < Self.capacity else { return drop(mail, because: "the mail queue is full") }
            ready.append(mail)
            pump()
        }
    }

    /// Starts the oldest ready mails while request slots are free.
    private func pump() {
        loop.assertInLoop()
        while inFlight.count < Self.concurrency, !ready.isEmpty { send(ready.removeFirst()) }
    }

    private func send(_ mail: Mail) {
        var mail = mail
        mail.attempts += 1
        let request = WebhookRequest(
            url: webhook, tlsContext: tlsContext, request: mail.request, loop: loop, timeoutMilliseconds: Self.timeoutMilliseconds
        ) { [unowned self] request, outcome in
            inFlight[ObjectIdentifier(request)] = nil
            finished(mail, outcome)
        }
        inFlight[ObjectIdentifier(request)] = request
        request.start()
    }

    private func finished(_ mail: Mail, _ outcome: WebhookRequest.Outcome) {
        switch outcome {
        case .accepted:
            metrics.sent.add(1, ordering: .relaxed)
            logger.debug("password reset mail handed off", metadata: ["user": "\(mail.username)"])
        case .rejected(let status):
            metrics.failedAttempts.add(1, ordering: .relaxed)
            drop(mail, because: "the mail webhook refused it (status \(status))")
        case .failed(let reason):
            metrics.failedAttempts.add(1, ordering: .relaxed)
            if mail.attempts < Self.maxAttempts {
                backingOff += 1
                loop.schedule(after: 500 << Int64(mail.attempts)) { [unowned self] in
                    backingOff -= 1
                    ready.append(mail)
                    pump()
                }
            } else {
                drop(mail, because: "every attempt failed: \(reason)")
            }
        }
        pump()
    }

    /// A warning naming the user (never the code or the address), throttled.
    private func drop(_ mail: Mail, because reason: String) {
        metrics.dropped.add(1, ordering: .relaxed)
        guard let heldBack = droppedLog.admit(now: MonotonicClock.milliseconds()) else { return }
        logger.warning("password reset mail dropped", metadata: [
            "user": "\(mail.username)", "reason": "\(reason)", "also_dropped_since_last_line": "\(heldBack)",
        ])
    }
}
