/// Reads a request's arguments (the members of its top-level object) with the protocol's type
/// rules, failing with a `bad_request` that names the field.
///
/// A required argument must be there with its type (`null` is the wrong type). An optional
/// argument that is `null` counts as absent: clients commonly serialize a missing
/// optional as null, and `history`'s own `next_before` is null on the last page.
struct RequestArguments {
    let members: [(String, JSONValue)]
    /// Carried into every error, so the reply can be matched to its request.
    let id: String?

    /// The first member named `name`, as `JSONValue`'s subscript finds it. Names are the
    /// protocol's ASCII field names, compared byte for byte with each key: a `String`
    /// comparison per member used to be most of a request's lookup cost.
    func value(_ name: StaticString) -> JSONValue? {
        for (key, value) in members where hasCodeUnits(key, of: name) {
            return value
        }
        return nil
    }

    func string(_ name: StaticString) throws(RequestError) -> String {
        guard let value = value(name) else { throw badRequest("\(name) is required") }
        guard case .string(let string) = value else { throw badRequest("\(name) must be a string") }
        return string
    }

    func optionalString(_ name: StaticString) throws(RequestError) -> String? {
        guard let value = value(name), value != .null else { return nil }
        guard case .string(let string) = value else { throw badRequest("\(name) must be a string") }
        return string
    }

    func optionalBool(_ name: StaticString) throws(RequestError) -> Bool? {
        guard let value = value(name), value != .null else { return nil }
        guard case .bool(let bool) = value else { throw badRequest("\(name) must be true or false") }
        return bool
    }

    /// The optional `device` label of signup and login: at most 64 characters.
    func device() throws(RequestError) -> String? {
        guard let device = try optionalString("device") else { return nil }
        guard RequestArguments.hasLength(device, in: 0...64) else {
            throw badRequest("device must be at most 64 characters")
        }
        return device
    }

    /// A publication's `type`: `[a-z0-9_.]{1,32}`, default "message".
    func publicationType() throws(RequestError) -> String {
        guard let type = try optionalString("type") else { return RequestDefaults.publicationType }
        guard Self.isPublicationType(type) else {
            throw badRequest("type must be 1 to 32 characters from a-z, 0-9, '_' and '.'")
        }
        return type
    }

    /// Whether `type` is a publication type: `[a-z0-9_.]{1,32}`.
    static func isPublicationType(_ type: String) -> Bool {
        let utf8 = type.utf8
        let isAllowed = { (byte: UInt8) -> Bool in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        let allowed = utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isAllowed) } ?? utf8.allSatisfy(isAllowed)
        return (1...32).contains(utf8.count) && allowed
    }

    /// A publication's `data`: any JSON value, required (`null` is a value here), returned in
    /// compact form and no longer than `maxBytes`.
    func publicationData(maxBytes: Int) throws(RequestError) -> String {
        guard let data = value("data") else { throw badRequest("data is required") }
        let serialized: String
        if case .raw(let compacted) = data {
            // Already written while parsing (`RequestDecoder.parseObject`).
            serialized = compacted
        } else {
            serialized = JSONWriter.serialize(data)
        }
        let size = serialized.utf8.count
        guard size <= maxBytes else {
            throw RequestError(
                id: id, code: RequestErrorCode.payloadTooLarge,
                message: "data is \(size) bytes serialized, over the limit of \(maxBytes)")
        }
        return serialized
    }

    func badRequest(_ message: String) -> RequestError {
        RequestError(id: id, code: RequestErrorCode.badRequest, message: message)
    }

    /// Whether `string` has a length in `range`, counted in Unicode scalars (what protocol.md's
    /// "characters" means here; it bounds the bytes to four per character). Counting is skipped
    /// when the byte count alone decides.
    static func hasLength(_ string: String, in range: ClosedRange<Int>) -> Bool {
        let byteCount = string.utf8.count
        if byteCount < range.lowerBound || byteCount > range.upperBound &* 4 { return false }
        // A scalar is one to four bytes.
        if byteCount <= range.upperBound && (byteCount &+ 3) / 4 >= range.lowerBound { return true }
        return range.contains(string.unicodeScalars.count)
    }
}
