/// The rules of a start line that can be decided byte by byte — its length (414), the head's
/// size (431), and bytes that can never belong there (400; for a status line also a version
/// other than 1.x, 505) — checked in arrival order, picking up where the previous read ended.
///
/// A line that arrives whole goes through the same scan as one that arrives in pieces, before
/// its full grammar is checked, so the status a line breaking several rules gets is the rule
/// its *first* offending byte breaks, however the reads cut it. When one byte breaks several,
/// the order is fixed: 414, 431, then the byte's grammar. Without this, a line checked when a
/// read ended mid-line and the same line checked whole could get different statuses.
///
/// Only what a prefix of the line decides is checked here; the grammar that needs the whole line
/// (single spaces, the request target, the request's version, the status code) runs when the
/// line ends, and only on a line that passed the scan. Anything the scan refuses the grammar
/// would refuse too, so the scan changes which status a bad line gets, never whether it is bad.
struct HTTPStartLineScan {
    enum Kind {
        case request
        case response
    }

    /// Bytes of the line scanned so far, a line-ending CR included; they are the parser's
    /// carried-over partial line, so the next scan starts after them.
    private(set) var scannedCount = 0
    /// The last byte scanned was a CR. The LF that would end the line there never reaches the
    /// scan, so any next byte makes it a bare CR — which no start line may contain.
    private var lastWasCR = false
    /// Requests: the method's SP has been seen.
    private var passedMethod = false
    /// Responses: the version's major digit, once byte 5 is in.
    private var versionMajor: UInt8 = 0

    /// Checks the next `bytes` of the line, which never include its LF. `headOffset` is how many
    /// bytes of the head precede the line (empty lines before a start line count).
    mutating func scan(
        _ bytes: UnsafeRawBufferPointer, as kind: Kind, headOffset: Int, limits: HTTPHeadParser.Limits
    ) throws(HTTPParseError) {
        // No byte before this position can break a limit, so the common short line skips those
        // checks.
        let firstLimitedPosition = min(limits.maxRequestLineLength, limits.maxHeadSize - headOffset)
        var position = scannedCount
        for byte in bytes {
            if position >= firstLimitedPosition {
                try checkLimits(byte, at: position, as: kind, headOffset: headOffset, limits: limits)
            }
            if lastWasCR {
                throw .badRequest(kind == .request ? "malformed request line" : "malformed status line")
            }
            if byte == HTTPSyntax.cr {
                lastWasCR = true
            } else {
                switch kind {
                case .request: try checkRequestLineByte(byte)
                case .response: try checkStatusLineByte(byte, at: position)
                }
            }
            position += 1
        }
        scannedCount = position
    }

    private func checkLimits(
        _ byte: UInt8, at position: Int, as kind: Kind, headOffset: Int, limits: HTTPHeadParser.Limits
    ) throws(HTTPParseError) {
        // A CR right after the longest allowed line may be the first half of its line end; it
        // makes the line too long only when a byte other than LF follows, and that byte (at a
        // position past the limit) is then the one refused.
        let tooLong = byte == HTTPSyntax.cr ? position > limits.maxRequestLineLength : position >= limits.maxRequestLineLength
        if tooLong {
            throw HTTPParseError(status: 414, reason: kind == .request ? "request line too long" : "status line too long")
        }
        if headOffset + position >= limits.maxHeadSize {
            throw HTTPParseError(status: 431, reason: "head too large")
        }
    }

    /// A method is a token up to the first SP; after it no control byte may come. This is what
    /// turns a TLS ClientHello on the plain port into a 400 at its first byte.
    private mutating func checkRequestLineByte(_ byte: UInt8) throws(HTTPParseError) {
        if !passedMethod {
            if byte == HTTPSyntax.sp {
                passedMethod = true
            } else if !HTTPSyntax.isToken(byte) {
                throw .badRequest("malformed request line")
            }
        } else if HTTPSyntax.isControl(byte) {
            throw .badRequest("malformed request line")
        }
    }

    /// `HTTP/DIGIT.DIGIT` in the first 8 bytes, refused as 505 as soon as it is complete and not
    /// 1.x; after it no control byte but HTAB (a reason phrase may hold one).
    private mutating func checkStatusLineByte(_ byte: UInt8, at position: Int) throws(HTTPParseError) {
        guard position < 8 else {
            if HTTPSyntax.isControl(byte) && byte != HTTPSyntax.htab {
                throw .badRequest("malformed status line")
            }
            return
        }
        let expected: Bool
        switch position {
        case 0: expected = byte == UInt8(ascii: "H")
        case 1, 2: expected = byte == UInt8(ascii: "T")
        case 3: expected = byte == UInt8(ascii: "P")
        case 4: expected = byte == UInt8(ascii: "/")
        case 6: expected = byte == UInt8(ascii: ".")
        default: expected = HTTPSyntax.isDigit(byte)
        }
        guard expected else { throw .badRequest("malformed HTTP version") }
        if position == 5 {
            versionMajor = byte
        } else if position == 7 && versionMajor != UInt8(ascii: "1") {
            throw HTTPParseError(status: 505, reason: "HTTP version not supported")
        }
    }
}
