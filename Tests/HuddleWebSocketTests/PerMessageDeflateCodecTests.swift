import HuddleWebSocket
import Testing

@Suite struct PerMessageDeflateCodecTests {
    private static let hello = Array("Hello".utf8)

    // MARK: RFC 7692 §7.2.3 examples

    @Test(arguments: [
        [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00],  // §7.2.3.1: one compressed block
        [0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00],  // §7.2.3.3: stored block
        [0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00],  // §7.2.3.4: BFINAL=1
        [0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00],  // §7.2.3.5: two blocks
    ] as [[UInt8]])
    func rfcExampleInflatesToHello(payload: [UInt8]) throws {
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: false)
        #expect(try inflater.inflate(payload, maxSize: 1024) == Self.hello)
    }

    @Test func rfcSecondHelloRefersToTheFirstWithContextTakeover() throws {
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: false)
        #expect(try inflater.inflate([0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00], maxSize: 1024) == Self.hello)
        #expect(try inflater.inflate([0xf2, 0x00, 0x11, 0x00, 0x00], maxSize: 1024) == Self.hello)
    }

    @Test func secondHelloCannotBeInflatedWithoutContextTakeover() throws {
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)
        #expect(try inflater.inflate([0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00], maxSize: 1024) == Self.hello)
        #expect(throws: WebSocketError.self) { try inflater.inflate([0xf2, 0x00, 0x11, 0x00, 0x00], maxSize: 1024) }
    }

    @Test func windowSurvivesAFinalBlockWithContextTakeover() throws {
        // A sender flushing with BFINAL=1 (§7.2.3.4) still keeps its LZ77 window, so the next
        // message may refer back into this one.
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: false)
        #expect(try inflater.inflate([0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00], maxSize: 1024) == Self.hello)
        #expect(try inflater.inflate([0xf2, 0x00, 0x11, 0x00, 0x00], maxSize: 1024) == Self.hello)
    }

    @Test func deflaterReproducesTheRFCBytes() {
        let deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: false)
        #expect(deflater.compress(Self.hello) == [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])
        #expect(deflater.compress(Self.hello) == [0xf2, 0x00, 0x11, 0x00, 0x00])
    }

    @Test func deflaterWithoutContextTakeoverGivesTheSameBytesForTheSamePayload() {
        // What lets one deflater per loop compress a fan-out message once for every subscriber.
        let deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
        let other = Array(String(repeating: "{\"type\":\"event\",\"room\":\"alice+bob\"}", count: 8).utf8)
        let first = deflater.compress(Self.hello)
        #expect(first == [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])
        _ = deflater.compress(other)
        #expect(deflater.compress(Self.hello) == first)
    }

    @Test func emptyMessageIsOneEmptyStoredBlock() throws {
        let deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: false)
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: false)
        #expect(try inflater.inflate(deflater.compress(Self.hello), maxSize: 1024) == Self.hello)
        #expect(deflater.compress([]) == [0x00])
        #expect(try inflater.inflate([0x00], maxSize: 1024) == [])
        // The context is intact after the empty message.
        #expect(try inflater.inflate(deflater.compress(Self.hello), maxSize: 1024) == Self.hello)
    }

    // MARK: Round trips

    @Test(arguments: 8...15, [false, true])
    func roundTripsAtEveryWindowSize(windowBits: Int, noContextTakeover: Bool) throws {
        let deflater = PerMessageDeflater(windowBits: windowBits, noContextTakeover: noContextTakeover)
        let inflater = PerMessageInflater(windowBits: windowBits, noContextTakeover: noContextTakeover)
        let messages: [[UInt8]] = [
            TestData.randomMiB, TestData.compressibleMiB, Array(TestData.compressibleMiB.prefix(300)), [],
            Self.hello, TestData.randomMiB, Array(TestData.compressibleMiB.suffix(70_000)), TestData.compressibleMiB,
        ]
        for (index, message) in messages.enumerated() {
            let compressed = deflater.compress(message)
            let restored = try inflater.inflate(compressed, maxSize: 1 << 20)
            #expect(restored == message, "message \(index), \(message.count) bytes")
        }
        // Compression happened, and incompressible data grows by well under 1% (stored blocks, or
        // near-flat Huffman codes when the window is too small to keep a block for storing).
        #expect(deflater.compress(TestData.compressibleMiB).count < (1 << 20) / 4)
        #expect(deflater.compress(TestData.randomMiB).count < (1 << 20) + (1 << 20) / 100)
    }

    @Test func eightBitWindowStaysWithin256BytesAcrossMessages() throws {
        // Data repeating every 300 bytes, sent 100 bytes at a time with context takeover: each
        // message could refer 300 bytes back into earlier ones, beyond a 256-byte window.
        let pattern = Array(TestData.randomMiB.prefix(300))
        let messages = (0..<60).map { index in (0..<100).map { pattern[(index * 100 + $0) % 300] } }

        let deflater = PerMessageDeflater(windowBits: 8, noContextTakeover: false)
        let inflater = PerMessageInflater(windowBits: 8, noContextTakeover: false)
        for message in messages {
            #expect(try inflater.inflate(deflater.compress(message), maxSize: 1024) == message)
        }

        // Control: a 15-bit deflater does refer back 300 bytes, which an 8-bit inflater rejects.
        let wideDeflater = PerMessageDeflater(windowBits: 15, noContextTakeover: false)
        let narrowInflater = PerMessageInflater(windowBits: 8, noContextTakeover: false)
        let error = #expect(throws: WebSocketError.self) {
            for message in messages {
                _ = try narrowInflater.inflate(wideDeflater.compress(message), maxSize: 1024)
            }
        }
        #expect(error?.closeCode == .invalidPayloadData)
    }

    @Test func compressesSmallestCompressibleJSON() {
        let json = #"{"type":"event","channel":"chat:alice+bob","offset":1234567,"event":{"kind":"message","from":"alice","text":"on my way, see you at the usual place"}}"#
        let payload = Array(json.utf8.prefix(PerMessageDeflater.minimumCompressibleSize))
        #expect(payload.count == PerMessageDeflater.minimumCompressibleSize)
        let deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
        #expect(deflater.compress(payload).count < payload.count)
    }

    // MARK: Hostile input

    @Test func decompressionBombStopsAtTheLimit() throws {
        let zeros = [UInt8](repeating: 0, count: 16 << 20)
        let bomb = PerMessageDeflater(windowBits: 15, noContextTakeover: true, compressionLevel: 9).compress(zeros)
        #expect(bomb.count < 20 << 10)  // DEFLATE's best: ~1030:1
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)
        let error = #expect(throws: WebSocketError.self) { try inflater.inflate(bomb, maxSize: 64 << 10) }
        #expect(error?.closeCode == .messageTooBig)
    }

    @Test func limitIsExact() throws {
        let message = Array(TestData.compressibleMiB.prefix(100_000))
        let compressed = PerMessageDeflater(windowBits: 15, noContextTakeover: true).compress(message)
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)
        #expect(try inflater.inflate(compressed, maxSize: 100_000) == message)
        let error = #expect(throws: WebSocketError.self) { try inflater.inflate(compressed, maxSize: 99_999) }
        #expect(error?.closeCode == .messageTooBig)
        // A shared inflater goes on serving the next message after a rejected one.
        #expect(try inflater.inflate(compressed, maxSize: 100_000) == message)
    }

    @Test(arguments: [
        [0xff, 0xff, 0xff, 0xff],  // block type 3 does not exist
        [0xf2, 0x48, 0xcd],  // ends in the middle of a block
        [0x00, 0x05, 0x00, 0xfa, 0xfe, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00],  // stored block with LEN != ~NLEN
        [0xf2, 0x00, 0x11, 0x00, 0x00],  // refers back into a previous message that does not exist
    ] as [[UInt8]])
    func corruptDataIsInvalidPayload(payload: [UInt8]) throws {
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)
        let error = #expect(throws: WebSocketError.self) { try inflater.inflate(payload, maxSize: 1024) }
        #expect(error?.closeCode == .invalidPayloadData)
        #expect(try inflater.inflate([0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00], maxSize: 1024) == Self.hello)
    }

    // MARK: Parameters to codecs

    @Test func codecsTakeTheirDirectionsParameters() {
        let parameters = PerMessageDeflateParameters(
            serverNoContextTakeover: true, clientNoContextTakeover: false,
            serverMaxWindowBits: 10, clientMaxWindowBits: 12)
        let serverInflater = PerMessageInflater(parameters: parameters, role: .server)
        #expect(serverInflater.windowBits == 12 && !serverInflater.noContextTakeover)
        let serverDeflater = PerMessageDeflater(parameters: parameters, role: .server)
        #expect(serverDeflater.windowBits == 10 && serverDeflater.noContextTakeover)
        let clientInflater = PerMessageInflater(parameters: parameters, role: .client)
        #expect(clientInflater.windowBits == 10 && clientInflater.noContextTakeover)
        let clientDeflater = PerMessageDeflater(parameters: parameters, role: .client)
        #expect(clientDeflater.windowBits == 12 && !clientDeflater.noContextTakeover)
    }
}

/// Deterministic test payloads, built once.
private enum TestData {
    /// 1 MiB from SplitMix64: incompressible.
    static let randomMiB: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        bytes.withUnsafeMutableBytes { raw in
            for index in 0..<(raw.count / 8) {
                state &+= 0x9E37_79B9_7F4A_7C15
                var mixed = state
                mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                raw.storeBytes(of: mixed ^ (mixed >> 31), toByteOffset: index * 8, as: UInt64.self)
            }
        }
        return bytes
    }()

    /// 1 MiB of chat-like JSON: compresses well, with matches at every distance.
    static let compressibleMiB: [UInt8] = {
        let words = ["coffee", "gym", "later", "tonight", "are", "you", "up", "for", "the", "usual", "place"]
        var text = "["
        var index = 0
        while text.utf8.count < 1 << 20 {
            let sentence = (0..<(3 + index % 7)).map { words[($0 * 7 + index * 13) % words.count] }.joined(separator: " ")
            text += #"{"offset":\#(1_000_000 + index * 37),"from":"user\#(index % 5)","text":"\#(sentence)"},"#
            index += 1
        }
        return Array(text.utf8.prefix(1 << 20))
    }()
}
