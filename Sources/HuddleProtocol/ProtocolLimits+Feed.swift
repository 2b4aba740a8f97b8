/// The feed's request limits (protocol.md, "Feed" and "Limits"). Fixed rather than stored
/// settings: the texts they bound are kept in the durable state, whose size protocol.md
/// promises, and the page sizes match the core's `Feed.maxPageSize`.
extension ProtocolLimits {
    /// A post's `text`, in characters.
    public var maxPostLength: Int { 1000 }
    /// A comment's `text`, in characters.
    public var maxCommentLength: Int { 500 }
    /// A post's `activity` label, in characters.
    public var maxActivityLength: Int { 32 }
    /// `feed` and `comments` pages.
    public var defaultFeedLimit: Int { 10 }
    public var maxFeedLimit: Int { 50 }
}
