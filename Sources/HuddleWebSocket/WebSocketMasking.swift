/// The RFC 6455 §5.3 payload mask: byte i of a frame's payload is XORed with byte i % 4 of the
/// frame's masking key. The same operation masks and unmasks.
///
/// A masking key is a `UInt32` whose big-endian bytes are the key as it appears on the wire:
/// the key `37 fa 21 3d` of RFC 6455 §5.7 is `0x37fa_213d`.
enum WebSocketMasking {
    /// XORs `count` bytes from `source` into `destination`, which may be the same memory
    /// (unmasking in place). `keyOffset` is how many bytes of the same frame's payload came
    /// before `source`: a frame split across reads continues the key where the last piece stopped.
    ///
    /// Works eight bytes per step with the key replicated into a `UInt64`, because a byte loop is
    /// the slowest part of reading a large frame.
    static func apply(
        maskingKey: UInt32,
        keyOffset: Int,
        from source: UnsafeRawPointer,
        to destination: UnsafeMutableRawPointer,
        count: Int
    ) {
        // Rotate the key so its first byte is the one due at `source`; `<<` and `>>` by 32 give
        // 0 in Swift, so a rotation of 0 needs no special case.
        let rotation = UInt32(keyOffset & 3) &* 8
        let rotatedKey = (maskingKey << rotation) | (maskingKey >> (32 &- rotation))
        // `.bigEndian` lays the key bytes out in memory in wire order on any host; both halves
        // of the word are the same, so the word is right on either byte order too.
        let keyBytes = rotatedKey.bigEndian
        let keyWord = UInt64(keyBytes) | (UInt64(keyBytes) << 32)

        var index = 0
        while index &+ 8 <= count {
            let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            destination.storeBytes(of: word ^ keyWord, toByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        // Fewer than 8 bytes remain, starting at a multiple of 8, so byte j of the key word is due.
        withUnsafeBytes(of: keyWord) { key in
            var tail = 0
            while index < count {
                let byte = source.load(fromByteOffset: index, as: UInt8.self)
                destination.storeBytes(of: byte ^ key[tail], toByteOffset: index, as: UInt8.self)
                index &+= 1
                tail &+= 1
            }
        }
    }
}
