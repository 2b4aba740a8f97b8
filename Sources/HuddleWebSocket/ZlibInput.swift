import CHuddleShims

/// Bytes handed to a zlib stream in pieces its 32-bit `avail_in` can describe, optionally followed
/// by a second buffer (the inflater's restored 00 00 ff ff tail) without joining them into a copy.
/// Two fields rather than an array of pieces: no allocation per message.
struct ZlibInput {
    private var current: UnsafeBufferPointer<UInt8>
    private var following: UnsafeBufferPointer<UInt8>?

    init(_ bytes: UnsafeBufferPointer<UInt8>, then tail: UnsafeBufferPointer<UInt8>? = nil) {
        current = bytes
        following = tail
    }

    /// Whether every byte has been handed to zlib (it may not have consumed them yet).
    var isHandedOver: Bool { current.isEmpty && (following?.isEmpty ?? true) }

    /// Points `stream` at the next bytes; `false` when everything has been handed over.
    @discardableResult
    mutating func feedNext(into stream: UnsafeMutablePointer<z_stream>) -> Bool {
        while current.isEmpty {
            guard let next = following else { return false }
            current = next
            following = nil
        }
        let count = min(current.count, Int(UInt32.max))
        // zlib never writes through next_in; the C declaration just lacks const.
        stream.pointee.next_in = UnsafeMutablePointer(mutating: current.baseAddress!)
        stream.pointee.avail_in = UInt32(count)
        current = UnsafeBufferPointer(rebasing: current[count...])
        return true
    }
}
