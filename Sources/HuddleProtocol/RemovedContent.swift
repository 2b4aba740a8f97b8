/// What the operator removes through the HTTP API (protocol.md, "HTTP API", `remove`): a
/// publication of a channel, left as a tombstone at its offset, a post with its likes and
/// comments, or one comment.
public enum RemovedContent: Sendable, Equatable {
    case publication(channel: String, offset: UInt64)
    case post(UInt64)
    case comment(post: UInt64, comment: UInt64)
}
