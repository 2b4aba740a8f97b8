import HuddleWebSocket
import Testing

// MARK: - Test inputs

/// Stands in for permessage-deflate without zlib: "inflating" reverses the bytes and repeats
/// them `expansion` times, so a test can tell inflated from raw bytes and build a bomb.
private final class ReversingInflater: WebSocketMessageInflater {
    let expansion: Int
    /// Whether it keeps the protocol's promise to throw rather than exceed `maxSize`.
    let honoursLimit: Bool
    private(set) var limits: [Int] = []

    init(expansion: Int = 1, honoursLimit: Bool = true) {
        self.expansion = expansion
        self.honoursLimit = honoursLimit
    }

    func inflate(_ compressed: [UInt8], maxSize: Int) throws -> [UInt8] {
        limits.append(maxSize)
        if honoursLimit && compressed.count * expansion > maxSize {
            throw WebSocketError(.messageTooBig, "inflated message too big")
        }
        return Array(repeatElement(compressed.reversed(), count: expansion).joined())
    }
}

private enum InflaterKind: Sendable {
    case reversing, bomb, bombIgnoringLimit

    func make() -> ReversingInflater {
        switch self {
        case .reversing: ReversingInflater()
        case .bomb: ReversingInflater(expansion: 100)
        case .bombIgnoringLimit: ReversingInflater(expansion: 100, honoursLimit: false)
        }
    }
}

/// How bytes reach the reader: all at once, one at a time, or cut at seeded random points.
private enum Split: Sendable, CustomStringConvertible {
    case whole
    case oneByteAtATime
    case random(seed: UInt64)

    static let all: [Split] = [.whole, .oneByteAtATime] + (1...16).map { .random(seed: $0) }

    var description: String {
        switch self {
        case .whole: "whole"
        case .oneByteAtATime: "one byte at a time"
        case .random(let seed): "random split, seed \(seed)"
        }
    }

    func pieces(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole:
            return [bytes[...]]
        case .oneByteAtATime:
            return bytes.indices.map { bytes[$0...$0] }
        case .random(let seed):
            var generator = SplitMix64(seed: seed)
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < bytes.count {
                // Mostly short pieces so headers and masks get cut; sometimes long ones.
                let limit = Bool.random(using: &generator) ? 16 : 4096
                let end = min(bytes.count, start + Int.random(in: 1...limit, using: &generator))
                pieces.append(bytes[start..<end])
                start = end
            }
            return pieces
        }
    }
}

/// A small deterministic generator, so a failing random split can be replayed from its seed.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Everything a reader reported for some input: its events, then the error it stopped at.
private struct Outcome: Equatable {
    var events: [WebSocketEvent] = []
    var error: WebSocketError?
}

/// Feeds `bytes`, split as `split`, piece by piece to `readPiece` until it throws.
private func outcome(
    of bytes: [UInt8], split: Split, _ readPiece: (ArraySlice<UInt8>, inout Outcome) throws -> Void
) -> Outcome {
    var outcome = Outcome()
    for piece in split.pieces(of: bytes) {
        do {
            try readPiece(piece, &outcome)
        } catch let error as WebSocketError {
            outcome.error = error
            break
        } catch {
            Issue.record("unexpected error \(error)")
            break
        }
    }
    return outcome
}

/// `replacedAtBoundaries`: after each piece, a reader at a message boundary is replaced by a
/// new one, as the server does so that an idle connection keeps no reader.
private func read(
    _ bytes: [UInt8],
    role: WebSocketRole,
    split: Split = .whole,
    maxMessageSize: Int = 1 << 20,
    inflater: (any WebSocketMessageInflater)? = nil,
    replacedAtBoundaries: Bool = false
) -> Outcome {
    var reader = WebSocketMessageReader(role: role, maxMessageSize: maxMessageSize, inflater: inflater)
    return outcome(of: bytes, split: split) { piece, outcome in
        try piece.withUnsafeBytes { bytes in
            try reader.read(bytes) { outcome.events.append($0) }
        }
        if replacedAtBoundaries && reader.isAtMessageBoundary {
            reader = WebSocketMessageReader(role: role, maxMessageSize: maxMessageSize, inflater: inflater)
        }
    }
}

