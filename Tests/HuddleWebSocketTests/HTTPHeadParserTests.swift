import HuddleWebSocket
import Testing

/// Feeds `bytes` to a fresh parser in pieces cut at `cuts`; returns the head and where, in the
/// whole input, it ended.
private func parseRequest(
    _ bytes: [UInt8],
    cuts: [Int] = [],
    limits: HTTPHeadParser.Limits = .init()
) throws -> (head: HTTPRequestHead, end: Int)? {
    var parser = HTTPHeadParser(limits: limits)
    var start = 0
    for end in cuts + [bytes.count] {
        if let (head, consumed) = try bytes[start..<end].withUnsafeBytes({ try parser.parseRequest($0) }) {
            return (head, start + consumed)
        }
        start = end
    }
    return nil
}

private func parseResponse(_ bytes: [UInt8], cuts: [Int] = []) throws -> (head: HTTPResponseHead, end: Int)? {
    var parser = HTTPHeadParser()
    var start = 0
    for end in cuts + [bytes.count] {
        if let (head, consumed) = try bytes[start..<end].withUnsafeBytes({ try parser.parseResponse($0) }) {
            return (head, start + consumed)
        }
        start = end
    }
    return nil
}

private func lines(_ head: HTTPRequestHead) -> [String] {
    ["\(head.method) \(head.target) \(head.versionMajor).\(head.versionMinor)"] + head.headers.map { "\($0.name): \($0.value)" }
}

private func lines(_ head: HTTPResponseHead) -> [String] {
    ["\(head.versionMinor) \(head.status) \(head.reason)"] + head.headers.map { "\($0.name): \($0.value)" }
}

/// The status a request is refused with, or nil when it parses (complete or not).
private func refusal(_ bytes: [UInt8], cuts: [Int] = [], limits: HTTPHeadParser.Limits = .init()) -> Int? {
    do {
        _ = try parseRequest(bytes, cuts: cuts, limits: limits)
        return nil
    } catch {
        return (error as? HTTPParseError)?.status
    }
}

private func refusal(_ text: String, limits: HTTPHeadParser.Limits = .init()) -> Int? {
    refusal(Array(text.utf8), limits: limits)
}

let chromeRequest = """
    GET /chat?room=alice%2Bbob HTTP/1.1\r
    Host: huddle.example:8080\r
    Connection: Upgrade\r
    Pragma: no-cache\r
    Cache-Control: no-cache\r
    User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r
    Upgrade: websocket\r
    Origin: https://huddle.example\r
    Sec-WebSocket-Version: 13\r
    Accept-Encoding: gzip, deflate, br, zstd\r
    Accept-Language: en-US,en;q=0.9\r
    Sec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r
    Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r
    \r

    """

/// RFC 6455 §1.3.
let rfcRequest = """
    GET /chat HTTP/1.1\r
    Host: server.example.com\r
    Upgrade: websocket\r
    Connection: Upgrade\r
    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
    Origin: http://example.com\r
    Sec-WebSocket-Protocol: chat, superchat\r
    Sec-WebSocket-Version: 13\r
    \r

    """

/// A masked text frame "Hi" that a client sent right behind its head.
private let frameBytes: [UInt8] = [0x81, 0x82, 0x01, 0x02, 0x03, 0x04, 0x49, 0x6B]

@Suite struct HTTPHeadParserTests {
    @Test func browserRequest() throws {
        let bytes = Array(chromeRequest.utf8)
        let (head, end) = try #require(try parseRequest(bytes))
        #expect(end == bytes.count)
        #expect(head.method == "GET")
        #expect(head.target == "/chat?room=alice%2Bbob")
        #expect(head.path == "/chat")
        #expect(head.query == "room=alice%2Bbob")
        #expect(head.versionMajor == 1 && head.versionMinor == 1)
        #expect(head.headers.count == 12)
        #expect(head.headers[first: "sec-websocket-key"] == "x3JJHMbDL1EzLkh9GBhXDw==")
        #expect(head.headers[first: "USER-AGENT"]?.hasSuffix("Safari/537.36") == true)
        #expect(head.headers.tokens("Accept-Encoding") == ["gzip", "deflate", "br", "zstd"])
    }

    @Test func rfc6455ExampleRequest() throws {
        let (head, _) = try #require(try parseRequest(Array(rfcRequest.utf8)))
        #expect(head.path == "/chat")
        #expect(head.query == nil)
        #expect(head.headers[first: "Host"] == "server.example.com")
        #expect(head.headers.listElements("Sec-WebSocket-Protocol") == ["chat", "superchat"])
    }

