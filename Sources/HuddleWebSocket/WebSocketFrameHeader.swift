/// The header of one frame (RFC 6455 §5.2): the bits as they are on the wire, before any rule
/// about which combinations a peer may send. The reader judges them; the writer produces them.
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// ```
struct WebSocketFrameHeader: Equatable {
    /// 2 fixed bytes, an 8-byte extended length and a 4-byte masking key.
    static let maximumByteCount = 14

    var fin: Bool
    var rsv1: Bool
    var rsv2: Bool
    var rsv3: Bool
    /// The 4-bit opcode as sent, reserved values included, so the reader can name them in errors.
    var opcodeBits: UInt8
    /// The key in wire order (see `WebSocketMasking`); nil when the MASK bit is clear.
    var maskingKey: UInt32?
    /// As sent: a 64-bit length may have its most significant bit set, which the reader rejects.
    var payloadLength: UInt64

    init(
        fin: Bool, rsv1: Bool, rsv2: Bool = false, rsv3: Bool = false, opcodeBits: UInt8,
        maskingKey: UInt32?, payloadLength: UInt64
    ) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcodeBits = opcodeBits
        self.maskingKey = maskingKey
        self.payloadLength = payloadLength
    }

    /// How long the whole header is, which the second byte alone decides.
    static func byteCount(secondByte: UInt8) -> Int {
        let lengthBytes: Int
        switch secondByte & 0x7F {
        case 126: lengthBytes = 2
        case 127: lengthBytes = 8
        default: lengthBytes = 0
        }
        return 2 + lengthBytes + (secondByte & 0x80 != 0 ? 4 : 0)
    }

    /// Decodes a complete header; `bytes` holds at least `byteCount(secondByte: bytes[1])` bytes.
    init(decoding bytes: UnsafeRawBufferPointer) {
        let first = bytes[0]
        let second = bytes[1]
        fin = first & 0x80 != 0
        rsv1 = first & 0x40 != 0
        rsv2 = first & 0x20 != 0
        rsv3 = first & 0x10 != 0
        opcodeBits = first & 0x0F

        var offset = 2
        switch second & 0x7F {
        case 126:
            payloadLength = UInt64(Self.readBigEndian(bytes, at: offset, as: UInt16.self))
            offset += 2
        case 127:
            payloadLength = Self.readBigEndian(bytes, at: offset, as: UInt64.self)
            offset += 8
        case let length:
            payloadLength = UInt64(length)
        }
        maskingKey = second & 0x80 != 0 ? Self.readBigEndian(bytes, at: offset, as: UInt32.self) : nil
    }

    /// The header's length when encoded with the shortest length form, as RFC 6455 §5.2 requires.
    var encodedByteCount: Int {
        let lengthBytes = payloadLength < 126 ? 0 : payloadLength <= UInt64(UInt16.max) ? 2 : 8
        return 2 + lengthBytes + (maskingKey == nil ? 0 : 4)
    }

    /// Writes the header (`encodedByteCount` bytes, at most 14) and returns how many it wrote.
    func encode(into destination: UnsafeMutableRawPointer) -> Int {
        var first = opcodeBits & 0x0F
        if fin { first |= 0x80 }
        if rsv1 { first |= 0x40 }
        if rsv2 { first |= 0x20 }
        if rsv3 { first |= 0x10 }
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        destination.storeBytes(of: first, as: UInt8.self)

        var offset = 2
        if payloadLength < 126 {
            destination.storeBytes(of: maskBit | UInt8(payloadLength), toByteOffset: 1, as: UInt8.self)
        } else if payloadLength <= UInt64(UInt16.max) {
            destination.storeBytes(of: maskBit | 126, toByteOffset: 1, as: UInt8.self)
            destination.storeBytes(of: UInt16(payloadLength).bigEndian, toByteOffset: offset, as: UInt16.self)
            offset += 2
        } else {
            destination.storeBytes(of: maskBit | 127, toByteOffset: 1, as: UInt8.self)
            destination.storeBytes(of: payloadLength.bigEndian, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        if let maskingKey {
            destination.storeBytes(of: maskingKey.bigEndian, toByteOffset: offset, as: UInt32.self)
            offset += 4
        }
        return offset
    }

    private static func readBigEndian<Integer: FixedWidthInteger>(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, as: Integer.Type
    ) -> Integer {
        Integer(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Integer.self))
    }
}
