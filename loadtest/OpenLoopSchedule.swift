/// When each message of S streams sending R messages/s each is due, fixed in advance: the
/// open loop that keeps a slow server from hiding its latency (no coordinated omission). A
/// message is stamped with its *intended* time and sent as soon as the harness gets to it; if
/// anything falls behind, the backlog goes out at once and its delay is counted.
///
/// Streams are staggered evenly over one interval (stream k starts k/S of an interval late), so
/// 10,000 users at 1 message/s make a steady 10,000 messages/s rather than one burst a second.
/// All messages of all streams then form one sequence, message m being stream m % S's number
/// m / S, due at start + m × interval / S: one counter, and work per tick proportional to the
/// messages due, not to the number of streams.
struct OpenLoopSchedule {
    let streams: Int
    /// Nanoseconds between two messages of one stream.
    let interval: Double
    let start: UInt64
    /// Messages of every stream handed out so far.
    private(set) var issued = 0

    init(streams: Int, ratePerStream: Double, start: UInt64) {
        precondition(streams > 0 && ratePerStream > 0)
        self.streams = streams
        interval = 1e9 / ratePerStream
        self.start = start
    }

    struct Message: Equatable {
        var stream: Int
        var sequence: Int
        /// Monotonic nanoseconds at which the message should leave.
        var intended: UInt64
    }

    /// The messages due by `now` and not handed out yet, in order.
    mutating func due(at now: UInt64) -> [Message] {
        guard now >= start else { return [] }
        let total = Int(Double(now - start) * Double(streams) / interval) + 1
        guard total > issued else { return [] }
        let messages = (issued..<total).map(message)
        issued = total
        return messages
    }

    /// How many messages stream `stream` has been handed so far.
    func issued(stream: Int) -> Int {
        issued / streams + (stream < issued % streams ? 1 : 0)
    }

    private func message(_ number: Int) -> Message {
        Message(stream: number % streams, sequence: number / streams, intended: start + UInt64(Double(number) * interval / Double(streams)))
    }
}