/// `read` through `read(inPlace:message:_:)`, each piece in a buffer of its own as a loop's read
/// buffer would be: a borrowed message is recorded as the event the general path gives for it,
/// so the outcomes of both paths compare. `borrowed` counts the messages delivered in place.
/// `readerOnlyMidMessage`: as the server reads, with no reader between pieces while at a message
/// boundary — the whole messages a piece starts with go through `readWholeMessages`, and a
/// reader is built only for what follows them, and dropped again at a boundary.
private func readInPlace(
    _ bytes: [UInt8],
    role: WebSocketRole,
    split: Split = .whole,
    maxMessageSize: Int = 1 << 20,
    inflater: (any WebSocketMessageInflater)? = nil,
    readerOnlyMidMessage: Bool = false
) -> (outcome: Outcome, borrowed: Int) {
    let makeReader = { WebSocketMessageReader(role: role, maxMessageSize: maxMessageSize, inflater: inflater) }
    var reader: WebSocketMessageReader? = readerOnlyMidMessage ? nil : makeReader()
    var borrowed = 0
    let result = outcome(of: bytes, split: split) { piece, outcome in
        func borrow(_ message: WebSocketBorrowedMessage) {
            borrowed += 1
            let payload = Array(message.payload)
            outcome.events.append(message.opcode == .text ? .text(payload) : .binary(payload))
        }
        var buffer = Array(piece)
        try buffer.withUnsafeMutableBytes { bytes in
            var rest = bytes
            if reader == nil {
                let taken = try WebSocketMessageReader.readWholeMessages(
                    inPlace: bytes, role: role, maxMessageSize: maxMessageSize, borrow)
                rest = UnsafeMutableRawBufferPointer(rebasing: bytes[taken...])
            }
            guard !rest.isEmpty else { return }
            var current = reader ?? makeReader()
            defer { reader = current }
            try current.read(inPlace: rest, message: borrow) { outcome.events.append($0) }
        }
        if readerOnlyMidMessage, reader?.isAtMessageBoundary == true { reader = nil }
    }
    return (result, borrowed)
}

/// Feeds one piece to a reader the test keeps, returning the events of that call.
private func feed(_ reader: inout WebSocketMessageReader, _ bytes: [UInt8]) throws -> [WebSocketEvent] {
    var events: [WebSocketEvent] = []
    try bytes.withUnsafeBytes { bytes in
        try reader.read(bytes) { events.append($0) }
    }
    return events
}

private let hello = Array("Hello".utf8)

private func pattern(count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
}

/// A frame as a client sends it: masked. The key varies with the payload so that frames in a
/// stream exercise different key rotations.
private func clientFrame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false
) -> [UInt8] {
    let key = 0x37fa_213d ^ UInt32(truncatingIfNeeded: payload.count &* 0x0101_0101)
    return WebSocketFrameWriter.frame(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, maskingKey: key)
}

private func serverFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    WebSocketFrameWriter.frame(opcode: opcode, payload: payload, fin: fin)
}

/// A frame whose first byte (FIN, RSV bits, opcode) is replaced, for headers the writer refuses to build.
private func replacingFirstByte(of frame: [UInt8], with firstByte: UInt8) -> [UInt8] {
    [firstByte] + frame.dropFirst()
}

private func closeBody(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
    [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)] + reason
}

// MARK: - Valid streams

private struct Example: Sendable, CustomTestStringConvertible {
    var name: String
    var role: WebSocketRole
    var bytes: [UInt8]
    var events: [WebSocketEvent]
    var inflater: InflaterKind?
    var testDescription: String { name }
}

private let rfcExamples: [Example] = [
    Example(
        name: "RFC 6455 5.7 single-frame unmasked text", role: .client,
        bytes: [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f], events: [.text(hello)]),
    Example(
        name: "RFC 6455 5.7 single-frame masked text", role: .server,
        bytes: [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58], events: [.text(hello)]),
    Example(
        name: "RFC 6455 5.7 fragmented unmasked text", role: .client,
        bytes: [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f], events: [.text(hello)]),
    Example(
        name: "RFC 6455 5.7 unmasked ping", role: .client,
        bytes: [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f], events: [.ping(hello)]),
    Example(
        name: "RFC 6455 5.7 masked pong", role: .server,
        bytes: [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58], events: [.pong(hello)]),
    Example(
        name: "RFC 6455 5.7 256-byte unmasked binary", role: .client,
        bytes: [0x82, 0x7E, 0x01, 0x00] + pattern(count: 256), events: [.binary(pattern(count: 256))]),
    Example(
        name: "RFC 6455 5.7 64KiB unmasked binary", role: .client,
        bytes: [0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00] + pattern(count: 65536),
        events: [.binary(pattern(count: 65536))]),
]

