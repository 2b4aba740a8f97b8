/// Checks every delivered message of numbered streams: each stream (one receiver's view of one
/// publisher) must see 0, 1, 2, … exactly once and in order. A number past the expected one is
/// a gap (the skipped ones count as missing until they arrive late, which is then a
/// reordering); one already seen is a duplicate.
///
/// Scenarios map their (receiver, publisher) pairs to stream indexes themselves, so a chat run
/// of 10,000 users needs 10,000 streams (each user hears only its partner), not 10,000².
struct StreamChecker {
    struct Counts: Equatable, Sendable, Codable {
        var delivered = 0
        var gaps = 0
        var missing = 0
        var duplicates = 0
        var reordered = 0
    }

    private var next: [Int]
    /// Numbers skipped over by a gap and not yet seen, per stream, as sorted disjoint ranges:
    /// memory grows with the number of gaps, not with their size (a stream that jumps by a
    /// million costs one range).
    private var outstanding: [[ClosedRange<Int>]]
    /// Publishers per receiver, for the (receiver, publisher) convenience of a full matrix.
    private let publishers: Int
    private(set) var counts = Counts()

    init(streams: Int) {
        publishers = 1
        next = Array(repeating: 0, count: streams)
        outstanding = Array(repeating: [], count: streams)
    }

    /// Every receiver hears every publisher (fan-out, broadcast).
    init(receivers: Int, publishers: Int) {
        self.publishers = publishers
        next = Array(repeating: 0, count: receivers * publishers)
        outstanding = Array(repeating: [], count: receivers * publishers)
    }

    var streamCount: Int { next.count }

    mutating func observe(receiver: Int, publisher: Int, sequence: Int) {
        observe(stream: receiver * publishers + publisher, sequence: sequence)
    }

    mutating func observe(stream: Int, sequence: Int) {
        counts.delivered += 1
        let expected = next[stream]
        if sequence == expected {
            next[stream] = expected + 1
        } else if sequence > expected {
            counts.gaps += 1
            outstanding[stream].append(expected...(sequence - 1))
            next[stream] = sequence + 1
        } else if removeOutstanding(sequence, from: stream) {
            counts.reordered += 1
        } else {
            counts.duplicates += 1
        }
    }

    /// The next number stream `stream` expects (how many it has seen in order, gaps included).
    func expected(stream: Int) -> Int { next[stream] }

    /// Messages still missing at the end (gaps never filled in), given how many each
    /// publisher sent.
    func missing(sentPerPublisher sent: [Int]) -> Int {
        missing { stream in sent[stream % publishers] }
    }

    /// Messages still missing at the end, given how many stream `index` should have carried.
    func missing(expectedPerStream expected: (Int) -> Int) -> Int {
        var missing = 0
        for stream in next.indices {
            missing += outstanding[stream].reduce(0) { $0 + $1.count } + max(0, expected(stream) - next[stream])
        }
        return missing
    }

    private mutating func removeOutstanding(_ sequence: Int, from stream: Int) -> Bool {
        guard let index = outstanding[stream].firstIndex(where: { $0.contains(sequence) }) else { return false }
        let range = outstanding[stream][index]
        var pieces: [ClosedRange<Int>] = []
        if range.lowerBound < sequence { pieces.append(range.lowerBound...(sequence - 1)) }
        if sequence < range.upperBound { pieces.append((sequence + 1)...range.upperBound) }
        outstanding[stream].replaceSubrange(index...index, with: pieces)
        return true
    }
}
