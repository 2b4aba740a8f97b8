import HuddleWebSocket
import Testing

@Suite struct WebSocketFrameWriterTests {
    private static let hello = Array("Hello".utf8)
    /// The masking key of RFC 6455 §5.7, `37 fa 21 3d`.
    private static let rfcKey: UInt32 = 0x37fa_213d

    private static func pattern(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    }

    // MARK: RFC 6455 §5.7 examples

    @Test func singleFrameUnmaskedText() {
        #expect(
            WebSocketFrameWriter.frame(opcode: .text, payload: Self.hello) == [
                0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f,
            ])
    }

    @Test func singleFrameMaskedText() {
        #expect(
            WebSocketFrameWriter.frame(opcode: .text, payload: Self.hello, maskingKey: Self.rfcKey)
                == [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    }

    @Test func fragmentedUnmaskedText() {
        var buffer: [UInt8] = []
        WebSocketFrameWriter.append(opcode: .text, payload: Array("Hel".utf8), fin: false, to: &buffer)
        WebSocketFrameWriter.append(opcode: .continuation, payload: Array("lo".utf8), to: &buffer)
        #expect(buffer == [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f])
    }

    @Test func unmaskedPing() {
        #expect(
            WebSocketFrameWriter.frame(opcode: .ping, payload: Self.hello) == [
                0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f,
            ])
    }

    @Test func maskedPong() {
        #expect(
            WebSocketFrameWriter.frame(opcode: .pong, payload: Self.hello, maskingKey: Self.rfcKey)
                == [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    }

    @Test func binary256BytesUses16BitLength() {
        let payload = Self.pattern(count: 256)
        #expect(WebSocketFrameWriter.frame(opcode: .binary, payload: payload) == [0x82, 0x7E, 0x01, 0x00] + payload)
    }

    @Test func binary64KiBUses64BitLength() {
        let payload = Self.pattern(count: 65536)
        #expect(
            WebSocketFrameWriter.frame(opcode: .binary, payload: payload)
                == [0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00] + payload)
    }

    // MARK: Header encoding

    @Test(arguments: [
        (125, [0x82, 0x7D] as [UInt8]),
        (126, [0x82, 0x7E, 0x00, 0x7E]),
        (65535, [0x82, 0x7E, 0xFF, 0xFF]),
        (65536, [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00]),
    ])
    func lengthUsesTheShortestForm(payloadCount: Int, header: [UInt8]) {
        let frame = WebSocketFrameWriter.frame(opcode: .binary, payload: Self.pattern(count: payloadCount))
        #expect(Array(frame.prefix(header.count)) == header)
        #expect(frame.count == header.count + payloadCount)
    }

    @Test func rsv1AndFinBits() {
        #expect(WebSocketFrameWriter.frame(opcode: .text, payload: [], rsv1: true) == [0xC1, 0x00])
        #expect(WebSocketFrameWriter.frame(opcode: .binary, payload: [], fin: false, rsv1: true) == [0x42, 0x00])
        #expect(WebSocketFrameWriter.frame(opcode: .continuation, payload: [], fin: false) == [0x00, 0x00])
    }

    @Test func emptyMaskedFrameCarriesTheKey() {
        #expect(
            WebSocketFrameWriter.frame(opcode: .close, payload: [], maskingKey: 0x0102_0304) == [
                0x88, 0x80, 1, 2, 3, 4,
            ])
    }

    // MARK: Masking

    /// The wide XOR must equal RFC 6455 §5.3 byte by byte for every tail length and key.
    @Test func maskingMatchesTheByteByByteDefinition() {
        let keys: [UInt32] = [0x37fa_213d, 0xFFFF_FFFF, 0x0000_0001, 0x8040_2010]
        for key in keys {
            let keyBytes = [
                UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16), UInt8(truncatingIfNeeded: key >> 8),
                UInt8(truncatingIfNeeded: key),
            ]
            for count in 0...40 {
                let payload = Self.pattern(count: count)
                let expected = payload.indices.map { payload[$0] ^ keyBytes[$0 % 4] }
                let frame = WebSocketFrameWriter.frame(opcode: .binary, payload: payload, maskingKey: key)
                #expect(Array(frame[2..<6]) == keyBytes)
                #expect(Array(frame[6...]) == expected, "key \(key), \(count) bytes")
            }
        }
    }

    // MARK: Corking

    @Test func appendAddsToWhatTheBufferHolds() {
        var buffer: [UInt8] = [0xAA]
        let big = Self.pattern(count: 300)
        WebSocketFrameWriter.append(opcode: .text, payload: Self.hello, maskingKey: 0x1234_5678, to: &buffer)
        WebSocketFrameWriter.append(opcode: .binary, payload: big, to: &buffer)
        big.withUnsafeBytes { big in
            WebSocketFrameWriter.append(
                opcode: .binary, payload: big, fin: false, rsv1: true, maskingKey: 0x9abc_def0, to: &buffer)
        }
        let expected =
            [0xAA]
            + WebSocketFrameWriter.frame(opcode: .text, payload: Self.hello, maskingKey: 0x1234_5678)
            + WebSocketFrameWriter.frame(opcode: .binary, payload: big)
            + WebSocketFrameWriter.frame(opcode: .binary, payload: big, fin: false, rsv1: true, maskingKey: 0x9abc_def0)
        #expect(buffer == expected)
    }

    // MARK: Close payloads

    @Test func closePayloadIsCodeThenReason() {
        #expect(
            WebSocketFrameWriter.closePayload(code: .normalClosure, reason: "bye") == [0x03, 0xE8, 0x62, 0x79, 0x65])
        #expect(
            WebSocketFrameWriter.closePayload(code: WebSocketCloseCode(rawValue: 4999), reason: "") == [0x13, 0x87])
    }

    @Test func longASCIIReasonIsCutTo125Bytes() {
        let body = WebSocketFrameWriter.closePayload(code: .policyViolation, reason: String(repeating: "x", count: 300))
        #expect(body.count == 125)
        #expect(Array(body.prefix(2)) == [0x03, 0xF0])
    }

    /// Where 123 bytes would end inside a character, the cut moves back to that character's start.
    @Test(arguments: [("é", 122), ("😀", 120), ("a€", 121), ("€a", 123)])
    func longReasonIsCutBetweenCharacters(unit: String, expectedReasonBytes: Int) {
        let reason = String(repeating: unit, count: 100)
        let body = WebSocketFrameWriter.closePayload(code: .goingAway, reason: reason)
        #expect(body.count == 2 + expectedReasonBytes)
        let cut = Array(body[2...])
        #expect(String(validating: cut, as: UTF8.self) != nil)
        #expect(Array(reason.utf8.prefix(cut.count)) == cut)
    }
}
