/// The first record of a segment that failed its checks, and how.
struct SegmentDamage: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// Fewer than 16 bytes left: a record header cut short.
        case partialHeader(available: Int)
        /// The payload runs past the end of the file.
        case partialPayload(length: Int, available: Int)
        /// A length no writer produces: garbage where a header should be.
        case oversizedLength(Int)
        /// The bytes are all there but do not match their CRC.
        case checksumMismatch
        /// A record that passes its CRC but carries the wrong sequence: the log was assembled
        /// wrongly (files swapped, copied, edited), never a write cut short.
        case unexpectedSequence(found: UInt64, expected: UInt64)
    }

    var offset: Int
    var kind: Kind

    /// Whether an interrupted write could have left this. Only such damage may be cut off, and only
    /// at the very end of the log.
    var couldBeTornWrite: Bool {
        if case .unexpectedSequence = kind { return false }
        return true
    }

    var reason: String {
        switch kind {
        case .partialHeader(let available):
            return "incomplete record header (\(available) of \(LogFormat.recordHeaderSize) bytes)"
        case .partialPayload(let length, let available):
            return "incomplete record (payload of \(length) bytes, \(available) present)"
        case .oversizedLength(let length):
            return "record length \(length) exceeds the \(LogFormat.maximumRecordPayload)-byte limit"
        case .checksumMismatch:
            return "record checksum mismatch"
        case .unexpectedSequence(let found, let expected):
            return "record has sequence \(found), expected \(expected)"
        }
    }
}
