import HuddleWebSocket

extension Connection {
    /// Where a connection is in its life, each phase with the state only it has.
    enum Phase {
        /// TLS handshake in progress (wss port only).
        case tlsHandshake
        /// Waiting for the HTTP request head. Boxed: the parser is large, and the phase is read
        /// on every message (`isOpen`, `session`), so it must stay a few words to copy.
        indirect case httpHead(HTTPHeadParser)
        /// Reading a request body (HTTP API, photo), then waiting for its response (or, for the
        /// export archive, sending it).
        case httpBody(HTTPRequestBody)
        /// WebSocket open: messages flow both ways.
        case open(WebSocketSession)
        /// Our close frame or final HTTP response is queued; no more messages are sent and
        /// incoming data messages are dropped. Waits for the peer's close frame (if we started
        /// the close) and for the queue to drain.
        case closing(Closing)
        /// Our side is shut (FIN sent); input is discarded until the peer's EOF or the deadline.
        case draining
        case closed
    }

    struct Closing {
        /// Reads the peer's close frame; nil after an HTTP response (input is ignored).
        var session: WebSocketSession?
        /// Once the queue is flushed, shut our side (close handshake done, failure, or HTTP reply).
        var shutdownAfterFlush: Bool
        /// A long write whose deadline is counted again from each write that makes progress.
        var extendedByProgress: WriteDeadline?
    }

    /// Closes whose last bytes may take long to leave: only a reader that stops reading is dropped.
    enum WriteDeadline {
        /// Up to `--max-photo-size` bytes to a phone take longer than the closing deadline,
        /// and the kernel reports a large send buffer writable again only once a third of it
        /// has drained — seconds apart on a slow link. So the deadline is the idle timeout.
        case photoResponse
        /// Closed as a slow consumer: the close frame waits behind what the kernel already
        /// holds (megabytes on a fast link), so the deadline is the slow-reader timeout — a
        /// reader that reads again gets the 1008 and its reason, one that stopped is dropped.
        /// Only the frame in flight and the close frame are left queued: memory is small.
        case slowConsumer
    }

    /// A request whose body is being read, or whose response is being made.
    enum HTTPRequestBody {
        case api(PendingHTTPRequest)
        /// A photo upload or download (`PhotoAPI`), from its head to its response.
        case photo(PhotoTransfer)
        /// The export archive (`ExportAPI`), from its head to its last byte.
        case export(ExportTransfer)
    }

    var isOpen: Bool {
        if case .open = phase { true } else { false }
    }

    var isClosed: Bool {
        if case .closed = phase { true } else { false }
    }

    /// The WebSocket session while open or closing.
    var session: WebSocketSession? {
        switch phase {
        case .open(let session): session
        case .closing(let closing): closing.session
        default: nil
        }
    }
}
