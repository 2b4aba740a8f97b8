import HuddleProtocol

/// Profiles (protocol.md, "Profiles"): a display name and an avatar, read and set by their
/// owner, shown wherever the user is shown to others (friends list, requests, feed, search),
/// and told live to the user's online friends and own devices.
extension HuddleCore {
    func readProfile(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        reply(connection, requestID, .profile(user: identity.username, durableState.profiles[identity.username]), into: &step)
    }

    /// `displayName`/`avatar` nil: unchanged; "": cleared. Logged only when something changes.
    func setProfile(
        _ connection: ConnectionRef, requestID: String, displayName: String?, avatar: String?, at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let user = identity.username
        var profile = durableState.profiles[user]
        if let displayName {
            if !displayName.isEmpty, let violation = DisplayNameRules.violation(of: displayName) {
                return fail(connection, requestID, CoreError(.invalidDisplayName, violation), into: &step)
            }
            profile.displayName = displayName.isEmpty ? nil : displayName
        }
        if let avatar {
            // Only a photo the user uploaded: a friend may then read it (`mayReadAvatar`).
            if !avatar.isEmpty, !durableState.photos.owns(user, avatar) {
                return fail(connection, requestID, CoreError(.photoNotFound, "no photo \(avatar) of yours; upload it first"), into: &step)
            }
            profile.avatar = avatar.isEmpty ? nil : avatar
        }
        if profile != durableState.profiles[user] {
            let command = CoreCommand.setProfile(user: user, displayName: profile.displayName, avatar: profile.avatar, time: time)
            record(command, into: &step)
            tellLive(after: command, at: time, into: &step)
        }
        reply(connection, requestID, .profile(user: user, profile), into: &step)
    }

    /// Account deletion's one call for profiles: the user's profile and its search entry gone
    /// (from `apply`, so a replay does the same). Export takes `durableState.profiles.exported(for:)`.
    func eraseProfile(of user: Username) {
        displayNames.replace(durableState.profiles[user].displayName, with: nil, of: user)
        durableState.profiles.erase(user)
    }

    /// The `profile` event for the live connections of the user's friends and of the user.
    func tellProfile(of user: Username, at time: Int64, into step: inout CoreStep) {
        var audience = friends(of: user)
        audience.insert(user)
        let recipients = connections.connections(ofAnyOf: audience)
        if !recipients.isEmpty {
            step.outputs.append(.profileChanged(user: user, durableState.profiles[user], time: time, to: recipients))
        }
    }

    /// The set profiles of `users`.
    func profiles(of users: some Sequence<Username>) -> Profiles {
        var found = Profiles()
        for user in users where durableState.profiles.byUser[user] != nil { found.set(durableState.profiles[user], of: user) }
        return found
    }

    /// A post as shown: with its author's profile now, and its comments' authors'.
    func shown(_ post: FeedPost) -> FeedPost {
        var post = post
        post.authorProfile = durableState.profiles[post.author]
        post.recentComments = post.recentComments.map(shown)
        return post
    }

    func shown(_ comment: FeedComment) -> FeedComment {
        var comment = comment
        comment.authorProfile = durableState.profiles[comment.author]
        return comment
    }

    /// Whether `reader` may read the photo as someone's avatar: the avatar of a friend, or of a
    /// user with a friend request waiting between the two (so a request can be judged by it).
    func mayReadAvatar(_ hash: String, reader: Username) -> Bool {
        let friendships = durableState.friendships
        let blocks = durableState.blocks
        // A block ends friendships and requests already; never through a block either way.
        let isAvatar = { (user: Username) in self.durableState.profiles.byUser[user]?.avatar == hash && !blocks.eitherBlocks(reader, user) }
        return friendships.friends(of: reader).contains(where: isAvatar)
            || friendships.incomingRequests(of: reader).contains { isAvatar($0.from) }
            || friendships.outgoingRequests(of: reader).contains { isAvatar($0.to) }
    }
}
