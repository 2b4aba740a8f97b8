import HuddleProtocol

/// `account_export` (protocol.md, "Export"): everything Huddle holds about the caller, in one
/// JSON document: one member per state component, each component's own `exported(for:)` where
/// it has one. Secrets are left out (password verifier, session tokens, reset codes: a
/// session's id and a reset code's expiry stand for them). Photos are listed by hash; their
/// bytes are the caller's at `GET /api/v1/photos/HASH`, and all of it in one archive at
/// `GET /api/v1/export` (`exportArchive`).
extension HuddleCore {
    func exportAccount(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let user = durableState.accounts[identity.username]
        else { return }
        reply(connection, requestID, .export(exported(user)), into: &step)
    }

    /// `GET /api/v1/export` (protocol.md, "Export"): the token's user gets the archive's JSON
    /// part, at most once per `exportIntervalMilliseconds` (`exports_limited` with the wait
    /// otherwise), checked before the document is built: it is the core's work, proportional
    /// to everything the user holds.
    func exportArchive(_ caller: ConnectionRef, tokenHash: [UInt8], at time: Int64, into step: inout CoreStep) {
        let user: Username
        switch photoRequestUser(tokenHash, at: time) {
        case .failure(let error): return answerPhotoRequest(caller, .refused(error), into: &step)
        case .success(let found): user = found
        }
        guard let account = durableState.accounts[user] else {
            return answerPhotoRequest(caller, .refused(CoreError(.invalidToken, "unknown or revoked token")), into: &step)
        }
        let interval = configuration.exportIntervalMilliseconds
        if let last = exportStarts[user], time - last < interval, time >= last {
            let wait = last + interval - time
            let error = CoreError(.exportsLimited, "one export per \(interval / 1000) s", retryAfterMilliseconds: wait)
            return answerPhotoRequest(caller, .refused(error), into: &step)
        }
        // Users whose wait is over take no memory: swept whenever the map has grown.
        if exportStarts.count >= 1024 { exportStarts = exportStarts.filter { time - $0.value < interval } }
        exportStarts[user] = time
        answerPhotoRequest(caller, .exportAllowed(user: user, document: exported(account)), into: &step)
    }

    private func exported(_ account: UserRecord) -> JSONValue {
        let user = account.username
        let state = durableState
        let sessions = state.sessions.tokenHashes(of: user).compactMap { hash -> JSONValue? in
            guard let session = state.sessions[hash] else { return nil }
            return .object([
                ("id", .string(Self.sessionID(of: hash))), ("device", session.device.map(JSONValue.string) ?? .null),
                ("created_at", .integer(session.createdAt)), ("expires_at", .integer(session.expiresAt)),
            ])
        }
        let request = { (request: FriendRequest) -> JSONValue in
            .object([("from", .string(request.from)), ("to", .string(request.to)), ("message", .string(request.message)), ("time", .integer(request.time))])
        }
        let photos = state.photos.hashes(ownedBy: user).map { hash -> JSONValue in
            .object([("hash", .string(hash)), ("size", .integer(state.photos.size(of: hash) ?? 0))])
        }
        let contributions = state.feed.contributions(of: user)
        return .object([
            ("account", .object([("username", .string(user)), ("email", .string(account.email)), ("created_at", .integer(account.createdAt))])),
            ("profile", state.profiles.exported(for: user)),
            ("identities", state.identities.exported(for: user)),
            ("sessions", .array(sessions)),
            ("password_reset", state.passwordResets.exported(for: user)),
            ("friends", .array(state.friendships.friends(of: user).sorted().map(JSONValue.string))),
            ("friend_requests", .object([
                ("incoming", .array(state.friendships.incomingRequests(of: user).map(request))),
                ("outgoing", .array(state.friendships.outgoingRequests(of: user).map(request))),
            ])),
            ("messages", .array(exportedMessages(of: user))),
            ("posts", .array(state.feed.postIDs(of: user).compactMap { state.feed[$0]?.view(for: user).json })),
            ("comments", .array(contributions.comments.map { post, comment in
                .object([("post", .integer(post)), ("id", .integer(comment.id)), ("text", .string(comment.text)), ("time", .integer(comment.time))])
            })),
            ("likes", .array(contributions.liked.map { .integer($0) })),
            ("places", .array((state.places[user]?.places ?? []).map(\.json))),
            ("memories", .array(state.memories.memories(of: user).map { $0.shown(includingPoints: true).json })),
            ("photos", .array(photos)),
            ("blocks", state.blocks.exported(for: user)),
            ("reports", state.reports.exported(for: user)),
            ("suspension", state.suspensions.exported(for: user)),
        ])
    }

    /// The publications the user made that channels still hold, by channel name then offset;
    /// `data` as the JSON text it was published as.
    private func exportedMessages(of user: Username) -> [JSONValue] {
        durableState.channels.byName.keys.sorted().flatMap { name -> [JSONValue] in
            guard let channel = durableState.channels[name] else { return [] }
            return channel.offsets(publishedBy: user).map { offset in
                let publication = channel.publication(at: offset, channel: name)
                return .object([
                    ("channel", .string(name)), ("offset", .integer(offset)), ("type", .string(publication.type)),
                    ("data", .string(publication.data)), ("time", .integer(publication.time)),
                ])
            }
        }
    }
}
