/// One connection's replies in the order of its requests (protocol.md): requests forwarded to
/// the core come back in the order sent, and a reply made on the loop (ping, a refused
/// request) waits for the core's replies to the requests before it. No I/O: the endpoint sends
/// what this returns.
///
/// Debug builds also check that each forwarded request gets exactly one reply, counted by
/// request id (a client may reuse ids): a reply for no waiting id is a second reply (or a
/// reply to a request never forwarded), and would be taken for the next request's.
struct ReplyOrder {
    private(set) var forwarded = 0
    private(set) var answered = 0
    private var held: [(after: Int, text: [UInt8])] = []
    #if DEBUG
    private var waiting: [String: Int] = [:]
    #endif

    /// Forwarded requests the core has not answered yet.
    var unanswered: Int { forwarded - answered }

    /// Counts a request as on its way to the core; returns its number.
    mutating func forward(_ requestID: String) -> Int {
        #if DEBUG
        waiting[requestID, default: 0] += 1
        #endif
        forwarded += 1
        return forwarded
    }

    /// A reply made on the loop: returned if it may go now, otherwise held until the core has
    /// answered every request forwarded before it.
    mutating func local(_ text: [UInt8]) -> [UInt8]? {
        if answered == forwarded { return text }
        held.append((forwarded, text))
        return nil
    }

    /// The core answered the request `requestID`; returns the held replies free to go now, in
    /// order (the core's own reply is sent by the caller before them).
    mutating func coreAnswered(_ requestID: String?) -> [[UInt8]] {
        #if DEBUG
        if let requestID, let count = waiting[requestID] {
            waiting[requestID] = count > 1 ? count - 1 : nil
        } else {
            assertionFailure("a reply to no waiting request (id \(requestID ?? "null"))")
        }
        #endif
        answered += 1
        var free: [[UInt8]] = []
        while let first = held.first, first.after <= answered {
            held.removeFirst()
            free.append(first.text)
        }
        return free
    }
}
