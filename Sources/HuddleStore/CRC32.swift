import CHuddleShims

/// zlib's CRC-32 (the ISO-HDLC / gzip one), continued across pieces.
enum CRC32 {
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        // zlib returns the *initial* value for a NULL buffer, which would reset a running CRC.
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return UInt32(crc32_z(UInt(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count))
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { update(0, bytes) }
}
