import CHiredis

/// The unsafe edge between hiredis's C structures and Swift values: a reply tree copied out
/// before hiredis frees it, and an argument vector laid out for `redisAsyncCommandArgv`.
package enum HiredisCodec {
    /// Copies `reply` (freed by hiredis when the callback returns) into a Swift value.
    package static func copy(_ reply: UnsafePointer<redisReply>) -> RedisReply {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_STRING:
            return .bulk(bytes(node.str, node.len))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(node.str, node.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(node.str, node.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(node.integer))
        case REDIS_REPLY_ARRAY:
            // element[i] is non-null for i < elements (hiredis builds the whole tree first).
            return .array((0..<node.elements).map { copy(node.element[$0]!) })
        default:
            return .null
        }
    }

    private static func bytes(_ start: UnsafeMutablePointer<CChar>?, _ count: Int) -> [UInt8] {
        guard let start, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// Calls `body` with argc, argv and argvlen for `arguments`, valid only during the call
    /// (hiredis copies the command into its output buffer before returning).
    package static func withArgumentVector<Result>(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Result
    ) -> Result {
        var joined: [UInt8] = []
        joined.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
        var offsets: [Int] = []
        for argument in arguments {
            offsets.append(joined.count)
            joined += argument
        }
        joined.append(0)  // never empty, so the base address exists even for empty arguments
        let lengths = arguments.map(\.count)
        return joined.withUnsafeBytes { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = offsets.map { UnsafePointer(base + $0) }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { argvlen in
                    body(Int32(arguments.count), argv.baseAddress!, argvlen.baseAddress!)
                }
            }
        }
    }
}