    @Test func everySplitGivesTheSameHeadAndLeavesTheFrame() throws {
        let head = Array(chromeRequest.utf8)
        let bytes = head + frameBytes
        let (whole, wholeEnd) = try #require(try parseRequest(bytes))
        #expect(wholeEnd == head.count)
        for cut in 0...bytes.count {
            let (split, end) = try #require(try parseRequest(bytes, cuts: [cut]), "cut at \(cut)")
            #expect(lines(split) == lines(whole), "cut at \(cut)")
            #expect(end == head.count, "cut at \(cut)")
        }
    }

    @Test func oneByteAtATime() throws {
        let bytes = Array(rfcRequest.utf8) + frameBytes
        let (whole, _) = try #require(try parseRequest(bytes))
        let (split, end) = try #require(try parseRequest(bytes, cuts: Array(1..<bytes.count)))
        #expect(lines(split) == lines(whole))
        #expect(end == rfcRequest.utf8.count)
    }

    @Test func incompleteHeadWaitsForMore() throws {
        let bytes = Array(rfcRequest.utf8)
        #expect(try parseRequest(Array(bytes.dropLast())) == nil)
        #expect(try parseRequest(Array(bytes.dropLast(2))) == nil)
        #expect(try parseRequest([]) == nil)
    }

    @Test func parsesTheNextHeadAfterOne() throws {
        let first = Array("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        let second = Array("GET /metrics HTTP/1.1\r\nHost: b\r\n\r\n".utf8)
        var parser = HTTPHeadParser()
        let bytes = first + second
        let (head1, consumed) = try #require(try bytes.withUnsafeBytes { try parser.parseRequest($0) })
        #expect(head1.path == "/healthz" && consumed == first.count)
        let (head2, consumed2) = try #require(try bytes[consumed...].withUnsafeBytes { try parser.parseRequest($0) })
        #expect(head2.path == "/metrics" && head2.headers[first: "host"] == "b" && consumed2 == second.count)
    }

    @Test func toleratedForms() throws {
        let bareLF = "GET / HTTP/1.1\nHost: a\r\nX-Mixed: 1\n\n"
        let (head, end) = try #require(try parseRequest(Array(bareLF.utf8)))
        #expect(end == bareLF.utf8.count)
        #expect(lines(head) == ["GET / 1.1", "Host: a", "X-Mixed: 1"])

        let padded = "\r\n\r\nGET / HTTP/1.1\r\nHOST:a\r\nx-spaced: \t  value  with inner  space \t \r\nEmpty:\r\nEmpty2:   \r\n\r\n"
        let (head2, _) = try #require(try parseRequest(Array(padded.utf8)))
        #expect(lines(head2) == ["GET / 1.1", "HOST: a", "x-spaced: value  with inner  space", "Empty: ", "Empty2: "])
        #expect(head2.headers[first: "X-SPACED"] == "value  with inner  space")

        let http10 = "GET /healthz HTTP/1.0\r\n\r\n"
        let (head3, _) = try #require(try parseRequest(Array(http10.utf8)))
        #expect(head3.versionMinor == 0)
        #expect(head3.query == nil)

        let emptyQuery = try #require(try parseRequest(Array("GET /a? HTTP/1.1\r\n\r\n".utf8)))
        #expect(emptyQuery.head.path == "/a" && emptyQuery.head.query == "")
    }

    @Test func malformedRequestLinesAre400() {
        for line in [
            "GET  / HTTP/1.1", "GET /  HTTP/1.1", " GET / HTTP/1.1", "GET / HTTP/1.1 ", "GET /", "GET / ",
            "GET /\u{01} HTTP/1.1", "G(T / HTTP/1.1", "GET / http/1.1", "GET / HTTP/1.10", "GET / HTTP/11",
            "GET / HTTP/1.x", "GET\t/ HTTP/1.1", "GET /\r HTTP/1.1", "GET /caf\u{E9} HTTP/1.1",
        ] {
            #expect(refusal(line + "\r\nHost: a\r\n\r\n") == 400, "\(line.debugDescription)")
        }
    }

    @Test func otherMajorVersionsAre505() {
        #expect(refusal("GET / HTTP/2.0\r\n\r\n") == 505)
        #expect(refusal("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") == 505)
        #expect(refusal("GET / HTTP/0.9\r\n\r\n") == 505)
    }

    @Test func malformedHeaderLinesAre400() {
        for line in [
            " folded: continuation", "\tfolded", "Name : value", "Name\t: value", "Bad(Name): value",
            ": no name", "no colon", "Name: nul\u{0}byte", "Name: bell\u{07}", "Name: del\u{7F}",
            "Name: bare\rCR", "Name: value\r", "Nämé: value",
        ] {
            let request = "GET / HTTP/1.1\r\nHost: a\r\n" + line + "\r\n\r\n"
            #expect(refusal(request) == 400, "\(line.debugDescription)")
        }
    }

    @Test func obsoleteLineFoldingRejectedRightAfterAnotherField() {
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n  two\r\n\r\n") == 400)
    }

    @Test func obsTextInValuesIsKept() throws {
        let bytes = Array("GET / HTTP/1.1\r\nX-Name: caf".utf8) + [0xC3, 0xA9] + Array("\r\n\r\n".utf8)
        let (head, _) = try #require(try parseRequest(bytes))
        #expect(head.headers[first: "x-name"] == "café")
    }

    @Test func requestLineLimitIs414EvenBeforeItsLineEnd() {
        let limits = HTTPHeadParser.Limits(maxRequestLineLength: 32, maxHeaderCount: 100, maxHeadSize: 1000)
        let fits = "GET /" + String(repeating: "a", count: 18) + " HTTP/1.1"  // 32 bytes
        #expect(fits.utf8.count == 32)
        #expect(refusal(fits + "\r\n\r\n", limits: limits) == nil)
        #expect(refusal(Array((fits + "\r").utf8), limits: limits) == nil)
        #expect(refusal("GET /a" + String(repeating: "a", count: 18) + " HTTP/1.1\r\n\r\n", limits: limits) == 414)
        // No line end yet: the limit fires on what has arrived.
        #expect(refusal(Array(("GET /" + String(repeating: "a", count: 28)).utf8), limits: limits) == 414)
        let longLine = Array(("GET /" + String(repeating: "b", count: 8200)).utf8)
        #expect(refusal(longLine) == 414)
        #expect(refusal(longLine, cuts: Array(stride(from: 100, to: longLine.count, by: 100))) == 414)
    }

    @Test func headSizeLimitIs431AsSoonAsExceeded() throws {
        let limits = HTTPHeadParser.Limits(maxRequestLineLength: 100, maxHeaderCount: 100, maxHeadSize: 60)
        let exact = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "p", count: 24) + "\r\n\r\n"
        #expect(exact.utf8.count == 60)
        #expect(try parseRequest(Array(exact.utf8), limits: limits) != nil)
        let over = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "p", count: 25) + "\r\n\r\n"
        #expect(refusal(over, limits: limits) == 431)

