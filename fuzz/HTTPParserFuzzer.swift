// libFuzzer target: HTTPHeadParser (requests and responses) and the server side of the
// opening handshake.
//
// Built by fuzz/run.sh together with Sources/HuddleWebSocket/*.swift into one module.
//
// - Split independence: the input parsed as requests (a parser keeps reading heads after one
//   completes, as on a keep-alive connection) whole, cut at one point derived from the first
//   byte, and in many small pieces gives the same heads, at the same offsets, and the same
//   error (status and reason). Likewise as responses. Each with the default limits (8 KiB,
//   100 fields) and with small ones (derived from the input), so 414/431 are reachable by
//   short inputs.
// - Every request head that parses goes through WebSocketHandshake.validate (must not crash).
//   When it upgrades: permessage-deflate negotiation on its offers, and the 101 the server would
//   send must parse as a response and pass the client's own checks
//   (validateServerResponse, acceptServerResponse), agreeing on the same parameters.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("HTTPParserFuzzer invariant violated: \(message())")
    }
}

/// A parsed head in a comparable form: start line fields, then every header as [name, value].
private struct Head: Equatable {
    var startLine: [String]
    var headers: [[String]]
    /// Offset just past the head's last byte, in the whole input.
    var end: Int
}

private struct Outcome {
    var heads: [Head] = []
    var error: HTTPParseError?

    /// The same heads at the same offsets and the same error status. Reasons may differ: the
    /// early check of an unfinished start line words its 400 more generally than the full
    /// grammar check does ("malformed request line" vs "malformed request target").
    func isSameResult(as other: Outcome) -> Bool {
        heads == other.heads && error?.status == other.error?.status
    }
}

private enum Kind {
    case request, response
}

private func parse(
    _ input: UnsafeRawBufferPointer,
    pieceEnds: [Int],
    as kind: Kind,
    limits: HTTPHeadParser.Limits,
    onRequest: (HTTPRequestHead) -> Void
) -> Outcome {
    var parser = HTTPHeadParser(limits: limits)
    var outcome = Outcome()
    var start = 0
    pieces: for end in pieceEnds + [input.count] {
        var offset = start
        start = end
        while true {
            let piece = UnsafeRawBufferPointer(rebasing: input[offset..<end])
            do throws(HTTPParseError) {
                let parsed: Head
                let consumed: Int
                switch kind {
                case .request:
                    guard let (head, used) = try parser.parseRequest(piece) else { continue pieces }
                    onRequest(head)
                    parsed = Head(
                        startLine: [head.method, head.target, String(head.versionMajor), String(head.versionMinor)],
                        headers: head.headers.pairs.map { [$0.name, $0.value] }, end: 0)
                    consumed = used
                case .response:
                    guard let (head, used) = try parser.parseResponse(piece) else { continue pieces }
                    parsed = Head(
                        startLine: [String(head.versionMinor), String(head.status), head.reason],
                        headers: head.headers.pairs.map { [$0.name, $0.value] }, end: 0)
                    consumed = used
                }
                check(consumed >= 1 && consumed <= piece.count, "consumed \(consumed) of a \(piece.count)-byte piece")
                check(parsed.headers.count <= limits.maxHeaderCount, "\(parsed.headers.count) header fields")
                offset += consumed
                var head = parsed
                head.end = offset
                // Blank lines before a start line count against the head size too.
                let begin = outcome.heads.last?.end ?? 0
                check(head.end - begin <= limits.maxHeadSize, "head of \(head.end - begin) bytes")
                outcome.heads.append(head)
                // Keep-alive: the rest of this piece is the next head.
                if offset == end { continue pieces }
            } catch {
                outcome.error = error
                // A failed parser keeps failing the same way.
                do throws(HTTPParseError) {
                    switch kind {
                    case .request: _ = try parser.parseRequest(piece)
                    case .response: _ = try parser.parseResponse(piece)
                    }
                    check(false, "a failed parser accepted more bytes")
                } catch let again {
                    check(again == error, "a failed parser threw \(again), first \(error)")
                }
                check([400, 414, 431, 505].contains(error.status), "unexpected status \(error.status)")
                break pieces
            }
        }
    }
    return outcome
}

/// Parses whole, cut once (the first byte chooses where), and in many pieces; all must agree.
private func checkSplitIndependence(
    _ input: UnsafeRawBufferPointer,
    as kind: Kind,
    limits: HTTPHeadParser.Limits,
    onRequest: (HTTPRequestHead) -> Void
) {
    let size = input.count
    let whole = parse(input, pieceEnds: [], as: kind, limits: limits, onRequest: onRequest)
    let cut = size == 0 ? 0 : Int(input[0]) * size / 255
    let once = parse(input, pieceEnds: [cut], as: kind, limits: limits) { _ in }
    check(once.isSameResult(as: whole) || isKnownStartLineDivergence(input, whole, once, kind, limits),
          "\(kind): split at \(cut) of \(size) gave \(once), whole gave \(whole), limits \(limits)")
    var ends: [Int] = []
    if size > 1 {
        var step = Int(input[size - 1]) % 16 + 1
        var position = step
        while position < size {
            ends.append(position)
            step = step % 16 + 1
            position += step
        }
    }
    let many = parse(input, pieceEnds: ends, as: kind, limits: limits) { _ in }
    check(many.isSameResult(as: whole) || isKnownStartLineDivergence(input, whole, many, kind, limits),
          "\(kind): \(ends.count + 1) pieces gave \(many), whole gave \(whole), limits \(limits)")
}

