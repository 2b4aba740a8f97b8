/// Builds a `[UInt8]` by letting a codec write straight into the array's uninitialized capacity,
/// so the common case — the output fits the first guess — costs one allocation and no copy.
/// When the codec needs more room, a buffer twice the size (capped at `maximumCount`) takes over
/// the bytes written so far; only that rare path copies.
enum GrowingByteArray {
    /// What one `fill` call did. `finished == false` promises the space it was given is full.
    struct Progress {
        var written: Int
        var finished: Bool
    }

    /// - Parameters:
    ///   - initialCapacity: the first guess; clamped to 1...maximumCount.
    ///   - maximumCount: the array never grows past this many bytes.
    ///   - fill: writes into the free space it is given (from its start) and reports progress.
    /// - Returns: the bytes written, or `nil` when `maximumCount` bytes were written and `fill`
    ///   still wanted room.
    static func build(
        initialCapacity: Int,
        maximumCount: Int,
        fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Progress
    ) rethrows -> [UInt8]? {
        var capacity = min(max(initialCapacity, 1), maximumCount)
        var bytes: [UInt8] = []
        while true {
            var finished = false
            let previous = bytes
            bytes = try [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initializedCount in
                let carried = previous.count
                if carried > 0 {
                    previous.withUnsafeBufferPointer { old in
                        buffer.baseAddress!.initialize(from: old.baseAddress!, count: carried)
                    }
                }
                initializedCount = carried
                let progress = try fill(UnsafeMutableBufferPointer(rebasing: buffer[carried..<capacity]))
                initializedCount = carried + progress.written
                finished = progress.finished
            }
            if finished { return bytes }
            if capacity >= maximumCount { return nil }
            capacity = capacity > maximumCount / 2 ? maximumCount : capacity * 2
        }
    }
}
