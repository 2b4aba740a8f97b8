// libFuzzer target: PerMessageInflater (RFC 7692 inflate with zlib) and PerMessageDeflater.
//
// Built by fuzz/run.sh together with Sources/HuddleWebSocket/*.swift into one module.
//
// 1. The input as compressed bytes: inflated with maxSize 64 KiB, window 8 and 15, with and
//    without context takeover, twice on the same inflater (the second message may refer back
//    into the first when the context is kept). Checks: output never exceeds maxSize; errors are
//    only 1007 (bad data) or 1009 (too big); a fresh inflater gives the same first message with
//    or without context takeover; whatever inflates with window 8 inflates identically with 15.
// 2. The input as a payload (up to 64 KiB): deflated with parameters derived from the input
//    and inflated back with the agreed window; inflate(deflate(x)) == x, also for messages in
//    a row with context takeover (later ones referring back into earlier ones). The compressed
//    stream cut short and with one bit flipped is inflated too (bounded output, 1007/1009 only):
//    system zlib is not instrumented, so this is how near-valid streams reach it.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private let maxSize = 64 * 1024

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("InflaterFuzzer invariant violated: \(message())")
    }
}

private enum Result: Equatable {
    case inflated([UInt8])
    case failed(WebSocketError)
}

private func inflate(_ inflater: PerMessageInflater, _ compressed: [UInt8], maxSize: Int) -> Result {
    do {
        let output = try inflater.inflate(compressed, maxSize: maxSize)
        check(output.count <= maxSize, "inflated \(output.count) bytes, maxSize \(maxSize)")
        return .inflated(output)
    } catch let error as WebSocketError {
        check(error.closeCode == .invalidPayloadData || error.closeCode == .messageTooBig,
              "unexpected inflate error \(error)")
        return .failed(error)
    } catch {
        check(false, "inflate threw a non-WebSocketError: \(error)")
        return .failed(WebSocketError(.internalError, "unreachable"))
    }
}

/// Part 1: arbitrary bytes as a compressed message.
private func inflateArbitrary(_ compressed: [UInt8]) {
    var firstMessage: [Int: Result] = [:]
    for windowBits in [8, 15] {
        var firstWithTakeover: Result?
        for noContextTakeover in [false, true] {
            let inflater = PerMessageInflater(windowBits: windowBits, noContextTakeover: noContextTakeover)
            let first = inflate(inflater, compressed, maxSize: maxSize)
            if let firstWithTakeover {
                check(first == firstWithTakeover,
                      "window \(windowBits): first message differs with and without context takeover")
            } else {
                firstWithTakeover = first
            }
            // A second message on the same inflater: after a failure the inflater must start clean
            // (it resets); after a success it may keep the window. Either way, bounded output.
            _ = inflate(inflater, compressed, maxSize: maxSize)
            // And a third with a tiny limit, so the bomb path triggers on small outputs too.
            _ = inflate(inflater, compressed, maxSize: compressed.count)
        }
        firstMessage[windowBits] = firstWithTakeover
    }
    if case .inflated(let small)? = firstMessage[8] {
        // Distances that fit 256 bytes fit 32 KiB: a larger window decodes a smaller one's stream.
        check(firstMessage[15] == .inflated(small), "inflated with window 8 but not identically with 15")
    }
}

/// Part 2: the input as a payload, deflated and inflated back.
private func roundTrip(_ payload: [UInt8], selector: UInt8) {
    // Parameters from one byte: window 8...15, level 0...9, memLevel 1...9.
    let windowBits = 8 + Int(selector & 7)
    let level = Int(selector >> 3) % 10
    let memoryLevel = 1 + Int(selector) % 9

    // Each message on its own (the server's fan-out case).
    let deflater = PerMessageDeflater(
        windowBits: windowBits, noContextTakeover: true, compressionLevel: level, memoryLevel: memoryLevel)
    let compressed = deflater.compress(payload)
    let inflater = PerMessageInflater(windowBits: windowBits, noContextTakeover: true)
    check(inflate(inflater, compressed, maxSize: maxSize) == .inflated(payload),
          "round trip failed: window \(windowBits), level \(level), memLevel \(memoryLevel), \(payload.count) bytes")
    // The same deflater again, reset between messages: the same bytes.
    check(deflater.compress(payload) == compressed, "no-context-takeover deflater is not deterministic")
    // Exactly at the limit is allowed, one byte under is 1009.
    check(inflate(inflater, compressed, maxSize: payload.count) == .inflated(payload), "inflate at exact maxSize failed")
    if !payload.isEmpty {
        guard case .failed(let error) = inflate(inflater, compressed, maxSize: payload.count - 1) else {
            check(false, "inflate over maxSize by one byte succeeded")
            return
        }
        check(error.closeCode == .messageTooBig, "over maxSize by one byte gave \(error)")
    }

    // zlib is not instrumented, so libFuzzer cannot steer arbitrary bytes deep into it: also
    // inflate near-valid streams made from this one, cut short and with one bit flipped. Only
    // the bounds and the error kinds are checked (the restored 00 00 ff ff tail after a cut
    // stream may decode as more symbols, so the output need not be a prefix of the payload).
    if !compressed.isEmpty {
        let position = Int(selector) * (compressed.count - 1) / 255
        _ = inflate(PerMessageInflater(windowBits: windowBits, noContextTakeover: true),
                    Array(compressed[..<position]), maxSize: maxSize)
        var flipped = compressed
        flipped[position] ^= 1 << (selector % 8)
        _ = inflate(PerMessageInflater(windowBits: windowBits, noContextTakeover: true), flipped, maxSize: maxSize)
    }

    // Context takeover: two messages in a row, the second may refer back into the first.
    let cut = payload.isEmpty ? 0 : Int(selector) * payload.count / 255
    let messages = [Array(payload[..<cut]), Array(payload[cut...]), payload]
    let keepingDeflater = PerMessageDeflater(
        windowBits: windowBits, noContextTakeover: false, compressionLevel: level, memoryLevel: memoryLevel)
    let keepingInflater = PerMessageInflater(windowBits: windowBits, noContextTakeover: false)
    for (index, message) in messages.enumerated() {
        let compressed = keepingDeflater.compress(message)
        check(inflate(keepingInflater, compressed, maxSize: maxSize) == .inflated(message),
              "context-takeover round trip failed at message \(index): window \(windowBits), level \(level), "
                + "memLevel \(memoryLevel), cut \(cut) of \(payload.count)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    inflateArbitrary(bytes)
    if size <= maxSize {
        roundTrip(bytes, selector: size == 0 ? 0 : bytes[0])
    }
    return 0
}
