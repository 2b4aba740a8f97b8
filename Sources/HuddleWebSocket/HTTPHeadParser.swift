#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental HTTP/1.1 head parser (RFC 9112 §2–5) for the upgrade handshake and the
/// server's few plain endpoints. It reads the start line and header fields, never a body.
///
/// Bytes arrive from a hostile socket in arbitrary splits, so:
/// - each byte is searched for a line end once (`memchr` over the new bytes only), which keeps a
///   one-byte-at-a-time sender linear rather than quadratic;
/// - a head that arrives in one read is parsed in place, without copying; only a line that
///   straddles two reads is carried over, and that carry-over is freed when the head completes;
/// - every limit is enforced on what has arrived, before a line ends: a long request line is
///   414 and an oversized head 431 while the peer is still sending, so nothing grows unbounded;
/// - control bytes in the start line fail at once, so a TLS ClientHello on the plain port or
///   binary garbage is 400 after its first byte, not after 8 KiB;
/// - the start line is checked byte by byte in arrival order (`HTTPStartLineScan`), whether it
///   arrives whole or in pieces, so a line breaking several rules gets the same status however
///   the reads are cut.
///
/// Deliberately strict where leniency enables request smuggling or header injection: obsolete
/// line folding, whitespace before the colon, a bare CR, and control characters are all 400.
/// Lenient where RFC 9112 allows it: bare LF line ends, empty lines before the request line.
///
/// After a head completes the parser is reset and can read the next one (keep-alive on plain
/// endpoints). After an error it keeps throwing that error: the connection must be closed.
/// One parser reads either requests or responses, never both.
public struct HTTPHeadParser {
    public struct Limits: Sendable {
        /// The longest request line (without its line end) before the answer is 414.
        public var maxRequestLineLength: Int
        /// The most header fields before the answer is 431.
        public var maxHeaderCount: Int
        /// The most bytes of the whole head, line ends included, before the answer is 431.
        public var maxHeadSize: Int

        public init(maxRequestLineLength: Int = 8192, maxHeaderCount: Int = 100, maxHeadSize: Int = 8192) {
            self.maxRequestLineLength = maxRequestLineLength
            self.maxHeaderCount = maxHeaderCount
            self.maxHeadSize = maxHeadSize
        }
    }

    private enum StartLine {
        case request(method: String, target: String, versionMajor: Int, versionMinor: Int)
        case response(versionMinor: Int, status: Int, reason: String)
    }

    private typealias Kind = HTTPStartLineScan.Kind

    private let limits: Limits
    /// The start of a line whose end has not arrived yet; empty whenever a read ended on a line end.
    private var partialLine: [UInt8] = []
    /// Bytes of the head in lines already parsed, line ends included.
    private var completedSize = 0
    private var startLine: StartLine?
    /// Where the checks of the current start line (or empty line before it) stand; its
    /// `scannedCount` is `partialLine.count` while no start line has been parsed.
    private var startLineScan = HTTPStartLineScan()
    private var headers = HTTPHeaders()
    private var failure: HTTPParseError?

    public init(limits: Limits = .init()) {
        self.limits = limits
    }

