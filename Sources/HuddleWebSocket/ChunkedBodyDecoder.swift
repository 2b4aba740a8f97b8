/// Decodes an HTTP/1.1 chunked request body (RFC 9112 §7.1) as it arrives, never holding more
/// than `maxBodySize` body bytes: a chunk that would go past it is refused from its size line,
/// before any of its data is read (413). Chunk extensions are skipped and trailer fields read
/// and dropped, both within fixed bounds. A pure state machine: bytes in, body bytes out.
public struct ChunkedBodyDecoder: Sendable {
    public let maxBodySize: Int
    /// Body bytes decoded so far.
    public private(set) var bodySize = 0
    /// The last chunk and the trailer section were read: the body is whole.
    public private(set) var isComplete = false

    private enum State: Sendable {
        case sizeLine
        case data(remaining: Int)
        /// The CRLF after a chunk's data; `sawCR` once its CR was read.
        case dataEnd(sawCR: Bool)
        case trailer
    }

    private var state = State.sizeLine
    private var line: [UInt8] = []
    private var trailerBytes = 0

    /// A size line with its extensions, and the whole trailer section, are bounded by these.
    static let maxLineLength = 4096
    static let maxTrailerBytes = 8192

    public init(maxBodySize: Int) {
        self.maxBodySize = maxBodySize
    }

    /// Appends the body bytes in `input` to `body`. Returns how many bytes of `input` belong to
    /// the body (all of them, unless it ended within `input`). Throws 400 for a malformed body
    /// and 413 for one over `maxBodySize`.
    public mutating func decode(_ input: UnsafeRawBufferPointer, into body: inout [UInt8]) throws(HTTPParseError) -> Int {
        var index = 0
        while index < input.count, !isComplete {
            switch state {
            case .sizeLine, .trailer:
                let byte = input[index]
                index += 1
                guard byte == 0x0A else {
                    line.append(byte)
                    if line.count > Self.maxLineLength { throw .badRequest("chunk line too long") }
                    continue
                }
                guard line.last == 0x0D else { throw .badRequest("chunk line not ended by CRLF") }
                line.removeLast()
                if case .sizeLine = state {
                    try startChunk(size: try Self.chunkSize(line))
                } else {
                    trailerBytes += line.count + 2
                    if trailerBytes > Self.maxTrailerBytes { throw .badRequest("trailer section too large") }
                    if line.isEmpty { isComplete = true }
                }
                line.removeAll(keepingCapacity: true)
            case .data(let remaining):
                let count = min(remaining, input.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<(index + count)]))
                index += count
                bodySize += count
                state = count == remaining ? .dataEnd(sawCR: false) : .data(remaining: remaining - count)
            case .dataEnd(let sawCR):
                let byte = input[index]
                index += 1
                if !sawCR, byte == 0x0D {
                    state = .dataEnd(sawCR: true)
                } else if sawCR, byte == 0x0A {
                    state = .sizeLine
                } else {
                    throw .badRequest("chunk data not followed by CRLF")
                }
            }
        }
        return index
    }

    private mutating func startChunk(size: Int) throws(HTTPParseError) {
        if size == 0 {
            state = .trailer
            return
        }
        guard size <= maxBodySize - bodySize else {
            throw HTTPParseError(status: 413, reason: "body over \(maxBodySize) bytes")
        }
        state = .data(remaining: size)
    }

    /// `chunk-size [BWS ";" extensions]`: hex digits, at most 15 of them (so the size fits an
    /// Int whatever follows), then nothing, or whitespace and extensions, which are not read.
    private static func chunkSize(_ line: [UInt8]) throws(HTTPParseError) -> Int {
        var size = 0
        var digits = 0
        for byte in line {
            let value: Int
            switch byte {
            case 0x30...0x39: value = Int(byte - 0x30)
            case 0x41...0x46: value = Int(byte - 0x41 + 10)
            case 0x61...0x66: value = Int(byte - 0x61 + 10)
            case 0x3B, 0x20, 0x09:
                guard digits > 0 else { throw .badRequest("bad chunk size") }
                return size
            default:
                throw .badRequest("bad chunk size")
            }
            digits += 1
            guard digits <= 15 else { throw .badRequest("chunk size too large") }
            size = size << 4 | value
        }
        guard digits > 0 else { throw .badRequest("bad chunk size") }
        return size
    }
}
