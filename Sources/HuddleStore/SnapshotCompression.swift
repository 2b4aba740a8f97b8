import CHuddleShims

/// zlib for snapshots: streamed out in chunks while compressing, inflated in one pass into a
/// buffer of the size the header promises.
enum SnapshotCompression {
    /// Fastest level: a snapshot is taken while a copy of the state is held in memory, so time
    /// matters more than the 10-15% level 6 would save.
    static let level = Z_BEST_SPEED
    static let chunkSize = 256 << 10

    /// Deflates `payload` and hands the output to `sink` chunk by chunk; returns its total size.
    static func deflate(_ payload: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        // Heap-allocated: zlib keeps a pointer back to the z_stream, so it must never move.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard huddle_deflate_init2(stream, level, 15, 8) == Z_OK else {
            throw StoreError.compressionFailed(reason: "zlib deflateInit2 failed")
        }
        defer { deflateEnd(stream) }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { output.deallocate() }
        var remaining = payload
        var total = 0
        while true {
            if stream.pointee.avail_in == 0, let base = remaining.baseAddress, !remaining.isEmpty {
                let count = min(remaining.count, Int(UInt32.max))
                // zlib never writes through next_in; the C declaration just lacks const.
                stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = UInt32(count)
                remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
            }
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = UInt32(chunkSize)
            let status = CHuddleShims.deflate(stream, remaining.isEmpty ? Z_FINISH : Z_NO_FLUSH)
            let produced = chunkSize - Int(stream.pointee.avail_out)
            if produced > 0 {
                try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced]))
                total += produced
            }
            if status == Z_STREAM_END { return total }
            guard status == Z_OK || status == Z_BUF_ERROR else { throw StoreError.compressionFailed(reason: "zlib deflate returned \(status)") }
        }
    }

    /// Inflates `compressed`, which must be exactly one zlib stream of exactly `length` bytes.
    static func inflate(_ compressed: UnsafeRawBufferPointer, length: Int) throws(SnapshotProblem) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard huddle_inflate_init2(stream, 15) == Z_OK else { throw SnapshotProblem("zlib inflateInit2 failed") }
        defer { inflateEnd(stream) }
        var problem: SnapshotProblem?
        // One byte more than promised, so a stream that inflates to more is caught, not cut.
        let capacity = length + 1
        let payload = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var input = compressed
            var outputHanded = 0
            while true {
                if stream.pointee.avail_in == 0, let base = input.baseAddress, !input.isEmpty {
                    let chunk = min(input.count, Int(UInt32.max))
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
                    stream.pointee.avail_in = UInt32(chunk)
                    input = UnsafeRawBufferPointer(rebasing: input[chunk...])
                }
                if stream.pointee.avail_out == 0 && outputHanded < capacity {
                    let chunk = min(capacity - outputHanded, Int(UInt32.max))
                    stream.pointee.next_out = buffer.baseAddress! + outputHanded
                    stream.pointee.avail_out = UInt32(chunk)
                    outputHanded += chunk
                }
                let status = CHuddleShims.inflate(stream, Z_NO_FLUSH)
                let produced = outputHanded - Int(stream.pointee.avail_out)
                if status == Z_STREAM_END {
                    if produced != length {
                        problem = SnapshotProblem("payload inflates to \(produced) bytes, header says \(length)")
                    } else if stream.pointee.avail_in != 0 || !input.isEmpty {
                        problem = SnapshotProblem("bytes after the end of the compressed payload")
                    }
                    count = min(produced, length)
                    return
                }
                if status == Z_OK { continue }
                if status == Z_BUF_ERROR && stream.pointee.avail_in == 0 && input.isEmpty {
                    problem = SnapshotProblem("compressed payload ends early")
                } else if status == Z_BUF_ERROR && produced == capacity {
                    problem = SnapshotProblem("payload inflates to more than the \(length) bytes the header says")
                } else {
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                    problem = SnapshotProblem("compressed payload is damaged (zlib: \(message))")
                }
                count = 0
                return
            }
        }
        if let problem { throw problem }
        return payload
    }
}
