/// One element of a `Sec-WebSocket-Extensions` list (RFC 6455 §9.1): an extension name and
/// its parameters, as the peer wrote them. Names are lowercased here because RFC 6455 compares
/// extension tokens case-insensitively; values keep their case with any quoting removed.
struct WebSocketExtensionElement: Equatable {
    struct Parameter: Equatable {
        var name: String
        /// `nil` when the parameter had no `=value` at all, which is different from `x=""`.
        var value: String?
    }

    var name: String
    var parameters: [Parameter]
}

/// Splits `Sec-WebSocket-Extensions` header values into extension elements.
///
/// Grammar (RFC 6455 §9.1 with RFC 7230 list and whitespace rules):
/// ```
/// extension-list  = 1#extension                 ; commas, empty elements allowed
/// extension       = token *( OWS ";" OWS extension-param )
/// extension-param = token [ OWS "=" OWS ( token / quoted-string ) ]
/// ```
/// A syntax error spoils only the element it is in: the scanner skips to the next comma outside a
/// quoted string and reports `.malformed`, so a server can decline that one offer and still
/// consider the next (RFC 7692 §5: a bad offer is declined, not a reason to fail the handshake),
/// while a client can treat any malformed element as a failed handshake.
enum WebSocketExtensionHeader {
    enum ListItem: Equatable {
        case element(WebSocketExtensionElement)
        case malformed
    }

    /// Every list element of every header value, in order. A header may repeat and each value may
    /// hold several elements; RFC 7230 §3.2.2 makes repeated headers equal to one joined by commas.
    static func parse(_ headerValues: [String]) -> [ListItem] {
        var items: [ListItem] = []
        for value in headerValues {
            var scanner = Scanner(bytes: Array(value.utf8))
            scanner.appendItems(to: &items)
        }
        return items
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// Set when a syntax error happened inside a quoted string, so recovery knows where it is.
        var stoppedInsideQuotedString = false

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func appendItems(to items: inout [ListItem]) {
            while true {
                skipWhitespace()
                guard index < bytes.count else { return }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1  // an empty list element: `#` rule allows and ignores it
                    continue
                }
                if let element = scanElement() {
                    items.append(.element(element))
                } else {
                    items.append(.malformed)
                    skipPastNextListComma(startingInsideQuotedString: stoppedInsideQuotedString)
                    stoppedInsideQuotedString = false
                }
            }
        }

        /// Reads one element and the comma (or end) after it; `nil` on any syntax error.
        private mutating func scanElement() -> WebSocketExtensionElement? {
            guard let name = scanToken() else { return nil }
            var element = WebSocketExtensionElement(name: name, parameters: [])
            skipWhitespace()
            while index < bytes.count, bytes[index] == UInt8(ascii: ";") {
                index += 1
                skipWhitespace()
                guard let parameterName = scanToken() else { return nil }
                skipWhitespace()
                var value: String?
                if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                    index += 1
                    skipWhitespace()
                    guard index < bytes.count else { return nil }
                    value = bytes[index] == UInt8(ascii: "\"") ? scanQuotedString() : scanToken(lowercased: false)
                    guard value != nil else { return nil }
                    skipWhitespace()
                }
                element.parameters.append(.init(name: parameterName, value: value))
            }
            if index < bytes.count {
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
            }
            return element
        }

        private mutating func scanToken(lowercased: Bool = true) -> String? {
            let start = index
            while index < bytes.count, HTTPSyntax.isToken(bytes[index]) { index += 1 }
            guard index > start else { return nil }
            let token = bytes[start..<index]
            if lowercased {
                return String(decoding: token.lazy.map(Self.asciiLowercased), as: UTF8.self)
            }
            return String(decoding: token, as: UTF8.self)
        }

        /// Reads `"..."` with `\`-escapes removed (RFC 7230 §3.2.6); `nil` if unterminated or if it
        /// holds a control character.
        private mutating func scanQuotedString() -> String? {
            index += 1  // opening quote
            stoppedInsideQuotedString = true
            var unescaped: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    stoppedInsideQuotedString = false
                    return String(decoding: unescaped, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count, Self.isQuotedPairCharacter(bytes[index]) else { return nil }
                    unescaped.append(bytes[index])
                    index += 1
                default:
                    guard Self.isQuotedTextCharacter(byte) else { return nil }
                    unescaped.append(byte)
                }
            }
            return nil
        }

        private mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
                index += 1
            }
        }

        /// Recovers from a syntax error: a comma inside a quoted string does not end the element.
        private mutating func skipPastNextListComma(startingInsideQuotedString: Bool) {
            var inQuotes = startingInsideQuotedString
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if inQuotes {
                    if byte == UInt8(ascii: "\\") {
                        index += 1
                    } else if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = true
                } else if byte == UInt8(ascii: ",") {
                    return
                }
            }
        }

        /// `qdtext`: HTAB, SP, visible ASCII except `"` and `\`, and obs-text.
        private static func isQuotedTextCharacter(_ byte: UInt8) -> Bool {
            byte == 0x09 || byte == 0x20 || byte == 0x21 || (0x23...0x5B).contains(byte)
                || (0x5D...0x7E).contains(byte) || byte >= 0x80
        }

        /// The character after `\` in a `quoted-pair`: HTAB, SP, VCHAR, obs-text.
        private static func isQuotedPairCharacter(_ byte: UInt8) -> Bool {
            byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
        }

        private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
        }
    }
}
