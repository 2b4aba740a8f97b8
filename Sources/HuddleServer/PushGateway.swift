import HuddleCore
import HuddleIO
import HuddleProtocol
import Logging

/// The push hand-off (protocol.md, "Notifications and push"): notifications for users with no
/// live connection, POSTed as JSON to `--push-webhook` from a thread of its own, where APNs or
/// FCM sit behind the receiver.
///
/// The core hands each notification over with `submit` — a task on this loop, so the core and
/// the I/O loops never wait for the network. Here it is encoded once (the request bytes every
/// attempt sends), queued (`PushQueue`: bounded, the oldest dropped when full), and sent by at
/// most `concurrency` requests at a time. A failed attempt (no connection, timeout, 408, 429,
/// 5xx) is retried after an exponential backoff with jitter, up to `maxAttempts` attempts;
/// any other non-2xx status drops it at once, since sending it again would be refused again.
///
/// Nothing here is durable: the inbox and the chat rooms' unread counts are the durable record
/// of what a user was owed, and a restart loses only the hand-offs still waiting after a short
/// drain (`stop`).
// Sendable: the core calls only `submit` (a task on its loop); the rest runs on the gateway's thread.
final class PushGateway: @unchecked Sendable {
    private let settings: PushSettings
    private let webhook: WebhookURL
    private let tlsContext: TLSClientContext?
    private let signingKey: [UInt8]?
    private let metrics: PushMetrics
    private let logger: Logger
    private let loop: EventLoop
    private var thread: LoopThread?

    // Gateway-thread state.
    private var queue: PushQueue
    private var inFlight: [ObjectIdentifier: WebhookRequest] = [:]
    private var retryTimer: (id: Int, due: Int64)?
    private var queueFullLog = LogThrottle()
    private var givenUpLog = LogThrottle()
    private var stopping = false
    /// What the log lines call it: "push", or "report" for the report webhook.
    private let purpose: String

    init(webhook: WebhookURL, settings: PushSettings, metrics: PushMetrics, logger: Logger, purpose: String = "push") throws {
        self.purpose = purpose
        self.webhook = webhook
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        tlsContext = webhook.isSecure ? try TLSClientContext(caFile: settings.caFile) : nil
        signingKey = settings.secret.map { Array($0.utf8) }
        queue = PushQueue(capacity: settings.queueCapacity)
        // Not an I/O loop: its index only names it.
        loop = try EventLoop(index: -1, readBufferSize: 16 * 1024)
    }

    func start() throws {
        thread = try LoopThread.spawn(name: "huddle-\(purpose)") { [loop] in loop.run() }
        logger.notice("\(purpose) gateway enabled", metadata: ["webhook": "\(webhook.logged)", "signed": "\(signingKey != nil)"])
    }

    /// After the core's last turn (nothing new arrives): sends what is waiting or being sent
    /// until `deadline` (monotonic ms, the exit budget's end) — a restart should not swallow the
    /// notifications of its last moments — then gives up the rest, with a log line saying how
    /// much. `join` waits for that.
    func beginStopping(deadline: Int64) {
        let drainMilliseconds = max(0, deadline - MonotonicClock.milliseconds())
        loop.execute { [self] in
            stopping = true
            stopIfDrained()
            loop.schedule(after: drainMilliseconds) { [unowned self] in
                let abandoned = queue.removeAll() + inFlight.count
                for request in inFlight.values { request.cancel() }
                inFlight.removeAll()
                metrics.queueDepth.store(0, ordering: .relaxed)
                if abandoned > 0 {
                    logger.warning("push notifications not handed off before shutdown", metadata: ["count": "\(abandoned)"])
                }
                loop.stop()
            }
        }
    }

    func join() {
        thread?.join()
    }

    private func stopIfDrained() {
        if stopping, queue.count == 0, inFlight.isEmpty { loop.stop() }
    }

    /// Queues a notification; callable from any thread (the core's).
    func submit(_ notification: PushNotification) {
        loop.execute { [self] in accept(notification) }
    }

    /// Queues a report for the report webhook (`--report-webhook`); callable from any thread.
    /// The same hand-off as a notification: queued, retried, never waited for.
    func submit(report: ModerationReport) {
        loop.execute { [self] in
            let delivery = PushDelivery(
                id: "report-\(report.id)", user: report.reporter, kind: "report", request: webhook.post(JSONWriter.bytes(report.json), signingKey: signingKey))
            if let dropped = queue.append(delivery) { droppedForRoom(dropped) }
            pump()
        }
    }

    // MARK: Gateway thread