        // A peer that never ends its head is cut off at the limit, not buffered.
        var parser = HTTPHeadParser(limits: limits)
        let start = Array("GET / HTTP/1.1\r\nX-Endless: ".utf8)
        #expect(try start.withUnsafeBytes { try parser.parseRequest($0) } == nil)
        var fed = start.count
        var status: Int?
        while status == nil && fed < 1000 {
            do {
                _ = try [UInt8(ascii: "x")].withUnsafeBytes { try parser.parseRequest($0) }
                fed += 1
            } catch {
                status = (error as? HTTPParseError)?.status
            }
        }
        #expect(status == 431)
        #expect(fed == 60)
    }

    @Test func defaultHeadLimitAppliesToManyFields() {
        var request = "GET / HTTP/1.1\r\n"
        for index in 0..<90 {
            request += "X-Field-\(index): " + String(repeating: "v", count: 80) + "\r\n"
        }
        #expect(refusal(request + "\r\n") == 431)
    }

    @Test func headerCountLimitIs431() {
        func request(fields: Int) -> String {
            "GET / HTTP/1.1\r\n" + (0..<fields).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        }
        #expect(refusal(request(fields: 100)) == nil)
        #expect(refusal(request(fields: 101)) == 431)
        let small = HTTPHeadParser.Limits(maxRequestLineLength: 100, maxHeaderCount: 3, maxHeadSize: 1000)
        #expect(refusal(request(fields: 3), limits: small) == nil)
        #expect(refusal(request(fields: 4), limits: small) == 431)
    }

    @Test func tlsClientHelloOnThePlainPortIs400AtOnce() {
        // The first bytes of a TLS 1.2/1.3 ClientHello record: no line end in sight.
        let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]
        #expect(refusal(clientHello) == 400)
        #expect(refusal([0x16]) == 400)
        #expect(refusal(Array("GET /\u{0}".utf8)) == 400)
        #expect(refusal([0x00, 0x00, 0x00, 0x0A]) == 400)
        #expect(refusal(Array("{\"cmd\":1}".utf8)) == 400)
    }

    @Test func aFailedParserKeepsFailing() throws {
        var parser = HTTPHeadParser()
        let garbage: [UInt8] = [0x16, 0x03, 0x01]
        let valid = Array(rfcRequest.utf8)
        #expect(throws: HTTPParseError.self) { try garbage.withUnsafeBytes { try parser.parseRequest($0) } }
        let error = #expect(throws: HTTPParseError.self) { try valid.withUnsafeBytes { try parser.parseRequest($0) } }
        #expect(error?.status == 400)
    }

    @Test func responses() throws {
        let response = """
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            Sec-WebSocket-Protocol: chat\r
            \r

            """
        let head = Array(response.utf8)
        let bytes = head + [0x81, 0x02, 0x48, 0x69]
        let (whole, end) = try #require(try parseResponse(bytes))
        #expect(end == head.count)
        #expect(whole.status == 101 && whole.reason == "Switching Protocols" && whole.versionMinor == 1)
        #expect(whole.headers[first: "sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        for cut in 0...bytes.count {
            let (split, splitEnd) = try #require(try parseResponse(bytes, cuts: [cut]))
            #expect(lines(split) == lines(whole) && splitEnd == end, "cut at \(cut)")
        }

        let noReason = try #require(try parseResponse(Array("HTTP/1.1 101\r\n\r\n".utf8)))
        #expect(noReason.head.status == 101 && noReason.head.reason == "")
        let emptyReason = try #require(try parseResponse(Array("HTTP/1.0 403 \r\nContent-Length: 0\r\n\r\n".utf8)))
        #expect(emptyReason.head.status == 403 && emptyReason.head.reason == "" && emptyReason.head.versionMinor == 0)
    }

    @Test func malformedResponses() {
        func status(_ text: String) -> Int? {
            do {
                _ = try parseResponse(Array(text.utf8))
                return nil
            } catch {
                return (error as? HTTPParseError)?.status
            }
        }
        for line in ["HTTP/1.1 1x1 OK", "HTTP/1.1  101 OK", "HTTP/1.1 101OK", "HTTP/1.1 99 Low", "HTTP/1.1 1011 Long", "http/1.1 101 OK", "HTTP/1.1", "HTTP/1.1 101 Bell\u{07}"] {
            #expect(status(line + "\r\n\r\n") == 400, "\(line.debugDescription)")
        }
        #expect(status("HTTP/2.0 101 Switching Protocols\r\n\r\n") == 505)
        #expect(status("\u{16}\u{03}") == 400)
    }
}