/// "κόσμε" cut inside its second and fourth characters, so validation must carry across fragments.
private let greekText: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]

private let mixedClientStream = Example(
    name: "every kind of frame a client sends, masked", role: .server,
    bytes: clientFrame(.text, hello)
        + clientFrame(.binary, pattern(count: 1001))
        + clientFrame(.text, Array(greekText[0..<3]), fin: false)
        + clientFrame(.ping, Array("between fragments".utf8))
        + clientFrame(.continuation, Array(greekText[3..<8]), fin: false)
        + clientFrame(.continuation, [], fin: false)
        + clientFrame(.continuation, Array(greekText[8...]))
        + clientFrame(.text, [])
        + clientFrame(.binary, [])
        + clientFrame(.pong, [])
        + clientFrame(.binary, pattern(count: 70_001))
        + clientFrame(.text, Array("sserp".utf8), fin: false, rsv1: true)
        + clientFrame(.continuation, Array("moc".utf8))
        + clientFrame(.binary, pattern(count: 37))
        + clientFrame(.close, closeBody(1000, Array("bye".utf8)))
        + [0xFF, 0xFF, 0x00, 0x81],
    events: [
        .text(hello),
        .binary(pattern(count: 1001)),
        .ping(Array("between fragments".utf8)),
        .text(greekText),
        .text([]),
        .binary([]),
        .pong([]),
        .binary(pattern(count: 70_001)),
        .text(Array("compress".utf8)),
        .binary(pattern(count: 37)),
        .close(.normalClosure, reason: "bye"),
    ],
    inflater: .reversing)

private let mixedServerStream = Example(
    name: "every kind of frame a server sends, unmasked", role: .client,
    bytes: serverFrame(.binary, pattern(count: 300), fin: false)
        + serverFrame(.pong, hello)
        + serverFrame(.continuation, pattern(count: 5))
        + serverFrame(.text, greekText)
        + serverFrame(.close, []),
    events: [
        .pong(hello),
        .binary(pattern(count: 300) + pattern(count: 5)),
        .text(greekText),
        .close(nil, reason: ""),
    ])

// MARK: - Violations

private struct Violation: Sendable, CustomTestStringConvertible {
    var name: String
    var role: WebSocketRole = .server
    var inflater: InflaterKind?
    var maxMessageSize = 1 << 20
    var bytes: [UInt8]
    var closeCode: WebSocketCloseCode
    var testDescription: String { name }
}

