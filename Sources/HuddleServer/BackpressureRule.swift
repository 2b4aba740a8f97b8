/// protocol.md "Backpressure": a reader is judged by whether it drains, not by how much one
/// burst queued. The memory ceiling (`--max-outbound-bytes`) and the age limit
/// (`--slow-reader-timeout`) close a reader; this is when a reader holds its publishers back.
struct BackpressureRule {
    /// A queue over this is behind: publishers to the reader wait (`busy`, or a `/broadcast`
    /// publisher's socket is not read). 1 MiB is a few seconds of a phone's link and more than
    /// one turn of fan-out to a reader that keeps up; half the ceiling when that is smaller,
    /// so a reader is held back before it is closed.
    let behindBytes: Int
    /// Behind until the queue is back under this: half the threshold, so a reader at the edge
    /// does not flip at every message.
    let caughtUpBytes: Int
    /// A reader whose socket took nothing for this long stops holding publishers: one reader
    /// that stops reading cannot stall a channel for everyone; its queue grows until the
    /// ceiling or the age limit closes it.
    let stallMilliseconds: Int64 = 2_000

    init(maxOutboundBytes: Int) {
        behindBytes = min(1 << 20, maxOutboundBytes / 2)
        caughtUpBytes = behindBytes / 2
    }
}

/// Why a slow consumer was closed (the `reason` label of its metric).
enum SlowConsumerCause {
    /// The queue passed `--max-outbound-bytes`.
    case queueLimit
    /// Bytes stayed queued past `--slow-reader-timeout`.
    case queueAge
}
