import HuddleWebSocket
import Testing

/// What one parser made of an input fed in pieces: every head it completed (keep-alive: the
/// parser goes on with the rest) with the offset where it ended, then the error it refused the
/// rest with, if it did — status and reason, both of which must not depend on the pieces.
private struct Outcome: Equatable, CustomStringConvertible {
    enum Kind { case request, response }

    var heads: [String] = []
    var error: HTTPParseError?
    var status: Int? { error?.status }

    var description: String { "heads \(heads), error \(error.map(String.init(describing:)) ?? "none")" }

    init(_ bytes: [UInt8], cuts: [Int], as kind: Kind, limits: HTTPHeadParser.Limits = .init()) {
        var parser = HTTPHeadParser(limits: limits)
        var start = 0
        do {
            for end in cuts + [bytes.count] {
                var offset = start
                start = end
                while offset < end {
                    let used = try bytes[offset..<end].withUnsafeBytes { piece -> Int? in
                        switch kind {
                        case .request:
                            guard let (head, used) = try parser.parseRequest(piece) else { return nil }
                            heads.append("\(head.method) \(head.target) \(head.versionMajor).\(head.versionMinor) \(head.headers.count)")
                            return used
                        case .response:
                            guard let (head, used) = try parser.parseResponse(piece) else { return nil }
                            heads.append("\(head.versionMinor) \(head.status) \(head.reason) \(head.headers.count)")
                            return used
                        }
                    }
                    guard let used else { break }
                    offset += used
                    heads[heads.count - 1] += " @\(offset)"
                }
            }
        } catch {
            self.error = error as? HTTPParseError ?? HTTPParseError(status: -1, reason: "\(error)")
        }
    }
}

