import CHuddleShims

/// Decompresses the messages one peer sends under permessage-deflate (RFC 7692 §7.2.2) with zlib.
///
/// Memory: nothing until the first message; then ~7 KiB of zlib state plus a 2^windowBits window
/// (32 KiB at 15), kept until deinit because with context takeover the next message may refer
/// back into it. With `noContextTakeover` nothing carries over between messages, so one inflater
/// can serve every such connection of an I/O loop: give it windowBits 15, which decodes any
/// smaller window as well.
///
/// Not thread-safe: use it from one thread (its I/O loop) at a time.
public final class PerMessageInflater: WebSocketMessageInflater {
    public let windowBits: Int
    public let noContextTakeover: Bool

    /// Heap-allocated because zlib keeps a pointer back to the `z_stream` and checks it on every
    /// call: the struct must never move. Created on first use, so idle connections pay nothing.
    private var stream: UnsafeMutablePointer<z_stream>?
    /// The previous message left the stream somewhere the next one must not start from: after any
    /// message under `noContextTakeover`, and after a failed one.
    private var resetBeforeNextMessage = false

    /// RFC 7692 §7.2.2: the sender removed the tail of its final empty stored block; put it back.
    private static let removedTail: [UInt8] = [0x00, 0x00, 0xff, 0xff]

    /// A server passes the client's parameters (`clientMaxWindowBits`, `clientNoContextTakeover`),
    /// a client the server's; `init(parameters:role:)` picks the right ones.
    public init(windowBits: Int, noContextTakeover: Bool) {
        precondition((8...15).contains(windowBits), "permessage-deflate window bits must be 8...15")
        self.windowBits = windowBits
        self.noContextTakeover = noContextTakeover
    }

    /// The inflater for what the peer of `role` sends.
    public convenience init(parameters: PerMessageDeflateParameters, role: WebSocketRole) {
        let rules = parameters.receiving(as: role)
        self.init(windowBits: rules.windowBits, noContextTakeover: rules.noContextTakeover)
    }

    deinit {
        if let stream {
            inflateEnd(stream)
            stream.deallocate()
        }
    }

    /// Inflates one whole message payload (as it came off the wire, without the 00 00 ff ff tail).
    /// Output is written straight into the returned array, which grows by doubling but never past
    /// `maxSize + 1` bytes: a decompression bomb is stopped at the first byte over the limit.
    /// - Throws: `WebSocketError(.messageTooBig, …)` when the message inflates to more than
    ///   `maxSize` bytes; `WebSocketError(.invalidPayloadData, …)` when it is not valid DEFLATE or
    ///   does not end on a block boundary (a truncated message would otherwise leak into the
    ///   next one). After a throw the compression context is lost: fail the connection.
    public func inflate(_ compressed: [UInt8], maxSize: Int) throws -> [UInt8] {
        let stream = try preparedStream()
        resetBeforeNextMessage = true  // until this message succeeds, in case it throws
        let limit = maxSize >= Int.max - 1 ? Int.max : max(maxSize, 0) + 1
        // Typical JSON inflates 2-5x; a bad guess costs one doubling, not correctness.
        let guess = compressed.count > limit / 4 ? limit : max(1024, compressed.count * 4)

        let output = try compressed.withUnsafeBufferPointer { compressedBytes in
            try Self.removedTail.withUnsafeBufferPointer { tail in
                var input = ZlibInput(compressedBytes, then: tail)
                input.feedNext(into: stream)
                return try GrowingByteArray.build(initialCapacity: guess, maximumCount: limit) { space in
                    try inflateStep(stream, input: &input, into: space)
                }
            }
        }
        guard let output, output.count <= maxSize else {
            throw WebSocketError(.messageTooBig, "decompressed message exceeds \(maxSize) bytes")
        }
        resetBeforeNextMessage = noContextTakeover
        return output
    }

    /// Runs zlib until the message is fully inflated or `space` is full.
    private func inflateStep(
        _ stream: UnsafeMutablePointer<z_stream>,
        input: inout ZlibInput,
        into space: UnsafeMutableBufferPointer<UInt8>
    ) throws -> GrowingByteArray.Progress {
        var written = 0
        while true {
            let room = space.count - written
            if room == 0 { return .init(written: written, finished: false) }
            let offered = UInt32(clamping: room)
            stream.pointee.next_out = space.baseAddress! + written
            stream.pointee.avail_out = offered
            let status = CHuddleShims.inflate(stream, Z_SYNC_FLUSH)
            written += Int(offered - stream.pointee.avail_out)
            switch status {
            case Z_OK, Z_BUF_ERROR:
                // Z_BUF_ERROR only means "no progress possible now": zlib wants input or room.
                if stream.pointee.avail_in == 0, !input.feedNext(into: stream), stream.pointee.avail_out > 0 {
                    // Everything, tail included, went in and zlib stopped short of the room it had.
                    guard stream.pointee.data_type & Self.atBlockBoundary != 0 else {
                        throw invalid("compressed message ends inside a DEFLATE block")
                    }
                    return .init(written: written, finished: true)
                }
            case Z_STREAM_END:
                // A block with BFINAL=1 (§7.2.3.4 allows senders to flush that way). Anything after
                // it is padding; zlib needs a reset to read the next message.
                try restartAfterFinalBlock(stream)
                return .init(written: written, finished: true)
            case Z_DATA_ERROR, Z_NEED_DICT:
                throw invalid(Self.zlibMessage(stream) ?? "invalid DEFLATE data")
            case Z_MEM_ERROR:
                throw WebSocketError(.internalError, "out of memory while inflating")
            default:
                throw WebSocketError(.internalError, "zlib inflate failed (\(status))")
            }
        }
    }

    /// zlib's `data_type` bit for "stopped right after a block, before the next block header".
    private static let atBlockBoundary: Int32 = 128

    /// After a final block the peer's LZ77 window still holds what it sent, and with context
    /// takeover the next message may refer to it; zlib forgets its window on reset, so carry it over.
    private func restartAfterFinalBlock(_ stream: UnsafeMutablePointer<z_stream>) throws {
        guard !noContextTakeover else {
            inflateReset(stream)
            return
        }
        var window = [UInt8](repeating: 0, count: 1 << windowBits)
        var windowLength: UInt32 = 0
        let status = window.withUnsafeMutableBufferPointer { buffer in
            guard inflateGetDictionary(stream, buffer.baseAddress, &windowLength) == Z_OK,
                inflateReset(stream) == Z_OK
            else { return Z_STREAM_ERROR }
            return inflateSetDictionary(stream, buffer.baseAddress, windowLength)
        }
        guard status == Z_OK else {
            throw WebSocketError(.internalError, "could not keep the inflate window after a final block")
        }
    }

    private func preparedStream() throws -> UnsafeMutablePointer<z_stream> {
        if let stream {
            if resetBeforeNextMessage {
                inflateReset(stream)
                resetBeforeNextMessage = false
            }
            return stream
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Negative window bits: raw DEFLATE, no zlib header or checksum (RFC 7692 §6).
        guard huddle_inflate_init2(stream, -Int32(windowBits)) == Z_OK else {
            stream.deallocate()
            throw WebSocketError(.internalError, "out of memory while creating an inflater")
        }
        self.stream = stream
        return stream
    }

    private func invalid(_ reason: String) -> WebSocketError {
        WebSocketError(.invalidPayloadData, "permessage-deflate: \(reason)")
    }

    private static func zlibMessage(_ stream: UnsafeMutablePointer<z_stream>) -> String? {
        stream.pointee.msg.map { String(cString: $0) }
    }
}
