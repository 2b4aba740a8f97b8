import HuddleProtocol

/// The operator's removal of content (protocol.md, "HTTP API", `remove`): a chat message or any
/// other publication becomes a tombstone at its offset, so offsets stay contiguous and readers
/// resume across it; a post goes as if its author had deleted it. Each is a logged command.
extension HuddleCore {
    func removeContent(requestID: String, _ content: RemovedContent, at time: Int64, into step: inout CoreStep) {
        switch content {
        case let .publication(channel, offset):
            guard durableState.channels[channel]?.canRemove(at: offset) == true else {
                let error = CoreError(.publicationNotFound, "no publication at offset \(offset) of \(channel) (never made, trimmed, or removed already)")
                return fail(nil, requestID, error, into: &step)
            }
            let command = CoreCommand.removePublication(channel: channel, offset: offset, time: time)
            record(command, into: &step)
            reply(nil, requestID, .done, into: &step)
            tellLive(after: command, at: time, into: &step)
        case let .post(id):
            guard let post = durableState.feed[id] else {
                return fail(nil, requestID, CoreError(.postNotFound, "no post \(id)"), into: &step)
            }
            let command = CoreCommand.deletePost(post: id, author: post.author, time: time)
            record(command, into: &step)
            reply(nil, requestID, .done, into: &step)
            tellLive(after: command, at: time, into: &step)
        case let .comment(id, comment):
            guard durableState.feed[id]?.comments.contains(where: { $0.id == comment }) == true else {
                return fail(nil, requestID, CoreError(.commentNotFound, "no comment \(comment) on post \(id)"), into: &step)
            }
            let command = CoreCommand.removeComment(post: id, comment: comment, time: time)
            record(command, into: &step)
            reply(nil, requestID, .done, into: &step)
            tellLive(after: command, at: time, into: &step)
        }
    }

    /// The channel's live subscribers hear that `offset` is a tombstone now
    /// (`publication_removed`): a `deliver` of the tombstone, stamped with the removal's time.
    func tellRemoval(of offset: UInt64, in channel: String, at time: Int64, into step: inout CoreStep) {
        guard let stored = durableState.channels[channel] else { return }
        let tombstone = Publication(channel: channel, epoch: stored.epoch, offset: offset, type: "", from: nil, data: "", time: time, removed: true)
        deliver(tombstone, into: &step)
    }
}
