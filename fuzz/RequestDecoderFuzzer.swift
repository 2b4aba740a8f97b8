// libFuzzer target: RequestDecoder and the JSON parser and writer under it.
//
// Built by fuzz/run.sh together with Sources/HuddleProtocol/*.swift into one module, so it uses
// the codec's types directly (no `import HuddleProtocol`).
//
// Beyond "no crash, no ASan report", it checks what the protocol codec promises:
// - a decoded publish's `data` is within the size limit, is JSON, is its own compact form
//   (parse, write: same bytes), and is the value the message held;
// - a decoded request's id is the message's first top-level `id`, 1...maxIDLength characters;
// - a refusal has one of the five codes, `too_deep` exactly when the parser says so, `bad_json`
//   with the parser's own message when it finds a syntax error (the decoder compacts `data` on
//   a parsing path of its own, which must agree with the tree parser byte for byte), and an id
//   only when it is the message's valid top-level id (also for `too_deep`, where it was found by
//   the bracket-counting scan);
// - any input the parser accepts survives write-then-parse unchanged, and writing is stable;
//   so does the input itself taken as one string (the writer escapes whatever a String holds);
// - the error reply built from a refusal is itself JSON;
// with the default limits and with tight ones (depth 4, 64-byte data, 8-character ids) so every
// refusal is within reach of small inputs. The HTTP API decoder and the query parser get the
// same bytes, for crashes only.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Fails the run with a readable message (libFuzzer then writes the input to crash-<sha1>).
/// `fatalError` keeps its message in -O builds, unlike `precondition`.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("RequestDecoderFuzzer invariant violated: \(message())")
    }
}

private let tightLimits: ProtocolLimits = {
    var limits = ProtocolLimits()
    limits.maxDepth = 4
    limits.maxDataBytes = 64
    limits.maxIDLength = 8
    return limits
}()

/// Deep enough for any input under run.sh's -max_len to parse when it is well-formed, shallow
/// enough that freeing the parsed value (which recurses per level) fits the stack.
private let referenceDepth = 2048

private func serialized(_ value: JSONValue) -> [UInt8] {
    var bytes: [UInt8] = []
    JSONWriter.append(value, to: &bytes)
    return bytes
}

/// Parse, write, parse again: the same value, and writing it again gives the same bytes.
private func checkRoundTrip(_ value: JSONValue) {
    let written = serialized(value)
    let reparsed: JSONValue
    do {
        reparsed = try JSONParser.parse(written, maxDepth: referenceDepth)
    } catch {
        check(false, "written JSON does not parse (\(error)): \(String(decoding: written, as: UTF8.self))")
        return
    }
    check(reparsed == value, "write then parse changed the value: \(String(decoding: written, as: UTF8.self))")
    check(serialized(reparsed) == written, "writing is not stable for \(String(decoding: written, as: UTF8.self))")
}

private func isValidID(_ id: String, limits: ProtocolLimits) -> Bool {
    let count = id.unicodeScalars.count
    return count >= 1 && count <= limits.maxIDLength
}

private func checkDecode(_ input: UnsafeRawBufferPointer, limits: ProtocolLimits, reference: Result<JSONValue, JSONError>) {
    let topLevelID: String? = {
        guard case .success(let root) = reference, let id = root["id"]?.stringValue, isValidID(id, limits: limits) else {
            return nil
        }
        return id
    }()
    let parsedWithinLimits = Result { () throws(JSONError) -> JSONValue in
        try JSONParser.parse(input, maxDepth: limits.maxDepth)
    }
    let tooDeepForLimits = parsedWithinLimits == .failure(.tooDeep)

    switch RequestDecoder.decode(input, limits: limits) {
    case .success(let request):
        check(!tooDeepForLimits, "decoded a message the parser finds too deep")
        check(request.id == topLevelID, "request id \(request.id) is not the message's id \(String(describing: topLevelID))")
        if case .publish(_, _, let data, _) = request.operation {
            check(data.utf8.count <= limits.maxDataBytes, "data of \(data.utf8.count) bytes passed the limit")
            let dataValue: JSONValue
            do {
                dataValue = try JSONParser.parse(Array(data.utf8), maxDepth: limits.maxDepth)
            } catch {
                check(false, "publish data does not parse (\(error)): \(data)")
                return
            }
            check(serialized(dataValue) == Array(data.utf8), "publish data is not in compact form: \(data)")
            checkRoundTrip(dataValue)
            if case .success(let root) = reference {
                check(root["data"] == dataValue, "publish data differs from the message's data: \(data)")
            }
        }
    case .failure(let error):
        let codes = ["bad_json", "bad_request", "unknown_op", "too_deep", "payload_too_large"]
        check(codes.contains(error.code), "unknown error code \(error.code)")
        check((error.code == "too_deep") == tooDeepForLimits, "code \(error.code), parser too deep: \(tooDeepForLimits)")
        // The decoder writes `data` compactly while parsing, on a path of its own: it must
        // fail on the same byte with the same message as the tree parser.
        if case .failure(.syntax(let problem)) = parsedWithinLimits {
            check(error.code == "bad_json" && error.message == "not valid JSON: \(problem)",
                  "decoder said \(error.code) \(error.message), parser said \(problem)")
        }
        if let id = error.id {
            check(isValidID(id, limits: limits), "error carries an invalid id \(id)")
        }
        // When the whole message is well-formed JSON, the id an error carries is its id (or nil
        // for bad_json and for an invalid or missing id).
        if case .success = reference {
            check(error.id == nil || error.id == topLevelID, "error id \(String(describing: error.id)), message id \(String(describing: topLevelID))")
            if error.code == "too_deep" || error.code == "unknown_op" || error.code == "payload_too_large" {
                check(error.id == topLevelID, "\(error.code) lost the id \(String(describing: topLevelID))")
            }
        }
        let reply = ServerMessage.failure(id: error.id, code: error.code, message: error.message)
        do {
            _ = try JSONParser.parse(reply, maxDepth: 2)
        } catch {
            check(false, "the error reply is not JSON (\(error)): \(String(decoding: reply, as: UTF8.self))")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let reference = Result { () throws(JSONError) -> JSONValue in try JSONParser.parse(input, maxDepth: referenceDepth) }
    if case .success(let value) = reference {
        checkRoundTrip(value)
    }
    checkDecode(input, limits: ProtocolLimits(), reference: reference)
    checkDecode(input, limits: tightLimits, reference: reference)

    // The writer must escape whatever a String holds: the input's bytes as text, with invalid
    // sequences repaired, go through write-then-parse as one string.
    let bytes = Array(input)
    checkRoundTrip(.string(String(decoding: bytes, as: UTF8.self)))

    _ = APIRequestDecoder.publish(bytes, limits: tightLimits)
    _ = APIRequestDecoder.disconnect(bytes, limits: ProtocolLimits())
    _ = APIRequestDecoder.queryItems(String(decoding: bytes, as: UTF8.self))
    return 0
}