private let violations: [Violation] =
    [
        Violation(name: "unmasked frame to a server", bytes: serverFrame(.text, hello), closeCode: .protocolError),
        Violation(
            name: "masked frame to a client", role: .client, bytes: clientFrame(.text, hello), closeCode: .protocolError
        ),
        Violation(
            name: "RSV2 set", bytes: replacingFirstByte(of: clientFrame(.text, hello), with: 0xA1),
            closeCode: .protocolError),
        Violation(
            name: "RSV3 set", bytes: replacingFirstByte(of: clientFrame(.text, hello), with: 0x91),
            closeCode: .protocolError),
        Violation(
            name: "RSV1 without permessage-deflate", bytes: clientFrame(.text, hello, rsv1: true),
            closeCode: .protocolError),
        Violation(
            name: "RSV1 on a continuation frame", inflater: .reversing,
            bytes: clientFrame(.text, hello, fin: false, rsv1: true) + clientFrame(.continuation, hello, rsv1: true),
            closeCode: .protocolError),
        Violation(
            name: "RSV1 on a ping", inflater: .reversing,
            bytes: replacingFirstByte(of: clientFrame(.ping, hello), with: 0xC9), closeCode: .protocolError),
        Violation(
            name: "control frame payload of 126 bytes",
            bytes: replacingFirstByte(of: clientFrame(.binary, pattern(count: 126)), with: 0x89),
            closeCode: .protocolError),
        Violation(
            name: "fragmented ping", bytes: replacingFirstByte(of: clientFrame(.ping, hello), with: 0x09),
            closeCode: .protocolError),
        Violation(
            name: "fragmented close", bytes: replacingFirstByte(of: clientFrame(.close, closeBody(1000)), with: 0x08),
            closeCode: .protocolError),
        Violation(
            name: "continuation with no message in progress", bytes: clientFrame(.continuation, hello),
            closeCode: .protocolError),
        Violation(
            name: "text frame inside a fragmented message",
            bytes: clientFrame(.text, hello, fin: false) + clientFrame(.text, hello), closeCode: .protocolError),
        Violation(
            name: "binary frame inside a fragmented message",
            bytes: clientFrame(.binary, hello, fin: false) + clientFrame(.binary, hello), closeCode: .protocolError),
        Violation(
            name: "64-bit length with the most significant bit set",
            bytes: [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0x05, 0x01, 0x02, 0x03, 0x04] + hello,
            closeCode: .protocolError),
        Violation(
            name: "single frame over the size limit", maxMessageSize: 10,
            bytes: clientFrame(.binary, pattern(count: 11)), closeCode: .messageTooBig),
        Violation(
            name: "fragment taking the message over the size limit", maxMessageSize: 10,
            bytes: clientFrame(.binary, pattern(count: 6), fin: false) + clientFrame(.continuation, pattern(count: 5)),
            closeCode: .messageTooBig),
        Violation(
            name: "compressed bytes over the size limit", inflater: .reversing, maxMessageSize: 10,
            bytes: clientFrame(.binary, pattern(count: 11), rsv1: true), closeCode: .messageTooBig),
        Violation(
            name: "inflated message over the size limit", inflater: .bomb, maxMessageSize: 1000,
            bytes: clientFrame(.binary, pattern(count: 11), rsv1: true), closeCode: .messageTooBig),
        Violation(
            name: "inflater that ignores the size limit", inflater: .bombIgnoringLimit, maxMessageSize: 1000,
            bytes: clientFrame(.binary, pattern(count: 11), rsv1: true), closeCode: .messageTooBig),
        Violation(
            name: "invalid UTF-8 in a text frame", bytes: clientFrame(.text, [0x48, 0xC0, 0xAF, 0x6f]),
            closeCode: .invalidPayloadData),
        Violation(
            name: "invalid UTF-8 across fragments",
            bytes: clientFrame(.text, [0x61, 0xE2, 0x82], fin: false) + clientFrame(.continuation, [0x28]),
            closeCode: .invalidPayloadData),
        Violation(
            name: "text message ending mid-character",
            bytes: clientFrame(.text, [0x61, 0xE2, 0x82], fin: false) + clientFrame(.continuation, []),
            closeCode: .invalidPayloadData),
        Violation(
            name: "single text frame ending mid-character", bytes: clientFrame(.text, [0x61, 0xE2, 0x82]),
            closeCode: .invalidPayloadData),
        Violation(
            name: "compressed text invalid after inflating", inflater: .reversing,
            bytes: clientFrame(.text, [0x82, 0xE2, 0x61], rsv1: true), closeCode: .invalidPayloadData),
        Violation(name: "close body of 1 byte", bytes: clientFrame(.close, [0x03]), closeCode: .protocolError),
        Violation(
            name: "close reason not UTF-8", bytes: clientFrame(.close, closeBody(1000, [0x6f, 0x6b, 0xFF])),
            closeCode: .invalidPayloadData),
        Violation(
            name: "close reason ending mid-character", bytes: clientFrame(.close, closeBody(1000, [0xE2, 0x82])),
            closeCode: .invalidPayloadData),
    ]
    + ([0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8]).map { opcode in
        Violation(
            name: "reserved opcode \(opcode)",
            bytes: replacingFirstByte(of: clientFrame(.binary, hello), with: 0x80 | opcode),
            closeCode: .protocolError)
    }
    + ([0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] as [UInt16]).map { code in
        Violation(name: "close code \(code)", bytes: clientFrame(.close, closeBody(code)), closeCode: .protocolError)
    }

// MARK: - Tests