/// SplitMix64: a seeded generator, so a failing mutation can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What a parse came to, comparable across splits: the head's lines and end, or the status.
private enum Outcome: Equatable {
    case head([String], end: Int)
    case incomplete
    case refused(Int)
}

private func outcome(request bytes: [UInt8], cuts: [Int]) -> Outcome {
    do {
        guard let (head, end) = try parseRequest(bytes, cuts: cuts) else { return .incomplete }
        return .head(lines(head), end: end)
    } catch {
        return .refused((error as? HTTPParseError)?.status ?? -1)
    }
}

private func outcome(response bytes: [UInt8], cuts: [Int]) -> Outcome {
    do {
        guard let (head, end) = try parseResponse(bytes, cuts: cuts) else { return .incomplete }
        return .head(lines(head), end: end)
    } catch {
        return .refused((error as? HTTPParseError)?.status ?? -1)
    }
}

/// The early checks on partial lines must never decide differently from the full parse:
/// mutated heads give the same outcome whole, byte by byte, and cut at random places.
@Suite struct HTTPHeadParserSplitConsistencyTests {
    private static let interestingBytes: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x3A, 0x2F, 0x2C, 0x7F, 0x80, 0xFF, 0x16, 0x41, 0x31]

    private func mutate(_ original: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            let byte = Self.interestingBytes.randomElement(using: &generator)!
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[position] = byte
            case 1: bytes.insert(byte, at: position)
            default: bytes.remove(at: position)
            }
        }
        return bytes
    }

    private func randomCuts(_ count: Int, using generator: inout SeededGenerator) -> [Int] {
        Array(Set((0..<3).map { _ in Int.random(in: 0...count, using: &generator) })).sorted()
    }

    @Test func mutatedRequests() {
        var generator = SeededGenerator(state: 6455)
        let original = Array(rfcRequest.utf8) + frameBytes
        for round in 0..<400 {
            let bytes = mutate(original, using: &generator)
            let whole = outcome(request: bytes, cuts: [])
            #expect(outcome(request: bytes, cuts: Array(1..<bytes.count)) == whole, "round \(round): \(bytes)")
            #expect(outcome(request: bytes, cuts: randomCuts(bytes.count, using: &generator)) == whole, "round \(round): \(bytes)")
        }
    }

    @Test func mutatedResponses() {
        var generator = SeededGenerator(state: 7692)
        let original = Array("HTTP/1.1 101 Switching\tProtocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8) + [0x81, 0x00]
        #expect(outcome(response: original, cuts: Array(1..<original.count)) == outcome(response: original, cuts: []))
        for round in 0..<400 {
            let bytes = mutate(original, using: &generator)
            let whole = outcome(response: bytes, cuts: [])
            #expect(outcome(response: bytes, cuts: Array(1..<bytes.count)) == whole, "round \(round): \(bytes)")
            #expect(outcome(response: bytes, cuts: randomCuts(bytes.count, using: &generator)) == whole, "round \(round): \(bytes)")
        }
    }
}

