/// Checks every delivered message of numbered streams: each (receiver, publisher) pair must
/// see 0, 1, 2, … exactly once and in order. A number past the expected one is a gap (the
/// skipped ones count as missing until they arrive late, which is then a reordering); one
/// already seen is a duplicate.
struct StreamChecker {
    struct Counts: Equatable, Sendable, Codable {
        var delivered = 0
        var gaps = 0
        var missing = 0
        var duplicates = 0
        var reordered = 0
    }

    private var next: [Int]
    /// Numbers skipped over by a gap and not yet seen, per stream (small in practice).
    private var outstanding: [Set<Int>]
    private let publishers: Int
    private(set) var counts = Counts()

    init(receivers: Int, publishers: Int) {
        self.publishers = publishers
        next = Array(repeating: 0, count: receivers * publishers)
        outstanding = Array(repeating: [], count: receivers * publishers)
    }

    mutating func observe(receiver: Int, publisher: Int, sequence: Int) {
        let stream = receiver * publishers + publisher
        counts.delivered += 1
        let expected = next[stream]
        if sequence == expected {
            next[stream] = expected + 1
        } else if sequence > expected {
            counts.gaps += 1
            for skipped in expected..<sequence { outstanding[stream].insert(skipped) }
            next[stream] = sequence + 1
        } else if outstanding[stream].remove(sequence) != nil {
            counts.reordered += 1
        } else {
            counts.duplicates += 1
        }
    }

    /// Messages still missing at the end (gaps never filled in), given how many each
    /// publisher sent.
    func missing(sentPerPublisher sent: [Int]) -> Int {
        var missing = 0
        for stream in next.indices {
            let publisher = stream % publishers
            missing += outstanding[stream].count + max(0, sent[publisher] - next[stream])
        }
        return missing
    }
}
