import CHuddleShims

/// Compresses the messages one endpoint sends under permessage-deflate (RFC 7692 §7.2.1) with zlib.
///
/// With `noContextTakeover` every message is compressed from a reset state, so the output depends
/// on the payload alone: one deflater per I/O loop can serve every connection whose agreed
/// parameters say the same (`serverNoContextTakeover` for a server) with a window of at least
/// `windowBits`, and a fan-out message is compressed once and the same bytes sent to all of them.
/// Without it the deflater holds that connection's LZ77 window and belongs to that connection.
///
/// Memory: nothing until the first message; then 2^(windowBits+2) + 2^(memoryLevel+9) bytes
/// plus ~6 KiB of zlib state (256 KiB at 15/8), kept until deinit.
///
/// Not thread-safe: use it from one thread (its I/O loop) at a time.
public final class PerMessageDeflater {
    /// Payloads shorter than this are sent uncompressed (RSV1 clear; RFC 7692 §6 lets the sender
    /// choose per message). Measured on chat JSON at level 1: 15 bytes grow to 17, 51 shrink to
    /// 42, 76 to 74, 120 to 95 — a few dozen bytes saved at most, and payloads under 126 bytes
    /// already travel with the shortest frame header — while each costs a whole deflate pass here
    /// and an inflate on the phone (2-5 µs each on the test machine, dominated by per-message
    /// fixed costs: reset, Huffman tree construction). From 128 bytes on, JSON typically loses
    /// 15-60%.
    public static let minimumCompressibleSize = 128

    /// The agreed window, 8...15. 8 is compressed with zlib's 9-bit window, which never refers
    /// further back than 250 bytes (see `PerMessageDeflateNegotiation.negotiate`).
    public let windowBits: Int
    public let noContextTakeover: Bool
    public let compressionLevel: Int
    public let memoryLevel: Int

    /// What every sync flush ends with: the LEN/NLEN of an empty stored block, which RFC 7692
    /// §7.2.1 removes and the receiver puts back.
    private static let syncFlushTail: [UInt8] = [0x00, 0x00, 0xff, 0xff]

    /// Heap-allocated because zlib keeps a pointer back to the `z_stream`: it must never move.
    private var stream: UnsafeMutablePointer<z_stream>?
    private var resetBeforeNextMessage = false

    /// - Parameters:
    ///   - windowBits: the agreed window for what this endpoint sends, 8...15.
    ///   - noContextTakeover: reset after every message (what the agreement requires, or a choice).
    ///   - compressionLevel: zlib level 0...9; see `PerMessageDeflateServerOptions.compressionLevel`.
    ///   - memoryLevel: zlib memLevel 1...9; see `PerMessageDeflateServerOptions.memoryLevel`.
    public init(windowBits: Int, noContextTakeover: Bool, compressionLevel: Int = 1, memoryLevel: Int = 8) {
        precondition((8...15).contains(windowBits), "permessage-deflate window bits must be 8...15")
        precondition((0...9).contains(compressionLevel), "zlib compression level must be 0...9")
        precondition((1...9).contains(memoryLevel), "zlib memory level must be 1...9")
        self.windowBits = windowBits
        self.noContextTakeover = noContextTakeover
        self.compressionLevel = compressionLevel
        self.memoryLevel = memoryLevel
    }

    /// The deflater for what `role` sends under `parameters`.
    public convenience init(
        parameters: PerMessageDeflateParameters,
        role: WebSocketRole,
        compressionLevel: Int = 1,
        memoryLevel: Int = 8
    ) {
        let rules = parameters.sending(as: role)
        self.init(
            windowBits: rules.windowBits,
            noContextTakeover: rules.noContextTakeover,
            compressionLevel: compressionLevel,
            memoryLevel: memoryLevel
        )
    }

    deinit {
        if let stream {
            deflateEnd(stream)
            stream.deallocate()
        }
    }

    public func compress(_ payload: [UInt8]) -> [UInt8] {
        payload.withUnsafeBytes { compress($0) }
    }

