/// How a server answers permessage-deflate offers, and how it compresses afterwards.
public struct PerMessageDeflateServerOptions: Sendable, Equatable {
    /// `false` declines every offer: the connection runs uncompressed.
    public var enabled = true

    /// Reply with `server_no_context_takeover` even when the client did not ask: RFC 7692 §7.1.1.1
    /// allows it. It lets the server compress a fan-out message ONCE and send the same bytes to
    /// every subscriber, and keeps no per-connection deflate state (one deflater per I/O loop
    /// serves every connection). Default true.
    public var serverNoContextTakeover = true

    /// Reply with `client_no_context_takeover` even when the client did not ask (RFC 7692 §7.1.1.2
    /// allows it). Clients then compress each message on its own, so an inflater holds nothing
    /// between messages and one per I/O loop serves every connection, instead of ~7 KiB of zlib
    /// state plus a 2^clientMaxWindowBits window (32 KiB at 15) held by each idle connection.
    /// The cost is a worse ratio on small client-to-server messages, which are the minor share of
    /// a pub/sub server's traffic. Default true.
    public var clientNoContextTakeover = true

    /// Largest window the server compresses with, 8...15. Below 15 it is announced as
    /// `server_max_window_bits` even when the client did not offer the parameter (§7.1.2.1).
    /// A smaller client request wins. Values outside 8...15 are clamped.
    public var serverMaxWindowBits = 15

    /// Largest window the server asks clients to compress with, 8...15: sent as
    /// `client_max_window_bits` only when below 15 and only to a client whose offer carried the
    /// parameter (§7.1.2.2 forbids it otherwise). A smaller value hinted by the client wins.
    /// Values outside 8...15 are clamped.
    public var clientMaxWindowBits = 15

    /// zlib level, 0...9. Default 1 (zlib's fastest matcher). Measured on this project's chat JSON
    /// (zlib 1.2.13, deflateReset per message): messages under ~1 KiB come out the same size at
    /// every level; a 16 KiB history page is 32.7% of its size at level 1 against 29.0% at level
    /// 6, which costs 2.5x the CPU; a 320 KiB page 31.5% against 25.2% at 4x the CPU (12 ms on
    /// the test machine at level 6, during which the I/O loop serves nobody else). Compression
    /// runs on the I/O loop, so a few percent of bytes are not worth stalling every other
    /// connection on it.
    public var compressionLevel = 1

    /// zlib memLevel, 1...9: the hash table and symbol buffer size. A deflater takes
    /// 2^(windowBits+2) + 2^(memoryLevel+9) bytes plus ~6 KiB: 256 KiB at 15 and 8. That is paid
    /// once per I/O loop while `serverNoContextTakeover` is on (one shared deflater), but once per
    /// connection when it is off; then prefer e.g. serverMaxWindowBits 12 and memoryLevel 4
    /// (~30 KiB). Default 8: with one deflater per loop memory does not matter, and at level 1 it
    /// takes 16-28% less CPU than memLevel 4 on 16-320 KiB messages, for the same or smaller output.
    public var memoryLevel = 8

    public init() {}
}
