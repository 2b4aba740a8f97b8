/// JSON compares strings by code units, not by Unicode canonical equivalence. Strings with the
/// same code units are always `==`, and `==` is fast for short keys, so it rules out almost
/// every mismatch; a match is confirmed on the contiguous UTF-8, in case the two are
/// canonically equivalent but different text. (Iterating `String.UTF8View`s with
/// `elementsEqual` costs about ten times as much.)
@inline(__always)
func sameCodeUnits(_ a: String, _ b: String) -> Bool {
    guard a.utf8.count == b.utf8.count, a == b else { return false }
    let contiguous = a.utf8.withContiguousStorageIfAvailable { aBytes in
        b.utf8.withContiguousStorageIfAvailable { bBytes in
            aBytes.count == 0 || aBytes.baseAddress == bBytes.baseAddress
                || UnsafeRawBufferPointer(aBytes).elementsEqual(UnsafeRawBufferPointer(bBytes))
        }
    }
    return (contiguous ?? nil) ?? a.utf8.elementsEqual(b.utf8)
}

/// Whether `string` is exactly the bytes of `name` (one of the protocol's field names): a byte
/// comparison, with no `==` and no `String` built for the name.
@inline(__always)
func hasCodeUnits(_ string: String, of name: StaticString) -> Bool {
    let count = name.utf8CodeUnitCount
    guard string.utf8.count == count else { return false }
    let nameBytes = UnsafeBufferPointer(start: name.utf8Start, count: count)
    return string.utf8.withContiguousStorageIfAvailable { bytes in
        for offset in 0..<count where bytes[offset] != nameBytes[offset] {
            return false
        }
        return true
    } ?? string.utf8.elementsEqual(nameBytes)
}
