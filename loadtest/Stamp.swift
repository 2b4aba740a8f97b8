import HuddleProtocol

/// What every test message carries: its publisher, its number in that publisher's stream, and
/// when it was meant to leave (monotonic nanoseconds, the harness's own clock: only the harness
/// reads it back). Enough to check order and completeness and to time the delivery.
struct Stamp: Equatable, Sendable {
    var publisher: Int
    var sequence: Int
    var intended: UInt64

    // MARK: In a Huddle publication's `data`

    /// `{"p": 3, "s": 41, "t": 1234567, "x": "xxxx…"}`: the padding makes the message as big as asked.
    func json(padding: String) -> JSONValue {
        .object([("p", .integer(publisher)), ("s", .integer(sequence)), ("t", .integer(intended)), ("x", .string(padding))])
    }

    init(publisher: Int, sequence: Int, intended: UInt64) {
        self.publisher = publisher
        self.sequence = sequence
        self.intended = intended
    }

    init?(json data: JSONValue) {
        guard let publisher = data["p"]?.int64Value, let sequence = data["s"]?.int64Value, let intended = data["t"]?.uint64Value,
              publisher >= 0, sequence >= 0
        else { return nil }
        self.init(publisher: Int(publisher), sequence: Int(sequence), intended: intended)
    }

    // MARK: As a raw text message (echo and broadcast endpoints of any server)

    /// `"3 41 1234567 xxxx…"`, padded with `x` to `size` bytes (longer when the numbers need it).
    func text(size: Int) -> [UInt8] {
        var bytes = Array("\(publisher) \(sequence) \(intended) ".utf8)
        if bytes.count < size { bytes.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: size - bytes.count)) }
        return bytes
    }

    /// Parses the three numbers `text(size:)` wrote; nil for anything else (another client's
    /// messages on a shared broadcast endpoint).
    init?(text bytes: [UInt8]) {
        var numbers: [UInt64] = []
        var value: UInt64 = 0
        var digits = 0
        for byte in bytes {
            if byte == UInt8(ascii: " ") {
                guard digits > 0 else { return nil }
                numbers.append(value)
                if numbers.count == 3 { break }
                value = 0
                digits = 0
            } else {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10, digits < 19 else { return nil }
                value = value * 10 + UInt64(digit)
                digits += 1
            }
        }
        guard numbers.count == 3, numbers[0] <= UInt64(Int.max), numbers[1] <= UInt64(Int.max) else { return nil }
        self.init(publisher: Int(numbers[0]), sequence: Int(numbers[1]), intended: numbers[2])
    }
}
