/// Incremental UTF-8 validation (RFC 3629) for text messages that arrive in pieces.
///
/// Pieces may split a character anywhere: the automaton's state carries over between calls,
/// so a reader can validate each chunk the moment it is unmasked and fail a connection before
/// the rest of a bad message arrives (Autobahn 6.4.x tests exactly that).
///
/// The automaton is Björn Höhrmann's DFA (http://bjoern.hoehrmann.de/utf-8/decoder/dfa/,
/// MIT licence, © 2008–2009 Björn Höhrmann). It rejects overlong forms, UTF-16 surrogates
/// (U+D800–U+DFFF), code points above U+10FFFF and the obsolete 5- and 6-byte forms. Text on
/// the wire is mostly ASCII, so while the automaton sits between characters it skips ASCII
/// eight bytes at a time and only walks the table for multi-byte sequences.
public struct UTF8Validator: Sendable {
    /// The automaton's state; states are multiples of 12 so they index the transition rows directly.
    private var state: UInt8 = Self.accept

    private static let accept: UInt8 = 0
    private static let reject: UInt8 = 12

    public init() {}

    /// Feeds the next bytes of the text. Returns false at the first byte that cannot continue
    /// valid UTF-8; from then on every call returns false until `reset()`.
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard state != Self.reject else { return false }
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var state = self.state
        var index = 0
        Self.table.withUnsafeBufferPointer { table in
            while index < count {
                if state == Self.accept {
                    // A word with no high bit set is eight ASCII characters: nothing to check.
                    while index &+ 8 <= count,
                        base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                    {
                        index &+= 8
                    }
                    if index == count { break }
                }
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                let characterClass = table[Int(byte)]
                state = table[256 &+ Int(state) &+ Int(characterClass)]
                if state == Self.reject { break }
                index &+= 1
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

    /// Bytes 0–255 map to a character class; then 9 states × 12 classes map to the next state.
    private static let table: [UInt8] = [
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
