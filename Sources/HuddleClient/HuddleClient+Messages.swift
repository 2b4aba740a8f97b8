import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// What comes from the server — replies and events, read by the wire model — and the
/// deadlines the loop context's sweep checks.
extension HuddleClient {
    // MARK: Messages

    func received(_ event: WebSocketEvent, on connection: WebSocketClientConnection) {
        guard connection === self.connection else { return }
        lastHeard = MonotonicClock.milliseconds()
        pingOutstanding = false
        guard case .text(let bytes) = event, let message = try? JSONParser.parse(bytes, maxDepth: 64) else { return }
        if let reply = try? ServerReply(json: message), let id = reply.id {
            self.reply(id: id, reply.outcome)
        } else if let name = ServerEvent.name(of: message) {
            handleEvent(name, message)
        }
    }

    private func reply(id: String, _ outcome: ServerReply.Outcome) {
        // Replies come in request order, so this is nearly always the first.
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return }
        let request = inFlight.remove(at: index)
        switch outcome {
        case .success(let result):
            request.complete(.success(result))
        case .failure(let error):
            request.complete(.failure(.server(code: error.code, message: error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)))
        }
    }

    /// An event this version reads is delivered typed; a malformed one is dropped, except a
    /// feed or memory event, which goes to the application as it came (`.other`), like an
    /// event this version does not know.
    private func handleEvent(_ name: String, _ message: JSONValue) {
        let event: ServerEvent?
        do throws(WireFormatError) {
            event = try ServerEvent(json: message)
        } catch {
            if ServerEvent.isFeedOrMemory(name) { emit(.other(name: name, message: message)) }
            return
        }
        switch event {
        case .publication(let publication):
            switch ledger.offer(channel: publication.channel, epoch: publication.epoch, offset: publication.offset, replayed: false) {
            case .deliver: emit(.publication(publication))
            case .gap: resync(publication.channel)
            case .duplicate, .untracked: break
            }
        case .publicationRemoved(let channel, let epoch, let offset, let time):
            emit(.publicationRemoved(channel: channel, epoch: epoch, offset: offset, time: time))
        case .presence(let user, let online, let time):
            emit(.presence(user: user, online: online, time: time))
        case .typing(let channel, let user, let time):
            emit(.typing(channel: channel, user: user, time: time))
        case .session(let user, _, _):
            guard state == .signingIn else { return }
            self.user = user
            becomeReady()
        case .authFailed(let code, let message, _):
            refusal = (code, message)
        case .memoryChanged(let change, let time):
            emit(.memory(change, time: time))
        case .feed(let change):
            emit(.feed(change))
        case .profile(let user, let profile, let time):
            emit(.profile(user: user, profile, time: time))
        case nil:
            emit(.other(name: name, message: message))
        }
    }

    func emit(_ event: HuddleEvent) {
        onEvent?(event)
    }

    // MARK: Deadlines (called by the loop context's sweep)

    func sweep(now: Int64) {
        expireRequests(now: now)
        switch state {
        case .waiting:
            if now >= retryAt { openConnection() }
        case .signingIn:
            if now >= signInDeadline {
                drop("not signed in within \(configuration.requestTimeoutMilliseconds) ms")
            } else {
                checkHeartbeat(now: now)
            }
        case .ready:
            checkHeartbeat(now: now)
            if !resumesDue.isEmpty { resendDueResumes(now: now) }
        case .idle, .connecting, .stopped:
            break
        }
    }

    /// The loop context's sweep found the loop itself held up for `milliseconds`: every
    /// deadline, the heartbeat's silence and the reconnect delay move on by that much.
    func postponeDeadlines(by milliseconds: Int64) {
        for index in queued.indices where queued[index].deadline != .max { queued[index].deadline += milliseconds }
        for index in inFlight.indices where inFlight[index].deadline != .max { inFlight[index].deadline += milliseconds }
        for index in resumesDue.indices { resumesDue[index].at += milliseconds }
        retryAt += milliseconds
        signInDeadline += milliseconds
        lastHeard += milliseconds
    }

    private func expireRequests(now: Int64) {
        guard queued.contains(where: { $0.deadline <= now }) || inFlight.contains(where: { $0.deadline <= now }) else { return }
        let expired = queued.filter { $0.deadline <= now } + inFlight.filter { $0.deadline <= now }
        queued.removeAll { $0.deadline <= now }
        // A late reply to one of these finds no request and is ignored.
        inFlight.removeAll { $0.deadline <= now }
        for request in expired { request.complete(.failure(.timedOut)) }
    }

    private func checkHeartbeat(now: Int64) {
        let silence = now - lastHeard
        if silence >= configuration.heartbeat.deadAfterMilliseconds {
            drop("no frame from the server for \(silence) ms")
        } else if silence >= configuration.heartbeat.pingAfterMilliseconds && !pingOutstanding {
            pingOutstanding = connection?.ping() ?? false
        }
    }

    private func resendDueResumes(now: Int64) {
        let due = resumesDue.filter { $0.at <= now }
        resumesDue.removeAll { $0.at <= now }
        for (channel, _) in due where ledger.isTracked(channel) { resume(channel) }
    }
}

/// Forwards one connection's delegate calls to its client without keeping the client alive:
/// a connection holds its delegate until it closes, and the client holds the connection.
final class ConnectionEvents: ClientConnectionDelegate {
    weak var client: HuddleClient?

    init(_ client: HuddleClient) { self.client = client }

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        client?.connectionOpened(connection)
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        client?.received(event, on: connection)
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        client?.connectionClosed(connection, code: code, reason: reason)
    }
}
