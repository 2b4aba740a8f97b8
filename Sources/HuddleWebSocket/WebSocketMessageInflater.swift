/// Decompresses the messages of a connection that negotiated permessage-deflate (RFC 7692).
/// The message reader calls it for every message whose first frame had RSV1 set; the
/// permessage-deflate extension provides the implementation.
public protocol WebSocketMessageInflater: AnyObject {
    /// Inflates one whole message payload (every fragment joined, as it came off the wire,
    /// without the 0x00 0x00 0xff 0xff tail that RFC 7692 §7.2.2 says to append).
    /// - Throws: `WebSocketError(.messageTooBig, …)` as soon as the output would exceed
    ///   `maxSize` (a decompression bomb never gets allocated), and
    ///   `WebSocketError(.invalidPayloadData, …)` when the data is not valid DEFLATE.
    func inflate(_ compressed: [UInt8], maxSize: Int) throws -> [UInt8]
}