    private func accept(_ notification: PushNotification) {
        loop.assertInLoop()
        let body: String
        switch notification.body {
        case .text(let text): body = text
        case .messageData(let data): body = PushPayload.body(ofMessageData: data)
        }
        let payload = PushPayload.json(
            id: notification.id, user: notification.user, kind: notification.kind.rawValue, title: notification.title, body: body,
            badge: notification.badge, target: notification.target, from: notification.from, time: notification.time)
        let delivery = PushDelivery(id: notification.id, user: notification.user, kind: notification.kind.rawValue, request: webhook.post(payload, signingKey: signingKey))
        if let dropped = queue.append(delivery) { droppedForRoom(dropped) }
        pump()
    }

    /// Starts as many due notifications as free request slots allow, then arms the retry timer.
    private func pump() {
        loop.assertInLoop()
        let now = MonotonicClock.milliseconds()
        while inFlight.count < settings.concurrency, let entry = queue.next(now: now) {
            send(entry)
        }
        metrics.queueDepth.store(queue.count, ordering: .relaxed)
        armRetryTimer(now: now)
    }

    private func send(_ entry: PushQueue.Entry) {
        var entry = entry
        entry.attempts += 1
        let request = WebhookRequest(
            url: webhook, tlsContext: tlsContext, request: entry.delivery.request, loop: loop,
            timeoutMilliseconds: settings.requestTimeoutMilliseconds
        ) { [unowned self] request, outcome in
            inFlight[ObjectIdentifier(request)] = nil
            metrics.inFlight.store(inFlight.count, ordering: .relaxed)
            finished(entry, outcome)
        }
        inFlight[ObjectIdentifier(request)] = request
        metrics.inFlight.store(inFlight.count, ordering: .relaxed)
        request.start()
    }

    private func finished(_ entry: PushQueue.Entry, _ outcome: WebhookRequest.Outcome) {
        loop.assertInLoop()
        let metadata: Logger.Metadata = ["id": "\(entry.delivery.id)", "user": "\(entry.delivery.user)", "kind": "\(entry.delivery.kind)"]
        switch outcome {
        case .accepted(let status):
            metrics.sent.add(1, ordering: .relaxed)
            logger.debug("push handed off", metadata: metadata.merging(["status": "\(status)", "attempt": "\(entry.attempts)"]) { $1 })
        case .rejected(let status):
            metrics.failed.add(1, ordering: .relaxed)
            metrics.countDrop(.rejected)
            giveUp("push refused by the webhook; dropped", metadata.merging(["status": "\(status)"]) { $1 })
        case .failed(let reason):
            metrics.failed.add(1, ordering: .relaxed)
            if entry.attempts >= settings.maxAttempts {
                metrics.countDrop(.retriesExhausted)
                giveUp("push failed on every attempt; dropped", metadata.merging(["attempts": "\(entry.attempts)", "reason": "\(reason)"]) { $1 })
            } else {
                let nominal = settings.backoffMilliseconds(afterAttempts: entry.attempts)
                let wait = Int64.random(in: (nominal / 2)...max(nominal, 1))
                logger.debug("push attempt failed; retrying", metadata: metadata.merging(["reason": "\(reason)", "attempt": "\(entry.attempts)", "retry_in_ms": "\(wait)"]) { $1 })
                if let dropped = queue.retry(entry, at: MonotonicClock.milliseconds() + wait) { droppedForRoom(dropped) }
            }
        }
        pump()
        stopIfDrained()
    }

    /// A warning for a notification given up, throttled (a dead webhook drops every one).
    private func giveUp(_ message: Logger.Message, _ metadata: Logger.Metadata) {
        guard let heldBack = givenUpLog.admit(now: MonotonicClock.milliseconds()) else { return }
        logger.warning(message, metadata: metadata.merging(["also_dropped_since_last_line": "\(heldBack)"]) { $1 })
    }

    private func droppedForRoom(_ entry: PushQueue.Entry) {
        metrics.countDrop(.queueFull)
        guard let heldBack = queueFullLog.admit(now: MonotonicClock.milliseconds()) else { return }
        logger.warning("push queue full; dropped the oldest notification", metadata: [
            "id": "\(entry.delivery.id)", "user": "\(entry.delivery.user)", "capacity": "\(queue.capacity)",
            "also_dropped_since_last_line": "\(heldBack)",
        ])
    }

    /// A timer for the earliest retry, only while a request slot is free: with every slot busy,
    /// the next completion pumps anyway (and a due timer would only spin).
    private func armRetryTimer(now: Int64) {
        guard inFlight.count < settings.concurrency, let due = queue.earliestRetry() else { return }
        if let timer = retryTimer {
            if timer.due <= due { return }
            loop.cancelTimer(timer.id)
        }
        let id = loop.schedule(after: max(due - now, 0)) { [unowned self] in
            retryTimer = nil
            pump()
        }
        retryTimer = (id, due)
    }
}
