/// Incremental UTF-8 validation (RFC 3629) for text messages that arrive in pieces.
///
/// Pieces may split a character anywhere: the automaton's state carries over between calls,
/// so a reader can validate each chunk the moment it is unmasked and fail a connection before
/// the rest of a bad message arrives (Autobahn 6.4.x tests exactly that).
///
/// The automaton is Björn Höhrmann's DFA (http://bjoern.hoehrmann.de/utf-8/decoder/dfa/,
/// MIT licence, © 2008–2009 Björn Höhrmann). It rejects overlong forms, UTF-16 surrogates
/// (U+D800–U+DFFF), code points above U+10FFFF and the obsolete 5- and 6-byte forms.
///
/// Two things make it fast. Text on the wire is mostly ASCII, so between characters it skips
/// ASCII eight bytes at a time. And the DFA runs in "shift" form: for each byte, the next state
/// of all 9 states is packed into one `UInt64` (6 bits per state, a state being its own shift
/// amount), so a step is one table load that does not depend on the state plus a shift, instead
/// of two dependent loads. The reject state is absorbing, so the automaton runs branch-free over
/// 16 bytes at a time and checks for rejection once per block.
public struct UTF8Validator: Sendable {
    /// The automaton's state, as a shift amount into a `transitions` entry.
    private var state: UInt64 = Self.accept

    private static let accept: UInt64 = 0
    private static let reject: UInt64 = 6

    public init() {}

    /// Feeds the next bytes of the text. Returns false if they cannot continue valid UTF-8;
    /// from then on every call returns false until `reset()`.
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard state != Self.reject else { return false }
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var state = self.state
        var index = 0
        if state == Self.accept {
            // All-ASCII text (most messages) is answered here, eight bytes a step, without
            // touching the table: a global whose every use costs a lazy-initialization check and
            // a retain and release of its storage.
            while index &+ 8 <= count,
                base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index &+= 8
            }
            while index < count, base.load(fromByteOffset: index, as: UInt8.self) < 0x80 {
                index &+= 1
            }
            if index == count { return true }
        }
        Self.transitions.withUnsafeBufferPointer { transitions in
            while index < count {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                if state == Self.accept && byte < 0x80 {
                    // Between characters at an ASCII byte: a word with no high bit set is eight
                    // more ASCII characters, nothing to check.
                    index &+= 1
                    while index &+ 8 <= count,
                        base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                    {
                        index &+= 8
                    }
                    continue
                }
                let blockEnd = min(index &+ 16, count)
                repeat {
                    let byte = base.load(fromByteOffset: index, as: UInt8.self)
                    state = (transitions[Int(byte)] &>> state) & 63
                    index &+= 1
                } while index < blockEnd
                if state == Self.reject { break }
            }
        }
        self.state = state
        return state != Self.reject
    }

    /// False while the bytes fed so far end inside a multi-byte character (or after an invalid
    /// byte): a message that ends here is truncated.
    public var isAtCharacterBoundary: Bool { state == Self.accept }

    /// Starts over, for the next message.
    public mutating func reset() { state = Self.accept }

    /// Höhrmann's table recast in shift form: entry `byte` holds, at bit offset `6 * s`, the
    /// shift amount (6 × state number) of the state that follows state `s` on `byte`.
    private static let transitions: [UInt64] = (0..<256).map { byte in
        let characterClass = Int(hoehrmannTable[byte])
        var entry: UInt64 = 0
        for stateNumber in 0..<9 {
            let next = hoehrmannTable[256 + stateNumber * 12 + characterClass] / 12
            entry |= (UInt64(next) * 6) << UInt64(stateNumber * 6)
        }
        return entry
    }

    /// Höhrmann's original table: bytes 0–255 map to a character class, then 9 states
    /// (numbered ×12) × 12 classes map to the next state. State 0 accepts, state 12 rejects.
    private static let hoehrmannTable: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
        7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        8, 8, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        10, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 3, 3, 11, 6, 6, 6, 5, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,

        0, 12, 24, 36, 60, 96, 84, 12, 12, 12, 48, 72, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
        12, 0, 12, 12, 12, 12, 12, 0, 12, 0, 12, 12, 12, 24, 12, 12, 12, 12, 12, 24, 12, 24, 12, 12,
        12, 12, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12, 12, 12, 12, 24, 12, 12,
        12, 12, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12, 12, 36, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12,
        12, 36, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
    ]
}