@Suite struct WebSocketMessageReaderTests {
    @Test(arguments: rfcExamples)
    fileprivate func rfcExample(_ example: Example) {
        #expect(read(example.bytes, role: example.role) == Outcome(events: example.events))
    }

    @Test(arguments: rfcExamples + [mixedClientStream, mixedServerStream])
    fileprivate func everySplitGivesTheSameEvents(_ example: Example) {
        for split in Split.all {
            let outcome = read(example.bytes, role: example.role, split: split, inflater: example.inflater?.make())
            #expect(outcome == Outcome(events: example.events), "\(split)")
            let inPlace = readInPlace(example.bytes, role: example.role, split: split, inflater: example.inflater?.make())
            #expect(inPlace.outcome == Outcome(events: example.events), "in place, \(split)")
            let replaced = read(
                example.bytes, role: example.role, split: split, inflater: example.inflater?.make(),
                replacedAtBoundaries: true)
            #expect(replaced == Outcome(events: example.events), "\(split), replaced at message boundaries")
            let asServer = readInPlace(
                example.bytes, role: example.role, split: split, inflater: example.inflater?.make(),
                readerOnlyMidMessage: true)
            #expect(asServer.outcome == Outcome(events: example.events), "in place, \(split), reader only mid-message")
        }
    }

    /// A whole final uncompressed data frame in one read is handed over where it lies, and its
    /// echo framed in place is the frame the writer builds — for each length form.
    @Test(arguments: [0, 1, 31, 125, 126, 1000, 65535, 65536])
    func wholeMessageIsBorrowedAndFramedBackInPlace(count: Int) throws {
        for opcode in [WebSocketOpcode.text, .binary] {
            let payload = opcode == .text ? Array(repeating: UInt8(ascii: "x"), count: count) : pattern(count: count)
            var buffer = clientFrame(opcode, payload)
            var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
            var echoes: [[UInt8]] = []
            try buffer.withUnsafeMutableBytes { bytes in
                try reader.read(inPlace: bytes) { message in
                    #expect(message.opcode == opcode)
                    #expect(Array(message.payload) == payload)
                    echoes.append(Array(message.framedInPlace()))
                } _: { event in
                    Issue.record("not borrowed: \(event)")
                }
            }
            #expect(echoes == [serverFrame(opcode, payload)], "\(opcode), \(count) bytes")
        }
    }

    /// What cannot be borrowed whole — fragments, compressed messages, a frame cut by the end of
    /// the read — arrives as events, and a borrowed message in between keeps the order.
    @Test func onlyWholeUncompressedMessagesAreBorrowed() {
        let whole = readInPlace(mixedClientStream.bytes, role: .server, inflater: ReversingInflater())
        #expect(whole.outcome == Outcome(events: mixedClientStream.events))
        // hello, 1001 bytes, two empty messages, 70,001 bytes and 37 bytes; the fragmented text
        // and the compressed one are assembled.
        #expect(whole.borrowed == 6)
        let oneByteAtATime = readInPlace(mixedClientStream.bytes, role: .server, split: .oneByteAtATime, inflater: ReversingInflater())
        #expect(oneByteAtATime.outcome == Outcome(events: mixedClientStream.events))
        // None: every frame is cut, even an empty one's header.
        #expect(oneByteAtATime.borrowed == 0)
        // Read as the server does, the same messages are borrowed: the whole ones it starts
        // with before any reader exists, the rest by the reader built for the fragmented text.
        let asServer = readInPlace(mixedClientStream.bytes, role: .server, inflater: ReversingInflater(), readerOnlyMidMessage: true)
        #expect(asServer.outcome == Outcome(events: mixedClientStream.events))
        #expect(asServer.borrowed == 6)
    }

    @Test(arguments: violations)
    fileprivate func violationFailsWithItsCloseCode(_ violation: Violation) {
        let whole = read(
            violation.bytes, role: violation.role, maxMessageSize: violation.maxMessageSize,
            inflater: violation.inflater?.make())
        #expect(whole.error?.closeCode == violation.closeCode)
        #expect(whole.events.isEmpty)
        for split in Split.all {
            if split.description != Split.whole.description {
                let outcome = read(
                    violation.bytes, role: violation.role, split: split, maxMessageSize: violation.maxMessageSize,
                    inflater: violation.inflater?.make())
                #expect(outcome == whole, "\(split)")
            }
            let inPlace = readInPlace(
                violation.bytes, role: violation.role, split: split, maxMessageSize: violation.maxMessageSize,
                inflater: violation.inflater?.make())
            #expect(inPlace.outcome == whole, "in place, \(split)")
            let asServer = readInPlace(
                violation.bytes, role: violation.role, split: split, maxMessageSize: violation.maxMessageSize,
                inflater: violation.inflater?.make(), readerOnlyMidMessage: true)
            #expect(asServer.outcome == whole, "in place, \(split), reader only mid-message")
        }
    }