    /// Feeds the next bytes of a request. Returns nil while the head is incomplete (every byte
    /// was taken); once it completes, the head and how many of *these* bytes belonged to it —
    /// the rest is the peer's next layer (frames, a body) and is the caller's.
    public mutating func parseRequest(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> (head: HTTPRequestHead, consumed: Int)? {
        guard let (start, headers, consumed) = try parse(bytes, as: .request) else { return nil }
        guard case let .request(method, target, major, minor) = start else {
            preconditionFailure("one HTTPHeadParser fed both requests and responses")
        }
        let head = HTTPRequestHead(method: method, target: target, versionMajor: major, versionMinor: minor, headers: headers)
        return (head, consumed)
    }

    /// Feeds the next bytes of a response; the same contract as `parseRequest`. The status line
    /// counts against `maxRequestLineLength`, and its errors carry the same statuses, which on
    /// the client side only classify the defect.
    public mutating func parseResponse(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> (head: HTTPResponseHead, consumed: Int)? {
        guard let (start, headers, consumed) = try parse(bytes, as: .response) else { return nil }
        guard case let .response(minor, status, reason) = start else {
            preconditionFailure("one HTTPHeadParser fed both requests and responses")
        }
        let head = HTTPResponseHead(versionMinor: minor, status: status, reason: reason, headers: headers)
        return (head, consumed)
    }

    private mutating func parse(_ bytes: UnsafeRawBufferPointer, as kind: Kind) throws(HTTPParseError) -> (StartLine, HTTPHeaders, Int)? {
        if let failure { throw failure }
        do throws(HTTPParseError) {
            return try consume(bytes, as: kind)
        } catch {
            failure = error
            partialLine = []
            startLineScan = HTTPStartLineScan()
            headers = HTTPHeaders()
            throw error
        }
    }

    private mutating func consume(_ bytes: UnsafeRawBufferPointer, as kind: Kind) throws(HTTPParseError) -> (StartLine, HTTPHeaders, Int)? {
        guard let base = bytes.baseAddress else { return nil }
        var index = 0
        while index < bytes.count {
            guard let found = memchr(base + index, 0x0A, bytes.count - index) else {
                try absorbPartialLine(UnsafeRawBufferPointer(rebasing: bytes[index...]), as: kind)
                return nil
            }
            let lineFeed = base.distance(to: UnsafeRawPointer(found))
            let piece = UnsafeRawBufferPointer(rebasing: bytes[index..<lineFeed])
            index = lineFeed + 1
            let headEnded: Bool
            if partialLine.isEmpty {
                headEnded = try completeLine(piece, as: kind)
            } else {
                // Moved out so that parsing (which mutates self) does not overlap an access to it.
                var line: [UInt8] = []
                swap(&line, &partialLine)
                line.append(contentsOf: piece)
                // Array.withUnsafeBytes rethrows untyped errors; Result carries the typed one out.
                headEnded = try line.withUnsafeBytes { whole in
                    Result { () throws(HTTPParseError) -> Bool in try completeLine(whole, as: kind) }
                }.get()
            }
            if headEnded, let start = startLine {
                let result = (start, headers, index)
                startLine = nil
                headers = HTTPHeaders()
                completedSize = 0
                return result
            }
        }
        return nil
    }

    /// Keeps the start of an unfinished line, enforcing the limits on it now rather than when
    /// (if ever) its line end arrives.
    private mutating func absorbPartialLine(_ piece: UnsafeRawBufferPointer, as kind: Kind) throws(HTTPParseError) {
        if startLine == nil {
            try startLineScan.scan(piece, as: kind, headOffset: completedSize, limits: limits)
        } else if completedSize + partialLine.count + piece.count > limits.maxHeadSize {
            // A header line has no rule that a prefix decides other than this one.
            throw HTTPParseError(status: 431, reason: "head too large")
        }
        partialLine.append(contentsOf: piece)
    }

    /// Parses one line (without its LF); returns whether it was the empty line ending the head.
    private mutating func completeLine(_ rawLine: UnsafeRawBufferPointer, as kind: Kind) throws(HTTPParseError) -> Bool {
        if startLine == nil {
            // The bytes not scanned yet: all of a line that arrived whole, the last piece of one
            // that was carried over. The scan enforces the line limit and, up to the LF, the head
            // limit.
            let unscanned = UnsafeRawBufferPointer(rebasing: rawLine[startLineScan.scannedCount...])
            try startLineScan.scan(unscanned, as: kind, headOffset: completedSize, limits: limits)
        }
        let length = rawLine.last == HTTPSyntax.cr ? rawLine.count - 1 : rawLine.count
        let line = UnsafeRawBufferPointer(rebasing: rawLine[0..<length])
        completedSize += rawLine.count + 1
        if completedSize > limits.maxHeadSize {
            throw HTTPParseError(status: 431, reason: "head too large")
        }
        guard startLine != nil else {
            startLineScan = HTTPStartLineScan()
            // RFC 9112 §2.2: an empty line before the start line is ignored (some clients send a
            // stray CRLF after a previous body). They still count against the head size.
            if length > 0 {
                startLine = try kind == .request ? parseRequestLine(line) : parseStatusLine(line)
            }
            return false
        }
        if length == 0 { return true }
        try parseHeaderLine(line)
        return false
    }

    /// `method SP request-target SP HTTP-version` (RFC 9112 §3), single spaces only.
    private func parseRequestLine(_ line: UnsafeRawBufferPointer) throws(HTTPParseError) -> StartLine {
        guard let methodEnd = line.firstIndex(of: HTTPSyntax.sp), methodEnd > 0,
              line[0..<methodEnd].allSatisfy(HTTPSyntax.isToken)
        else { throw .badRequest("malformed request line") }
        let targetStart = methodEnd + 1
        guard let targetEnd = line[targetStart...].firstIndex(of: HTTPSyntax.sp), targetEnd > targetStart,
              line[targetStart..<targetEnd].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw .badRequest("malformed request target") }
        let (major, minor) = try parseVersion(UnsafeRawBufferPointer(rebasing: line[(targetEnd + 1)...]))
        return .request(
            method: String(decoding: line[0..<methodEnd], as: UTF8.self),
            target: String(decoding: line[targetStart..<targetEnd], as: UTF8.self),
            versionMajor: major,
            versionMinor: minor
        )
    }

    /// `HTTP-version SP 3DIGIT SP [reason-phrase]` (RFC 9112 §4). A missing space after the code
    /// is tolerated: some servers omit it together with an empty reason. The scan has already
    /// refused any version but 1.x, as soon as its 8 bytes were in.
    private func parseStatusLine(_ line: UnsafeRawBufferPointer) throws(HTTPParseError) -> StartLine {
        guard line.count >= 12, line[8] == HTTPSyntax.sp else { throw .badRequest("malformed status line") }
        let (_, minor) = try parseVersion(UnsafeRawBufferPointer(rebasing: line[0..<8]))
        var status = 0
        for byte in line[9..<12] {
            guard HTTPSyntax.isDigit(byte) else { throw .badRequest("malformed status code") }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard status >= 100 else { throw .badRequest("malformed status code") }
        var reason = ""
        if line.count > 12 {
            guard line[12] == HTTPSyntax.sp, line[13...].allSatisfy(HTTPSyntax.isFieldValue) else {
                throw .badRequest("malformed status line")
            }
            reason = String(decoding: line[13...], as: UTF8.self)
        }
        return .response(versionMinor: minor, status: status, reason: reason)
    }

    /// `HTTP/DIGIT.DIGIT`, case-sensitive (RFC 9112 §2.3). This parser speaks only HTTP/1.x:
    /// any other major version (an HTTP/2 preface, HTTP/0.9 claims) is 505.
    private func parseVersion(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> (Int, Int) {
        guard bytes.count == 8, bytes.starts(with: "HTTP/".utf8),
              HTTPSyntax.isDigit(bytes[5]), bytes[6] == UInt8(ascii: "."), HTTPSyntax.isDigit(bytes[7])
        else { throw .badRequest("malformed HTTP version") }
        let major = Int(bytes[5] - UInt8(ascii: "0"))
        guard major == 1 else { throw HTTPParseError(status: 505, reason: "HTTP version not supported") }
        return (major, Int(bytes[7] - UInt8(ascii: "0")))
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5).
    private mutating func parseHeaderLine(_ line: UnsafeRawBufferPointer) throws(HTTPParseError) {
        if line[0] == HTTPSyntax.sp || line[0] == HTTPSyntax.htab {
            // RFC 9112 §5.2: obs-fold may be rejected; joining lines is how smuggling starts.
            throw .badRequest("obsolete line folding")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
              line[0..<colon].allSatisfy(HTTPSyntax.isToken)
        else { throw .badRequest("malformed header field name") }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == HTTPSyntax.sp || line[valueStart] == HTTPSyntax.htab { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == HTTPSyntax.sp || line[valueEnd - 1] == HTTPSyntax.htab { valueEnd -= 1 }
        guard line[valueStart..<valueEnd].allSatisfy(HTTPSyntax.isFieldValue) else {
            throw .badRequest("invalid character in header field value")
        }
        guard headers.count < limits.maxHeaderCount else {
            throw HTTPParseError(status: 431, reason: "too many header fields")
        }
        headers.append(
            name: String(decoding: line[0..<colon], as: UTF8.self),
            value: String(decoding: line[valueStart..<valueEnd], as: UTF8.self)
        )
    }
}
