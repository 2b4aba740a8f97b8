// libFuzzer target: WebSocketMessageReader (RFC 6455 frames, RFC 7692 compressed messages).
//
// Built by fuzz/run.sh together with Sources/HuddleWebSocket/*.swift into one module, so it uses
// the codec's types directly (no `import HuddleWebSocket`).
//
// Beyond "no crash, no ASan report", it checks what the reader promises:
// - split independence: the same bytes give the same events, the same error and the same
//   buffered byte count whether they arrive whole, cut at one point derived from the first byte,
//   or in many small pieces (sizes derived from the last byte);
// - every event is within bounds: data messages <= maxMessageSize, control payloads <= 125,
//   text is valid UTF-8 (checked with the standard library, independently of UTF8Validator),
//   a close code is one allowed on the wire, and nothing follows a close;
// for a server-role reader, a client-role reader, and a server-role reader with a real
// PerMessageInflater (window 15, no context takeover) so RSV1 messages reach zlib.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private let maxMessageSize = 1 << 20

/// Everything a reader reported for some input: its events, then the error it stopped at (if
/// any), and what it was still holding at the end.
private struct Outcome: Equatable {
    var events: [WebSocketEvent] = []
    var error: WebSocketError?
    var bufferedByteCount = 0
}

/// Fails the run with a readable message (libFuzzer then writes the input to crash-<sha1>).
/// `fatalError` keeps its message in -O builds, unlike `precondition`.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("FrameDecoderFuzzer invariant violated: \(message())")
    }
}

private func read(
    _ input: UnsafeRawBufferPointer,
    pieceEnds: [Int],
    role: WebSocketRole,
    inflater: (any WebSocketMessageInflater)?
) -> Outcome {
    var reader = WebSocketMessageReader(role: role, maxMessageSize: maxMessageSize, inflater: inflater)
    var outcome = Outcome()
    var start = 0
    for end in pieceEnds + [input.count] where end >= start {
        let piece = UnsafeRawBufferPointer(rebasing: input[start..<end])
        start = end
        do {
            try reader.read(piece) { outcome.events.append($0) }
        } catch let error as WebSocketError {
            outcome.error = error
            // A dead reader keeps throwing the same error and holds nothing.
            do {
                try reader.read(piece) { _ in check(false, "event from a failed reader") }
                check(false, "a failed reader accepted more bytes")
            } catch let again as WebSocketError {
                check(again == error, "a failed reader threw \(again), first \(error)")
            } catch {
                check(false, "non-WebSocketError \(error)")
            }
            check(reader.bufferedByteCount == 0, "a failed reader still buffers \(reader.bufferedByteCount) bytes")
            break
        } catch {
            check(false, "reader threw a non-WebSocketError: \(error)")
        }
    }
    outcome.bufferedByteCount = reader.bufferedByteCount
    // Holds at most: a partial header (13), a partial control payload (125), a partial message.
    check(outcome.bufferedByteCount <= maxMessageSize + 125 + 13,
          "buffers \(outcome.bufferedByteCount) bytes, over the limits")
    checkEvents(outcome.events)
    return outcome
}

private func checkEvents(_ events: [WebSocketEvent]) {
    for (index, event) in events.enumerated() {
        switch event {
        case .text(let bytes):
            check(bytes.count <= maxMessageSize, "text message of \(bytes.count) bytes")
            check(String(validating: bytes, as: UTF8.self) != nil, "text message is not UTF-8: \(bytes)")
        case .binary(let bytes):
            check(bytes.count <= maxMessageSize, "binary message of \(bytes.count) bytes")
        case .ping(let bytes), .pong(let bytes):
            check(bytes.count <= 125, "control payload of \(bytes.count) bytes")
        case .close(let code, let reason):
            check(index == events.count - 1, "events after a close")
            check(code.map(\.isValidOnWire) ?? true, "close code \(String(describing: code)) not valid on the wire")
            check(reason.utf8.count <= 123, "close reason of \(reason.utf8.count) bytes")
            check(code != nil || reason.isEmpty, "close reason without a code")
        }
    }
}

/// Reads `input` whole, split once, and in many pieces; all three must agree.
private func checkSplitIndependence(
    _ input: UnsafeRawBufferPointer,
    role: WebSocketRole,
    makeInflater: () -> (any WebSocketMessageInflater)?
) {
    let size = input.count
    let whole = read(input, pieceEnds: [], role: role, inflater: makeInflater())

    // One cut anywhere in the input, chosen by the first byte (0 -> 0, 255 -> size).
    let cut = size == 0 ? 0 : Int(input[0]) * size / 255
    let once = read(input, pieceEnds: [cut], role: role, inflater: makeInflater())
    check(once == whole, "role \(role): split at \(cut) of \(size) gave \(once), whole gave \(whole)")

    // Many short pieces (1...16 bytes, cycling from the last byte), so headers and masks get cut.
    var ends: [Int] = []
    if size > 1 {
        var step = Int(input[size - 1]) % 16 + 1
        var position = step
        while position < size {
            ends.append(position)
            step = step % 16 + 1
            position += step
        }
    }
    let many = read(input, pieceEnds: ends, role: role, inflater: makeInflater())
    check(many == whole, "role \(role): \(ends.count + 1) pieces gave \(many), whole gave \(whole)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    checkSplitIndependence(input, role: .server) { nil }
    checkSplitIndependence(input, role: .client) { nil }
    checkSplitIndependence(input, role: .server) {
        PerMessageInflater(windowBits: 15, noContextTakeover: true)
    }
    return 0
}