    /// Streams of frames with random header bits, lengths and payloads, valid or not: however
    /// the bytes are split, the reader reports the same events and the same error.
    @Test(arguments: [WebSocketRole.server, .client])
    func arbitraryFramesGiveTheSameOutcomeInAnySplit(role: WebSocketRole) {
        var generator = SplitMix64(seed: role == .server ? 1 : 2)
        for _ in 0..<300 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                // Mostly well-formed first bytes, so streams get past the first header often.
                let firstByte =
                    Int.random(in: 0..<8, using: &generator) != 0
                    ? [0x81, 0x82, 0x01, 0x00, 0x80, 0x89, 0x8A, 0x88, 0xC1][Int.random(in: 0..<9, using: &generator)]
                    : UInt8.random(in: 0...255, using: &generator)
                let payloadCount = [0, 1, 2, 5, 7, 8, 9, 125, 126, 300][Int.random(in: 0..<10, using: &generator)]
                let payload = (0..<payloadCount).map { _ in
                    Bool.random(using: &generator)
                        ? UInt8.random(in: 0x20...0x7E, using: &generator)
                        : UInt8.random(in: 0...255, using: &generator)
                }
                let masked = (role == .server) != (Int.random(in: 0..<40, using: &generator) == 0)
                let key = masked ? UInt32.random(in: 0...UInt32.max, using: &generator) : nil
                let frame = WebSocketFrameWriter.frame(opcode: .binary, payload: payload, maskingKey: key)
                bytes += replacingFirstByte(of: frame, with: firstByte)
            }
            let inflater = Bool.random(using: &generator) ? ReversingInflater() : nil
            let whole = read(bytes, role: role, maxMessageSize: 200, inflater: inflater)
            for split in [Split.oneByteAtATime, .random(seed: generator.next())] {
                let outcome = read(bytes, role: role, split: split, maxMessageSize: 200, inflater: inflater)
                #expect(outcome == whole, "\(split) of \(bytes)")
                let replaced = read(
                    bytes, role: role, split: split, maxMessageSize: 200, inflater: inflater, replacedAtBoundaries: true)
                #expect(replaced == whole, "\(split) of \(bytes), replaced at message boundaries")
            }
            for split in [Split.whole, .random(seed: generator.next())] {
                let inPlace = readInPlace(bytes, role: role, split: split, maxMessageSize: 200, inflater: inflater)
                #expect(inPlace.outcome == whole, "in place, \(split) of \(bytes)")
                let asServer = readInPlace(
                    bytes, role: role, split: split, maxMessageSize: 200, inflater: inflater, readerOnlyMidMessage: true)
                #expect(asServer.outcome == whole, "in place, \(split) of \(bytes), reader only mid-message")
            }
        }
    }

    // MARK: Failing early

    @Test func oversizedFrameFailsAtItsHeaderWithoutBuffering() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 100)
        let frame = clientFrame(.binary, pattern(count: 101))
        #expect(throws: WebSocketError(.messageTooBig, "message over 100 bytes")) {
            try feed(&reader, Array(frame.prefix(8)))
        }
        #expect(reader.bufferedByteCount == 0)
    }

    @Test func oversizedFragmentFailsAtItsHeader() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 100)
        #expect(try feed(&reader, clientFrame(.binary, pattern(count: 60), fin: false)).isEmpty)
        #expect(reader.bufferedByteCount == 60)
        let second = clientFrame(.continuation, pattern(count: 41))
        let error = #expect(throws: WebSocketError.self) { try feed(&reader, Array(second.prefix(8))) }
        #expect(error?.closeCode == .messageTooBig)
        #expect(reader.bufferedByteCount == 0)
    }

    @Test func messageOfExactlyTheLimitIsAccepted() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 100)
        let bytes =
            clientFrame(.binary, pattern(count: 60), fin: false) + clientFrame(.continuation, pattern(count: 40))
        #expect(try feed(&reader, bytes) == [.binary(pattern(count: 60) + pattern(count: 40))])
    }

    /// Autobahn 6.4.x: the reader must fail while the bad frame is still arriving.
    @Test func invalidUTF8FailsBeforeTheFrameIsComplete() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        let payload = Array("κόσμε".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(repeating: 0x61, count: 200)
        let frame = clientFrame(.text, payload)
        // Header (2 + 2 + 4 bytes) and the payload up to the first byte that cannot be UTF-8.
        let arrived = Array(frame.prefix(8 + 12))
        let error = #expect(throws: WebSocketError.self) { try feed(&reader, arrived) }
        #expect(error?.closeCode == .invalidPayloadData)
    }

    @Test func invalidUTF8FailsBeforeTheFragmentedMessageIsComplete() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        #expect(try feed(&reader, clientFrame(.text, [0x61, 0xED], fin: false)).isEmpty)
        let next = clientFrame(.continuation, [0xA0, 0x80] + Array(repeating: 0x61, count: 50))
        let error = #expect(throws: WebSocketError.self) { try feed(&reader, Array(next.prefix(6 + 1))) }
        #expect(error?.closeCode == .invalidPayloadData)
    }

    // MARK: Control frames and close

    @Test func pingBetweenFragmentsIsDeliveredAtOnce() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        #expect(try feed(&reader, clientFrame(.text, Array("Hel".utf8), fin: false)).isEmpty)
        #expect(try feed(&reader, clientFrame(.ping, [1, 2, 3])) == [.ping([1, 2, 3])])
        #expect(try feed(&reader, clientFrame(.continuation, Array("lo".utf8))) == [.text(hello)])
    }

    @Test func closeWithoutBodyHasNoCode() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        #expect(try feed(&reader, clientFrame(.close, [])) == [.close(nil, reason: "")])
    }

    @Test func closeCarriesCodeAndReason() throws {
        var reader = WebSocketMessageReader(role: .client, maxMessageSize: 1 << 20)
        let body = WebSocketFrameWriter.closePayload(code: WebSocketCloseCode(rawValue: 4001), reason: "gone ☕")
        #expect(
            try feed(&reader, serverFrame(.close, body)) == [
                .close(WebSocketCloseCode(rawValue: 4001), reason: "gone ☕")
            ])
    }

    @Test func bytesAfterCloseAreIgnored() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        let bytes =
            clientFrame(.text, Array("Hel".utf8), fin: false) + clientFrame(.close, closeBody(1001)) + [0x81, 0x05]
        #expect(try feed(&reader, bytes) == [.close(.goingAway, reason: "")])
        #expect(reader.bufferedByteCount == 0)
        #expect(try feed(&reader, clientFrame(.text, hello) + [0xFF, 0xFF]).isEmpty)
    }

    // MARK: Failure is final

    @Test func deadReaderThrowsTheSameErrorAgain() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        let first = #expect(throws: WebSocketError.self) {
            try feed(&reader, clientFrame(.binary, hello, fin: false) + serverFrame(.binary, hello))
        }
        #expect(first?.closeCode == .protocolError)
        #expect(reader.bufferedByteCount == 0)
        let second = #expect(throws: WebSocketError.self) { try feed(&reader, clientFrame(.text, hello)) }
        #expect(second == first)
    }

    private struct ConsumerGaveUp: Error, Equatable {}

    @Test func errorFromTheConsumerKillsTheReader() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        let bytes = clientFrame(.text, hello) + clientFrame(.binary, hello)
        var delivered: [WebSocketEvent] = []
        #expect(throws: ConsumerGaveUp()) {
            try bytes.withUnsafeBytes { bytes in
                try reader.read(bytes) { event in
                    delivered.append(event)
                    throw ConsumerGaveUp()
                }
            }
        }
        #expect(delivered == [.text(hello)])
        #expect(throws: ConsumerGaveUp()) { try feed(&reader, clientFrame(.text, hello)) }
    }

    // MARK: Memory held

    /// What the server relies on to keep no reader between messages: a reader is at a message
    /// boundary only when nothing is partly read and it can still read (not closed, not failed).
    @Test func messageBoundaryFollowsPartialInput() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        #expect(reader.isAtMessageBoundary)
        let frame = clientFrame(.binary, pattern(count: 10))
        #expect(try feed(&reader, Array(frame[..<1])).isEmpty)
        #expect(!reader.isAtMessageBoundary, "a partial header")
        #expect(try feed(&reader, Array(frame[1..<9])).isEmpty)
        #expect(!reader.isAtMessageBoundary, "a partial payload")
        #expect(try feed(&reader, Array(frame[9...])) == [.binary(pattern(count: 10))])
        #expect(reader.isAtMessageBoundary)

        #expect(try feed(&reader, clientFrame(.text, [], fin: false)).isEmpty)
        #expect(!reader.isAtMessageBoundary, "a fragmented message with nothing received yet")
        #expect(try feed(&reader, clientFrame(.continuation, hello)) == [.text(hello)])
        #expect(reader.isAtMessageBoundary)

        #expect(try feed(&reader, clientFrame(.close, closeBody(1000))) == [.close(.normalClosure, reason: "")])
        #expect(!reader.isAtMessageBoundary, "closed: later bytes are ignored")

        var failed = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        #expect(throws: WebSocketError.self) { try feed(&failed, serverFrame(.text, hello)) }
        #expect(!failed.isAtMessageBoundary, "failed: later reads throw again")
    }

    @Test func bufferedByteCountFollowsPartialInput() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        #expect(reader.bufferedByteCount == 0)
        let frame = clientFrame(.binary, pattern(count: 10))
        #expect(try feed(&reader, Array(frame[..<3])).isEmpty)
        #expect(reader.bufferedByteCount == 3)
        #expect(try feed(&reader, Array(frame[3..<9])).isEmpty)
        #expect(reader.bufferedByteCount == 3)
        #expect(try feed(&reader, Array(frame[9...])) == [.binary(pattern(count: 10))])
        #expect(reader.bufferedByteCount == 0)

        #expect(try feed(&reader, clientFrame(.text, hello, fin: false)).isEmpty)
        #expect(reader.bufferedByteCount == 5)
        let ping = clientFrame(.ping, [9, 9, 9, 9])
        #expect(try feed(&reader, Array(ping.dropLast())).isEmpty)
        #expect(reader.bufferedByteCount == 5 + 3)
        #expect(
            try feed(&reader, [ping.last!] + clientFrame(.continuation, [])) == [.ping([9, 9, 9, 9]), .text(hello)])
        #expect(reader.bufferedByteCount == 0)
    }

    // MARK: Compressed messages

    @Test func compressedMessageIsInflatedWithTheSizeLimit() throws {
        let inflater = ReversingInflater()
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1234, inflater: inflater)
        let bytes = clientFrame(.binary, [3, 2], fin: false, rsv1: true) + clientFrame(.continuation, [1])
        #expect(try feed(&reader, bytes) == [.binary([1, 2, 3])])
        #expect(inflater.limits == [1234])
    }

    @Test func uncompressedMessageBypassesTheInflater() throws {
        let inflater = ReversingInflater()
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20, inflater: inflater)
        #expect(try feed(&reader, clientFrame(.binary, [1, 2, 3])) == [.binary([1, 2, 3])])
        #expect(inflater.limits.isEmpty)
    }

    @Test func inflaterSetAfterTheHandshakeEnablesRSV1() throws {
        var reader = WebSocketMessageReader(role: .client, maxMessageSize: 1 << 20)
        reader.inflater = ReversingInflater()
        let frame = replacingFirstByte(of: serverFrame(.text, Array("ih".utf8)), with: 0xC1)
        #expect(try feed(&reader, frame) == [.text(Array("hi".utf8))])
    }

    @Test func inflaterRemovedMidMessageIsAProtocolError() throws {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20, inflater: ReversingInflater())
        #expect(try feed(&reader, clientFrame(.binary, [1], fin: false, rsv1: true)).isEmpty)
        reader.inflater = nil
        let error = #expect(throws: WebSocketError.self) { try feed(&reader, clientFrame(.continuation, [2])) }
        #expect(error?.closeCode == .protocolError)
    }
}