/// The status `bytes` get whole, fed one byte at a time, and cut at each of `cuts` (every
/// position when nil); all must be `expected`.
private func expectStatus(
    _ expected: Int?,
    _ bytes: [UInt8],
    as kind: Outcome.Kind = .request,
    limits: HTTPHeadParser.Limits = .init(),
    cuts: [Int]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let whole = Outcome(bytes, cuts: [], as: kind, limits: limits)
    #expect(whole.status == expected, "whole: \(whole)", sourceLocation: sourceLocation)
    let bytewise = Outcome(bytes, cuts: Array(1..<max(bytes.count, 1)), as: kind, limits: limits)
    #expect(bytewise == whole, "one byte at a time: \(bytewise), whole: \(whole)", sourceLocation: sourceLocation)
    for cut in cuts ?? Array(0...bytes.count) {
        let split = Outcome(bytes, cuts: [cut], as: kind, limits: limits)
        #expect(split == whole, "cut at \(cut): \(split), whole: \(whole)", sourceLocation: sourceLocation)
    }
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A start line that breaks several rules gets the status of the first byte that breaks one,
/// however the reads cut it (fuzz/README.md, "Findings").
@Suite struct HTTPStartLineByteOrderTests {
    // The three reproducers of fuzz/README.md, each cut where the old parser diverged.

    @Test func longLineAfterABlankLineIsTooLargeBeforeItIsTooLong() {
        // The 2-byte blank line puts the head limit (8192) two bytes before the line limit.
        let request = bytes("\r\nGET /" + String(repeating: "a", count: 8200) + " HTTP/1.1\r\n\r\n")
        expectStatus(431, request, cuts: [8194] + Array(stride(from: 0, through: request.count, by: 257)))
    }

    @Test func clientHelloFollowedByAnyAmountOfBytesIs400() {
        let helloThenBytes: [UInt8] = [0x16, 0x03, 0x01] + Array(repeating: 0x41, count: 9000)
        expectStatus(400, helloThenBytes, cuts: [3] + Array(stride(from: 0, through: helloThenBytes.count, by: 257)))
    }

    @Test func statusLineVersionIsDecidedBeforeTheBytesAfterIt() {
        // "HTTP/0.1 \0\01\0G\n\0", found by the fuzzer: the version is whole (and not 1.x) before
        // the first NUL arrives.
        let response: [UInt8] = [0x48, 0x54, 0x54, 0x50, 0x2F, 0x30, 0x2E, 0x31, 0x20, 0x00, 0x00, 0x31, 0x00, 0x47, 0x0A, 0x00]
        expectStatus(505, response, as: .response)
    }

    // Which rule each byte breaks, and the fixed order when one byte breaks several.

    @Test func theEarlierOfTheTwoLimitsWins() {
        let limits = HTTPHeadParser.Limits(maxRequestLineLength: 10, maxHeaderCount: 10, maxHeadSize: 14)
        // Line byte 10 is the first past the line limit; the head limit is at byte 14.
        expectStatus(414, bytes("GET /aaaaaaaaaaaaaaaa"), limits: limits)
        // Six bytes of blank lines move the head limit to line byte 8.
        expectStatus(431, bytes("\r\n\r\n\r\nGET /aaaaaaaaaaaaaaaa"), limits: limits)
        expectStatus(431, bytes("\n\n\n\n\n\nGET /aaaaaaaaaaaaaaaa\r\n\r\n"), limits: limits)
        // Line ends are part of the head too: this 19-byte head fits 19 bytes, and with 16 the
        // start line's LF (the 17th byte) is the one too many.
        let head = bytes("\nGET / HTTP/1.1\r\n\r\n")
        expectStatus(nil, head, limits: HTTPHeadParser.Limits(maxRequestLineLength: 14, maxHeaderCount: 10, maxHeadSize: 19))
        expectStatus(431, head, limits: HTTPHeadParser.Limits(maxRequestLineLength: 14, maxHeaderCount: 10, maxHeadSize: 16))
    }

    @Test func garbageBeforeALimitIs400AndAfterItIsTheLimit() {
        let limits = HTTPHeadParser.Limits(maxRequestLineLength: 10, maxHeaderCount: 10, maxHeadSize: 100)
        expectStatus(400, bytes("GET /aa\u{0}aaaaaaaaaaa"), limits: limits)
        expectStatus(400, bytes("GE(T /aaaaaaaaaaaaaa"), limits: limits)
        expectStatus(414, bytes("GET /aaaaa" + "aaaa\u{0}aaaa"), limits: limits)
        expectStatus(414, bytes("GETGETGETGET(T / HTTP/1.1"), limits: limits)
        let headLimited = HTTPHeadParser.Limits(maxRequestLineLength: 100, maxHeaderCount: 10, maxHeadSize: 10)
        expectStatus(431, bytes("GET /aaaaaaaaaa\u{0}"), limits: headLimited)
    }

    @Test func oneByteBreakingSeveralRulesGetsThemIn414431400Order() {
        // Line byte 10 is past both limits and is a NUL.
        let both = HTTPHeadParser.Limits(maxRequestLineLength: 10, maxHeaderCount: 10, maxHeadSize: 10)
        expectStatus(414, bytes("GET /aaaaa\u{0}"), limits: both)
        expectStatus(414, bytes("GET /aaaaaa"), limits: both)
        // Past the head limit only, and a NUL.
        let headOnly = HTTPHeadParser.Limits(maxRequestLineLength: 100, maxHeaderCount: 10, maxHeadSize: 10)
        expectStatus(431, bytes("GET /aaaaa\u{0}"), limits: headOnly)
    }

    @Test func aLineEndingCRDoesNotCountAgainstTheLineLimit() {
        let limits = HTTPHeadParser.Limits(maxRequestLineLength: 14, maxHeaderCount: 10, maxHeadSize: 100)
        expectStatus(nil, bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), limits: limits)
        // A CR not followed by the LF is part of the line: 15 bytes.
        expectStatus(414, bytes("GET / HTTP/1.1\r\r\n\r\n"), limits: limits)
        expectStatus(414, bytes("GET / HTTP/1.1\rx\r\n\r\n"), limits: limits)
        // It does count against the head.
        let head = HTTPHeadParser.Limits(maxRequestLineLength: 14, maxHeaderCount: 10, maxHeadSize: 14)
        expectStatus(431, bytes("GET / HTTP/1.1\r\n\r\n"), limits: head)
    }

    @Test func aBareCRIs400AtTheByteAfterIt() {
        expectStatus(400, bytes("GET /\rx HTTP/1.1\r\n\r\n"))
        expectStatus(400, bytes("GET / HTTP/1.1\r\r\n\r\n"))
        expectStatus(400, bytes("\r\r\nGET / HTTP/1.1\r\n\r\n"))
        // Before the line limit is reached, the bare CR decides.
        let limits = HTTPHeadParser.Limits(maxRequestLineLength: 10, maxHeaderCount: 10, maxHeadSize: 100)
        expectStatus(400, bytes("GET /\raaaaaaaaaaaa"), limits: limits)
        expectStatus(400, bytes("HTTP/1.1 101 A\rB\r\n\r\n"), as: .response)
        expectStatus(400, bytes("HTTP/\r.0 101 OK\r\n\r\n"), as: .response)
    }

    @Test func blankLinesBeforeTheStartLineStillParse() {
        expectStatus(nil, bytes("\r\n\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.0\r\n\r\n"))
        expectStatus(nil, bytes("\r\nHTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"), as: .response)
        let parsed = Outcome(bytes("\r\n\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.0\r\n\r\n"), cuts: [], as: .request)
        #expect(parsed.heads == ["GET / 1.1 1 @32", "GET /b 1.0 0 @51"])
    }

    @Test func statusLineVersionIsCheckedByteByByte() {
        // 505 as soon as the version is complete, whatever follows or does not.
        expectStatus(505, bytes("HTTP/2.0"), as: .response)
        expectStatus(505, bytes("HTTP/2.0\r\n\r\n"), as: .response)
        expectStatus(505, bytes("HTTP/0.9 200 OK\u{0}\r\n\r\n"), as: .response)
        // A malformed version is 400 at its first wrong byte, a 2 before it notwithstanding.
        expectStatus(400, bytes("HTTP/2.x 101 OK\r\n\r\n"), as: .response)
        expectStatus(400, bytes("HTTP/2\u{0}0 101 OK\r\n\r\n"), as: .response)
        expectStatus(400, bytes("HTTX/2.0 101 OK\r\n\r\n"), as: .response)
        expectStatus(400, bytes("HTTP/1.1 101 \u{0}"), as: .response)
        expectStatus(400, bytes("HTTP/1.1\r\n\r\n"), as: .response)
        expectStatus(nil, bytes("HTTP/1.1 101 Switching\tProtocols\r\n\r\n"), as: .response)
    }

    @Test func requestVersionIsStillDecidedAtTheLineEnd() {
        expectStatus(505, bytes("GET / HTTP/2.0\r\n\r\n"))
        expectStatus(400, bytes("GET / HTTP/2.00\r\n\r\n"))
        expectStatus(nil, bytes("GET / HTTP/2.0"))
    }

    /// Inputs that break several rules at once, with small limits so that 414 and 431 are as
    /// common as garbage: whole, one byte at a time and cut at random places must agree.
    @Test func mutatedHeadsUnderSmallLimitsAgreeAcrossSplits() {
        var generator = SeededGenerator(state: 9112)
        let requests = [
            bytes("\r\nGET /chat?room=a HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.0\r\n\r\n"),
            bytes("GET /a HTTP/2.0\r\nHost: a\r\n\r\n"),
        ]
        let responses = [
            bytes("\r\nHTTP/1.1 101 Switching\tProtocols\r\nUpgrade: websocket\r\n\r\nHTTP/1.0 200 OK\r\n\r\n"),
            bytes("HTTP/2.0 200 OK\r\nServer: a\r\n\r\n"),
        ]
        let insertable: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x7F, 0x80, 0x16, 0x41, 0x32, 0x3A, 0x2E]
        var statuses: Set<Int> = []
        for round in 0..<600 {
            let kind: Outcome.Kind = round % 2 == 0 ? .request : .response
            var input = (kind == .request ? requests : responses).randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0...input.count, using: &generator)
                let byte = insertable.randomElement(using: &generator)!
                switch Int.random(in: 0..<4, using: &generator) {
                case 0 where position < input.count: input[position] = byte
                case 1 where position < input.count: input.remove(at: position)
                case 2: input.insert(contentsOf: repeatElement(UInt8(ascii: "a"), count: Int.random(in: 1...30, using: &generator)), at: position)
                default: input.insert(byte, at: position)
                }
            }
            let limits = HTTPHeadParser.Limits(
                maxRequestLineLength: Int.random(in: 1...40, using: &generator),
                maxHeaderCount: Int.random(in: 0...3, using: &generator),
                maxHeadSize: Int.random(in: 1...70, using: &generator))
            let whole = Outcome(input, cuts: [], as: kind, limits: limits)
            if let status = whole.status { statuses.insert(status) }
            let bytewise = Outcome(input, cuts: Array(1..<max(input.count, 1)), as: kind, limits: limits)
            #expect(bytewise == whole, "round \(round), \(limits): \(input)")
            let cuts = Array(Set((0..<3).map { _ in Int.random(in: 0...input.count, using: &generator) })).sorted()
            let split = Outcome(input, cuts: cuts, as: kind, limits: limits)
            #expect(split == whole, "round \(round), cuts \(cuts), \(limits): \(input)")
        }
        // The rounds reach every status, so each order between them was exercised.
        #expect(statuses == [400, 414, 431, 505])
    }
}
