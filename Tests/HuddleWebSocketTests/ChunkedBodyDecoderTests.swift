import HuddleWebSocket
import Testing

/// RFC 9112 §7.1 chunked bodies, decoded incrementally and bounded while they arrive.
@Suite struct ChunkedBodyDecoderTests {
    /// Feeds `wire` in pieces of `piece` bytes; returns the body and the bytes consumed.
    static func decode(_ wire: String, max: Int = 100, piece: Int = Int.max) throws -> (body: String, consumed: Int, complete: Bool) {
        var decoder = ChunkedBodyDecoder(maxBodySize: max)
        var body: [UInt8] = []
        let bytes = Array(wire.utf8)
        var consumed = 0
        var start = 0
        while start < bytes.count, !decoder.isComplete {
            let end = min(bytes.count, start + piece)
            consumed += try bytes[start..<end].withUnsafeBytes { try decoder.decode($0, into: &body) }
            start = end
        }
        return (String(decoding: body, as: UTF8.self), consumed, decoder.isComplete)
    }

    @Test func decodesChunksExtensionsAndTrailersInAnyPieces() throws {
        let wire = "5\r\nhello\r\n7;name=value\r\n, world\r\nA \r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT"
        for piece in [1, 2, 3, 7, 1000] {
            let decoded = try Self.decode(wire, piece: piece)
            #expect(decoded.body == "hello, world0123456789", "piece \(piece)")
            #expect(decoded.complete)
            if piece == 1000 { #expect(decoded.consumed == wire.utf8.count - 4, "what follows the body is not consumed") }
        }
        #expect(try Self.decode("0\r\n\r\n").body == "")
        #expect(try Self.decode("a\r\n0123456789\r\n0\r\n\r\n", max: 10).body == "0123456789", "exactly the limit")
    }

    @Test func aChunkOverTheLimitIsRefusedFromItsSizeLine() {
        // The second chunk's size alone decides: none of its data was sent.
        #expect(throws: HTTPParseError(status: 413, reason: "body over 10 bytes")) { try Self.decode("6\r\nabcdef\r\n5\r\n", max: 10) }
        #expect(throws: HTTPParseError(status: 413, reason: "body over 10 bytes")) { try Self.decode("fffffffffffffff\r\n", max: 10) }
    }

    @Test func malformedBodiesAreRefused() {
        let cases: [(String, String)] = [
            ("x\r\n", "bad chunk size"),
            ("\r\n", "bad chunk size"),
            (";ext\r\n", "bad chunk size"),
            ("-1\r\n", "bad chunk size"),
            ("1000000000000000\r\n", "chunk size too large"),
            ("5\nhello", "chunk line not ended by CRLF"),
            ("3\r\nabcX", "chunk data not followed by CRLF"),
            ("3\r\nabc\rX", "chunk data not followed by CRLF"),
            ("1;" + String(repeating: "e", count: 5000), "chunk line too long"),
            ("0\r\n" + String(repeating: "T: \(String(repeating: "v", count: 1000))\r\n", count: 9), "trailer section too large"),
        ]
        for (wire, reason) in cases {
            #expect(throws: HTTPParseError(status: 400, reason: reason), "\(wire.prefix(40))") { try Self.decode(wire, max: 1 << 20) }
        }
    }
}
