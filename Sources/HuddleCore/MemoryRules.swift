/// The value rules of memories and their points (protocol.md, "Memories and photos"). The core
/// owns them, as it owns the username rules: they bound what the durable state may hold,
/// whoever asks. Each check returns nil when the value is fine, otherwise the `bad_request`
/// message naming the field.
enum MemoryRules {
    /// Points in time a point may carry: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z in
    /// milliseconds since the Unix epoch, the years a `date` can name.
    static let times: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    static func titleRefusal(_ title: String) -> String? {
        MemoryLimits.titleLengths.contains(title.unicodeScalars.count)
            ? nil : "title must be \(MemoryLimits.titleLengths.lowerBound) to \(MemoryLimits.titleLengths.upperBound) characters"
    }

    static func placeNameRefusal(_ placeName: String) -> String? {
        placeName.unicodeScalars.count <= MemoryLimits.maxPlaceNameLength
            ? nil : "place_name must be at most \(MemoryLimits.maxPlaceNameLength) characters"
    }

    static func noteRefusal(_ note: String) -> String? {
        note.unicodeScalars.count <= MemoryLimits.maxNoteLength ? nil : "note must be at most \(MemoryLimits.maxNoteLength) characters"
    }

    static func timeRefusal(_ time: Int64) -> String? {
        times.contains(time) ? nil : "time must be milliseconds since 1970 between the years 1 and 9999"
    }

    /// A calendar day written `YYYY-MM-DD` (ISO 8601, Gregorian, years 0001–9999): the day the
    /// user remembers, with no time zone to get wrong. Written so, it also sorts as text.
    static func dateRefusal(_ date: String) -> String? {
        let bytes = Array(date.utf8)
        let message = "date must be a calendar day written YYYY-MM-DD"
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10])
        else { return message }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return message }
        return nil
    }

    /// The hashes of a point's photos: at most `photosPerPoint`, each a SHA-256 in lowercase
    /// hex, none twice. Whether the user owns them is the caller's next check.
    static func photosRefusal(_ photos: [String]) -> String? {
        guard photos.count <= MemoryLimits.photosPerPoint else {
            return "a point holds at most \(MemoryLimits.photosPerPoint) photos"
        }
        for (index, hash) in photos.enumerated() {
            guard PhotoHash.isValid(hash) else { return "photos[\(index)] is not a photo hash (64 lowercase hex digits)" }
        }
        guard Set(photos).count == photos.count else { return "photos lists a photo twice" }
        return nil
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// A photo's name: the SHA-256 of its bytes in lowercase hex, as the server computes it on
/// upload. Checked before a hash reaches the state or a file path.
public enum PhotoHash {
    public static func isValid(_ hash: String) -> Bool {
        hash.utf8.count == 64 && hash.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
