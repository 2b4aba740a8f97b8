/// What a key did to the line being typed.
enum EditorAction: Equatable {
    /// The text or the cursor moved: redraw the input line.
    case changed
    /// Enter: the line, and the input line is empty again.
    case submit(String)
    /// Ctrl-C.
    case interrupt
    /// Ctrl-D on an empty line.
    case endOfInput
}

/// The input line of the interactive client: a minimal line editor fed the raw bytes of a
/// terminal in raw mode. Printable characters (UTF-8), backspace and delete, left/right,
/// home/end (arrows, Ctrl-A/E/B/F), Ctrl-U/K/W, Enter, Ctrl-C, Ctrl-D. Other escape sequences
/// (up, function keys) are consumed whole and ignored, so they never land in the text.
///
/// A value with no I/O: the terminal display feeds it and draws `render`.
struct LineEditor {
    private(set) var text: [Character] = []
    private(set) var cursor = 0
    /// The bytes of a UTF-8 sequence not complete yet (input arrives in arbitrary chunks).
    private var partialCharacter: [UInt8] = []
    private var escape = EscapeState.none
    /// Enter sent as CR LF counts once.
    private var lastWasCarriageReturn = false

    /// A line is long enough at this length; further characters are ignored.
    static let maxLength = 4_000

    private enum EscapeState: Equatable {
        case none
        case escape
        /// ESC [ …: parameters so far.
        case controlSequence(String)
        /// ESC O x (keypad keys in application mode).
        case singleShift
    }

    var line: String { String(text) }
    var isEmpty: Bool { text.isEmpty }

    mutating func feed(_ bytes: [UInt8]) -> [EditorAction] {
        var actions: [EditorAction] = []
        for byte in bytes {
            if let action = feed(byte) { actions.append(action) }
        }
        return actions
    }

    private mutating func feed(_ byte: UInt8) -> EditorAction? {
        defer { lastWasCarriageReturn = byte == 0x0D }
        switch escape {
        case .none:
            break
        case .escape:
            switch byte {
            case UInt8(ascii: "["): escape = .controlSequence("")
            case UInt8(ascii: "O"): escape = .singleShift
            default: escape = .none  // Alt+key: ignored
            }
            return nil
        case .controlSequence(let parameters):
            switch byte {
            case 0x20...0x3F:
                escape = parameters.count < 16 ? .controlSequence(parameters + String(UnicodeScalar(byte))) : .none
                return nil
            case 0x40...0x7E:
                escape = .none
                return controlSequence(parameters, final: byte)
            default:
                escape = .none
                return nil
            }
        case .singleShift:
            escape = .none
            return controlSequence("", final: byte)
        }

        switch byte {
        case 0x1B:
            escape = .escape
            return nil
        case 0x03:
            return .interrupt
        case 0x04:
            if text.isEmpty { return .endOfInput }
            return deleteForward()
        case 0x0D, 0x0A:
            if byte == 0x0A && lastWasCarriageReturn { return nil }
            let submitted = line
            text = []
            cursor = 0
            return .submit(submitted)
        case 0x7F, 0x08:
            guard cursor > 0 else { return nil }
            cursor -= 1
            text.remove(at: cursor)
            return .changed
        case 0x01: return move(to: 0)
        case 0x05: return move(to: text.count)
        case 0x02: return move(to: cursor - 1)
        case 0x06: return move(to: cursor + 1)
        case 0x15:
            guard cursor > 0 else { return nil }
            text.removeSubrange(0..<cursor)
            cursor = 0
            return .changed
        case 0x0B:
            guard cursor < text.count else { return nil }
            text.removeSubrange(cursor...)
            return .changed
        case 0x17:
            return deleteWordBackward()
        case 0x00..<0x20:
            return nil
        default:
            return insert(byte)
        }
    }

    private mutating func controlSequence(_ parameters: String, final: UInt8) -> EditorAction? {
        switch (parameters, final) {
        case (_, UInt8(ascii: "C")): return move(to: cursor + 1)
        case (_, UInt8(ascii: "D")): return move(to: cursor - 1)
        case (_, UInt8(ascii: "H")), ("1", UInt8(ascii: "~")), ("7", UInt8(ascii: "~")): return move(to: 0)
        case (_, UInt8(ascii: "F")), ("4", UInt8(ascii: "~")), ("8", UInt8(ascii: "~")): return move(to: text.count)
        case ("3", UInt8(ascii: "~")): return deleteForward()
        default: return nil
        }
    }

    private mutating func move(to position: Int) -> EditorAction? {
        let clamped = min(max(position, 0), text.count)
        guard clamped != cursor else { return nil }
        cursor = clamped
        return .changed
    }

    private mutating func deleteForward() -> EditorAction? {
        guard cursor < text.count else { return nil }
        text.remove(at: cursor)
        return .changed
    }

    private mutating func deleteWordBackward() -> EditorAction? {
        guard cursor > 0 else { return nil }
        var start = cursor
        while start > 0 && text[start - 1] == " " { start -= 1 }
        while start > 0 && text[start - 1] != " " { start -= 1 }
        text.removeSubrange(start..<cursor)
        cursor = start
        return .changed
    }

    /// A byte of printable text: ASCII at once, UTF-8 once its sequence is complete.
    private mutating func insert(_ byte: UInt8) -> EditorAction? {
        partialCharacter.append(byte)
        let expected: Int
        switch partialCharacter[0] {
        case 0x00..<0x80: expected = 1
        case 0xC2..<0xE0: expected = 2
        case 0xE0..<0xF0: expected = 3
        case 0xF0..<0xF5: expected = 4
        default:
            partialCharacter = []  // not a lead byte: dropped
            return nil
        }
        if partialCharacter.count > 1 && byte & 0xC0 != 0x80 {
            // A broken sequence: start over with this byte if it leads one.
            partialCharacter = []
            return byte < 0x80 || byte >= 0xC2 ? insert(byte) : nil
        }
        guard partialCharacter.count == expected else { return nil }
        let decoded = String(decoding: partialCharacter, as: UTF8.self)
        partialCharacter = []
        guard text.count < Self.maxLength, !decoded.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return nil
        }
        text.insert(contentsOf: Array(decoded), at: cursor)
        cursor += decoded.count
        return .changed
    }

    /// The input line as the terminal shows it: `prompt`, then as much of the text as fits in
    /// `columns` (scrolled so the cursor stays visible), then the cursor moved back to its place.
    /// Every character counts as one column.
    func render(prompt: String, columns: Int) -> String {
        let room = max(columns - prompt.count - 1, 8)
        var start = 0
        if text.count > room { start = max(0, min(cursor - room + 1, text.count - room)) }
        if cursor < start { start = cursor }
        let end = min(text.count, start + room)
        let back = end - cursor
        return prompt + String(text[start..<end]) + (back > 0 ? "\u{1B}[\(back)D" : "")
    }
}
