/// Header fields in arrival order. Names keep their original spelling (a proxy or a log may want
/// it) and are matched ASCII-case-insensitively, as RFC 9110 §5.1 requires. A linear scan beats
/// hashing for the dozen fields of a handshake, and keeps duplicates visible: the validator must
/// see a second `Sec-WebSocket-Key` to reject it.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var pairs: [(name: String, value: String)]

    public init(_ pairs: [(String, String)] = []) {
        self.pairs = pairs.map { (name: $0.0, value: $0.1) }
    }

    public var count: Int { pairs.count }

    public mutating func append(name: String, value: String) {
        pairs.append((name: name, value: value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        pairs.makeIterator()
    }

    /// The value of the first field with this name.
    public subscript(first name: String) -> String? {
        pairs.first { asciiCaseInsensitiveEquals($0.name, name) }?.value
    }

    /// The value of every field with this name, in order.
    public func values(_ name: String) -> [String] {
        pairs.compactMap { asciiCaseInsensitiveEquals($0.name, name) ? $0.value : nil }
    }

    /// The comma-separated tokens of every field with this name (RFC 9110 §5.6.1 lists: a field
    /// may repeat or hold several elements), trimmed, empty elements dropped, lowercased — for
    /// case-insensitive tokens such as `Connection` and `Upgrade`.
    public func tokens(_ name: String) -> [String] {
        listElements(name).map { $0.lowercased() }
    }

    /// Like `tokens` but keeping case, for case-sensitive lists (`Sec-WebSocket-Protocol`) and
    /// elements with parameters (`Sec-WebSocket-Extensions`). A comma inside a quoted string
    /// does not split, because extension parameters may be quoted (RFC 6455 §9.1).
    public func listElements(_ name: String) -> [String] {
        var elements: [String] = []
        for value in values(name) {
            splitList(value, into: &elements)
        }
        return elements
    }
}

private func splitList(_ value: String, into elements: inout [String]) {
    let bytes = Array(value.utf8)
    var start = 0
    var inQuotes = false
    var index = 0
    func emit(_ end: Int) {
        var lower = start
        var upper = end
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        if lower < upper {
            elements.append(String(decoding: bytes[lower..<upper], as: UTF8.self))
        }
    }
    while index < bytes.count {
        switch bytes[index] {
        case UInt8(ascii: "\""):
            inQuotes.toggle()
        case UInt8(ascii: "\\") where inQuotes:
            index += 1  // a quoted-pair: the escaped byte cannot end the string
        case UInt8(ascii: ",") where !inQuotes:
            emit(index)
            start = index + 1
        default:
            break
        }
        index += 1
    }
    emit(bytes.count)
}

/// ASCII-only case folding: header names and tokens are ASCII by grammar, and full Unicode
/// folding would both cost more and let non-ASCII look-alikes match.
func asciiCaseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
    var left = a.utf8.makeIterator()
    var right = b.utf8.makeIterator()
    while true {
        switch (left.next(), right.next()) {
        case (nil, nil):
            return true
        case let (x?, y?) where asciiLowercased(x) == asciiLowercased(y):
            continue
        default:
            return false
        }
    }
}

@inline(__always)
func asciiLowercased(_ byte: UInt8) -> UInt8 {
    byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
}

/// A parsed request line and its header fields.
public struct HTTPRequestHead: Sendable {
    public var method: String
    /// The request-target exactly as sent (origin form for a WebSocket upgrade: `/chat?x=1`).
    public var target: String
    public var versionMajor: Int
    public var versionMinor: Int
    public var headers: HTTPHeaders

    public init(method: String, target: String, versionMajor: Int = 1, versionMinor: Int = 1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.headers = headers
    }

    /// The target up to its `?`: what routing looks at.
    public var path: String {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
        return String(target[..<mark])
    }

    /// What follows the `?`, or nil when the target has no `?` at all.
    public var query: String? {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return String(target[target.utf8.index(after: mark)...])
    }
}

/// A parsed status line and its header fields, for the client side of the handshake.
/// The major version is always 1: the parser refuses anything else.
public struct HTTPResponseHead: Sendable {
    public var versionMinor: Int
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders

    public init(versionMinor: Int = 1, status: Int, reason: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.versionMinor = versionMinor
        self.status = status
        self.reason = reason
        self.headers = headers
    }
}
