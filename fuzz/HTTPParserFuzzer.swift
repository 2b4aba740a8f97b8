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

    /// The same heads at the same offsets and the same error, reason included: a start line is
    /// checked by the same byte-order scan whether it arrives whole or in pieces, and everything
    /// else only once its line end is in.
    func isSameResult(as other: Outcome) -> Bool {
        heads == other.heads && error == other.error
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
    check(once.isSameResult(as: whole),
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
    check(many.isSameResult(as: whole),
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
