/// The bytes and byte classes of HTTP/1.1's grammar (RFC 9110 §5.5–5.6, RFC 9112), shared by
/// `HTTPHeadParser`, `HTTPStartLineScan` and the extension-header parser.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let sp: UInt8 = 0x20
    static let htab: UInt8 = 0x09

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    @inline(__always)
    static func isControl(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F
    }

    /// field-vchar, SP and HTAB; obs-text (0x80–0xFF) is let through as RFC 9110 §5.5 permits,
    /// and becomes U+FFFD in the String when it is not UTF-8.
    @inline(__always)
    static func isFieldValue(_ byte: UInt8) -> Bool {
        byte == htab || !isControl(byte)
    }

    /// tchar (RFC 9110 §5.6.2): the characters of methods and header names.
    @inline(__always)
    static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