/// What the server does with a request head, and whether a client would accept its answer.
private func handshake(_ head: HTTPRequestHead) {
    guard case .upgrade(let request) = WebSocketHandshake.validate(head) else {
        _ = WebSocketHandshake.isUpgradeRequest(head)
        return
    }
    let negotiated = PerMessageDeflateNegotiation.negotiate(
        offers: request.extensionOffers, options: PerMessageDeflateServerOptions())
    let response = WebSocketHandshake.upgradeResponse(
        key: request.key, extensionHeader: negotiated?.responseHeader, subprotocol: nil)

    var parser = HTTPHeadParser()
    let parsed: (head: HTTPResponseHead, consumed: Int)?
    do {
        parsed = try response.withUnsafeBytes { try parser.parseResponse($0) }
    } catch {
        check(false, "the server's 101 does not parse: \(error)")
        return
    }
    guard let result = parsed, result.consumed == response.count else {
        check(false, "the server's 101 is not exactly one response head: \(String(describing: parsed))")
        return
    }
    do {
        let (extensions, subprotocol) = try WebSocketHandshake.validateServerResponse(result.head, key: request.key)
        check(subprotocol == nil, "a subprotocol nobody chose")
        check(extensions.count == (negotiated == nil ? 0 : 1), "response extensions \(extensions)")
    } catch {
        check(false, "a client rejects the server's 101: \(error)")
    }
    // A client that offered permessage-deflate with no constraint on the server's window reads
    // the same agreement the server made.
    if let negotiated {
        do {
            let agreed = try PerMessageDeflateNegotiation.acceptServerResponse(
                headerValues: result.head.headers.values("Sec-WebSocket-Extensions"),
                offer: PerMessageDeflateClientOffer(clientMaxWindowBits: true))
            check(agreed == negotiated.parameters,
                  "client reads \(String(describing: agreed)) from \(negotiated.responseHeader), server agreed \(negotiated.parameters)")
        } catch {
            check(false, "a client rejects the server's extension answer \(negotiated.responseHeader): \(error)")
        }
    }
}

// MARK: Known issue

/// KNOWN ISSUE in HTTPHeadParser (fuzz/README.md, "Findings"): when one start line breaks
/// several rules at once — too long (414), head too large (431), a control byte or a non-token
/// method byte (400; for a response also against an HTTP/2 version, 505) — which status it
/// gets depends on where the reads are cut. `absorbPartialLine` checks an unfinished line in
/// the order 414, early-garbage 400, 431 when a read ends, `completeLine` a finished one in
/// the order 414, 431, grammar; neither follows byte order. Every such outcome is an error,
/// only the status differs. Tolerated so that fuzzing goes on past it; run with
/// HUDDLE_FUZZ_STRICT=1 (e.g. to check a fix) to fail on it instead.
private let toleratesKnownStartLineDivergence = getenv("HUDDLE_FUZZ_STRICT") == nil

/// Whether `whole` and `other` differ only as described above: the same heads, then both fail
/// on the same start line with statuses that are each one of the rules this line breaks.
private func isKnownStartLineDivergence(
    _ input: UnsafeRawBufferPointer, _ whole: Outcome, _ other: Outcome, _ kind: Kind, _ limits: HTTPHeadParser.Limits
) -> Bool {
    guard toleratesKnownStartLineDivergence, whole.heads == other.heads,
          let wholeStatus = whole.error?.status, let otherStatus = other.error?.status
    else { return false }
    let lf: UInt8 = 0x0A, cr: UInt8 = 0x0D
    // Blank lines before the start line count against the head size.
    var index = whole.heads.last?.end ?? 0
    while true {
        if index < input.count, input[index] == lf {
            index += 1
        } else if index + 1 < input.count, input[index] == cr, input[index + 1] == lf {
            index += 2
        } else {
            break
        }
    }
    let blankBytes = index - (whole.heads.last?.end ?? 0)
    let lineFeed = input[index...].firstIndex(of: lf)
    let raw = input[index..<(lineFeed ?? input.count)]
    let length = raw.count - (raw.last == cr ? 1 : 0)

    var broken: Set<Int> = []
    if length > limits.maxRequestLineLength { broken.insert(414) }
    if blankBytes + raw.count + (lineFeed == nil ? 0 : 1) > limits.maxHeadSize { broken.insert(431) }
    // The early check of HTTPHeadParser.rejectEarlyGarbage.
    var passedMethod = false
    var garbage = false
    for byte in raw {
        if kind == .request && !passedMethod {
            if byte == 0x20 { passedMethod = true } else if !isTokenByte(byte) && byte != cr { garbage = true }
        } else if (byte < 0x20 || byte == 0x7F) && byte != cr && !(kind == .response && byte == 0x09) {
            garbage = true
        }
    }
    if garbage {
        broken.insert(400)
        if lineFeed != nil && wholeStatus == 505 { broken.insert(505) }
    }
    return broken.count >= 2 && broken.contains(wholeStatus) && broken.contains(otherStatus)
}

private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let small: HTTPHeadParser.Limits
    if size >= 2 {
        let selector = Int(input[size - 1]) ^ Int(input[size - 2]) << 8
        small = HTTPHeadParser.Limits(
            maxRequestLineLength: 1 + selector % 64,
            maxHeaderCount: (selector >> 6) % 8,
            maxHeadSize: 1 + (selector >> 9) % 256)
    } else {
        small = HTTPHeadParser.Limits(maxRequestLineLength: 4, maxHeaderCount: 1, maxHeadSize: 8)
    }
    for limits in [HTTPHeadParser.Limits(), small] {
        checkSplitIndependence(input, as: .request, limits: limits, onRequest: handshake)
        checkSplitIndependence(input, as: .response, limits: limits) { _ in }
    }
    return 0
}