@Suite struct HTTPHeadersTests {
    @Test func lookupIsCaseInsensitiveAndOrdered() {
        let headers = HTTPHeaders([("Connection", "keep-alive"), ("X-A", "1"), ("connection", " Upgrade ,, close"), ("X-A", "2")])
        #expect(headers[first: "CONNECTION"] == "keep-alive")
        #expect(headers[first: "missing"] == nil)
        #expect(headers.values("x-a") == ["1", "2"])
        #expect(headers.tokens("Connection") == ["keep-alive", "upgrade", "close"])
        #expect(headers.tokens("missing") == [])
        #expect(HTTPHeaders([("Conneçtion", "x")])[first: "CONNEÇTION"] == nil)
        #expect(HTTPHeaders([("Connection", "x")])[first: "Connectio"] == nil)
    }

    @Test func listElementsKeepCaseAndQuotedCommas() {
        let headers = HTTPHeaders([
            ("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits, x-ext; note=\"a, \\\"b\\\", c\""),
            ("Sec-WebSocket-Extensions", "permessage-deflate"),
            ("Sec-WebSocket-Protocol", "Chat.v2 ,superchat"),
        ])
        #expect(headers.listElements("sec-websocket-extensions") == [
            "permessage-deflate; client_max_window_bits", "x-ext; note=\"a, \\\"b\\\", c\"", "permessage-deflate",
        ])
        #expect(headers.listElements("Sec-WebSocket-Protocol") == ["Chat.v2", "superchat"])
    }
}

@Suite struct HTTPResponseWriterTests {
    @Test func rejectionWithHeaderAndBody() {
        let bytes = HTTPResponseWriter.response(status: 426, headers: [("Sec-WebSocket-Version", "13")], body: Array("unsupported WebSocket version".utf8))
        #expect(String(decoding: bytes, as: UTF8.self) == """
            HTTP/1.1 426 Upgrade Required\r
            Sec-WebSocket-Version: 13\r
            Content-Length: 29\r
            Connection: close\r
            \r
            unsupported WebSocket version
            """)
    }

    @Test func keepAliveAndCustomReason() throws {
        let bytes = HTTPResponseWriter.response(status: 200, reason: "Fine", headers: [("Content-Type", "text/plain")], body: Array("ok\n".utf8), close: false)
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 200 Fine\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
        let (head, end) = try #require(try parseResponse(bytes))
        #expect(head.status == 200 && head.headers[first: "content-length"] == "3" && end == bytes.count - 3)
    }

    @Test func unknownStatusAndLineBreaksCannotSplitTheResponse() {
        let bytes = HTTPResponseWriter.response(status: 599, headers: [("X-Echo", "a\r\nSet-Cookie: evil=1")])
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 599 \r\nX-Echo: aSet-Cookie: evil=1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test func everyStatusThisModuleRaisesHasAReason() {
        for status in [101, 400, 405, 414, 426, 431, 505] {
            #expect(!HTTPResponseWriter.standardReason(status).isEmpty, "\(status)")
        }
    }
}