    /// Compresses one whole message payload; returns the bytes to send with RSV1 set (the
    /// trailing 00 00 ff ff removed, §7.2.1). With context takeover the peer's window will hold
    /// this message, so the result must be sent, even if it came out larger than the payload.
    public func compress(_ payload: UnsafeRawBufferPointer) -> [UInt8] {
        // An empty stored block (§7.2.3.6). zlib emits nothing at all for an empty input right
        // after a previous flush, so this case never reaches it.
        guard let base = payload.baseAddress, !payload.isEmpty else { return [0x00] }
        let stream = preparedStream()
        resetBeforeNextMessage = noContextTakeover

        let bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: payload.count)
        var input = ZlibInput(bytes)
        input.feedNext(into: stream)
        // deflateBound covers Z_FINISH; a sync flush adds an empty stored block (≤ 5 bytes with
        // alignment). If the guess is still short, the array grows, so it only has to be likely.
        let guess = Int(deflateBound(stream, UInt(payload.count))) + 8
        var output = GrowingByteArray.build(initialCapacity: guess, maximumCount: Int.max) { space in
            deflateStep(stream, input: &input, into: space)
        }!

        precondition(output.suffix(4).elementsEqual(Self.syncFlushTail), "zlib sync flush did not end in 00 00 ff ff")
        output.removeLast(4)
        // The guess is about the payload size while JSON often shrinks to a third: don't let a
        // queued frame carry kilobytes of unused capacity.
        if output.capacity - output.count > 1024 {
            output = output.withUnsafeBufferPointer { compressed in
                [UInt8](unsafeUninitializedCapacity: compressed.count) { buffer, count in
                    buffer.baseAddress!.initialize(from: compressed.baseAddress!, count: compressed.count)
                    count = compressed.count
                }
            }
        }
        return output
    }

    /// Runs zlib until all input is compressed and sync-flushed, or `space` is full.
    private func deflateStep(
        _ stream: UnsafeMutablePointer<z_stream>,
        input: inout ZlibInput,
        into space: UnsafeMutableBufferPointer<UInt8>
    ) -> GrowingByteArray.Progress {
        var written = 0
        while true {
            if stream.pointee.avail_in == 0 { input.feedNext(into: stream) }
            let room = space.count - written
            if room == 0 { return .init(written: written, finished: false) }
            let flush = input.isHandedOver ? Z_SYNC_FLUSH : Z_NO_FLUSH
            let offered = UInt32(clamping: room)
            stream.pointee.next_out = space.baseAddress! + written
            stream.pointee.avail_out = offered
            let status = CHuddleShims.deflate(stream, flush)
            written += Int(offered - stream.pointee.avail_out)
            // Z_BUF_ERROR is "no progress possible" (a flush that already completed); any other
            // code means the stream was misused, which no input can cause.
            precondition(status == Z_OK || status == Z_BUF_ERROR, "zlib deflate failed (\(status))")
            // zlib's rule for flushes: complete once it returns with output room to spare.
            if flush == Z_SYNC_FLUSH, stream.pointee.avail_out > 0 {
                return .init(written: written, finished: true)
            }
        }
    }

    private func preparedStream() -> UnsafeMutablePointer<z_stream> {
        if let stream {
            if resetBeforeNextMessage { deflateReset(stream) }
            return stream
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Raw DEFLATE (negative bits). zlib rejects a raw 8-bit window; 9 is equivalent for the
        // peer, as zlib keeps 262 bytes of lookahead out of the window and refers back ≤ 250 bytes.
        let zlibWindowBits = Int32(max(windowBits, 9))
        let status = huddle_deflate_init2(stream, Int32(compressionLevel), -zlibWindowBits, Int32(memoryLevel))
        // Parameters were checked in init, so only allocation can fail; like any Swift allocation
        // failure, that ends the process.
        precondition(status == Z_OK, "zlib deflateInit2 failed (\(status))")
        self.stream = stream
        return stream
    }
}
