import HuddleProtocol

/// Account deletion (protocol.md, "Deletion and retention"): from inside the app with the
/// password (`account_delete`), or by the operator (`DELETE /api/v1/users/NAME`).
///
/// Friends are told as for `friend_remove` (each friendship ends with its notice and its
/// matches), then one `eraseUser` command erases the rest: every state component's `erase(user)`
/// in `apply`, so a component added later joins with one line there (and its export with one
/// line in `exportedData`). The user's connections close with 4001. Their channels, which may
/// hold millions of publications, follow in bounded chunks (`HuddleCore+ErasureChunks`).
extension HuddleCore {
    static let accountDeletedReason = "account deleted"

    /// `account_delete`: checks the caller's password off the core thread, as a login does (the
    /// same failure limit and hash lanes), then `finishAccountDeletion`. A fresh ID-token
    /// sign-in is the other proof (`AccountDeletionProof`'s note).
    func beginAccountDeletion(
        _ connection: ConnectionRef, requestID: String, proof: AccountDeletionProof, at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let state = connections[connection], let user = durableState.accounts[identity.username]
        else { return }
        switch proof {
        case .password(let password):
            guard let credentials = user.credentials else {
                let error = CoreError(.invalidCredentials, "this account has no password: prove it is yours with a fresh identity token")
                return fail(connection, requestID, error, into: &step)
            }
            if let wait = loginThrottle.retryAfter(account: user.username, address: state.address, at: time) {
                let error = CoreError(.tooManyAttempts, "too many wrong passwords; try again later", retryAfterMilliseconds: wait)
                return fail(connection, requestID, error, into: &step)
            }
            if let error = passwordHashes.refusal(of: .login, from: state.address, configuration: configuration) {
                return fail(connection, requestID, error, into: &step)
            }
            passwordHashes.begin(.login, from: state.address)
            loginThrottle.beginVerification(account: user.username, address: state.address, at: time)
            step.outputs.append(.verifyAccountDeletion(
                connection, requestID: requestID, username: user.username, credentials: credentials, password: password,
                address: state.address))
        }
    }

    /// The server checked the password of `account_delete`. Nothing happens if the connection
    /// closed or signed in as someone else meanwhile.
    func finishAccountDeletion(
        _ connection: ConnectionRef, requestID: String, username: Username, passwordMatched: Bool, address: String,
        at time: Int64, into step: inout CoreStep
    ) {
        passwordHashes.end(.login, from: address)
        loginThrottle.endVerification(account: username, address: address)
        guard connections[connection]?.identity?.username == username, durableState.accounts[username] != nil else { return }
        guard passwordMatched else {
            loginThrottle.recordFailure(account: username, address: address, at: time)
            return fail(connection, requestID, CoreError(.invalidCredentials, "wrong password: the account was not deleted"), into: &step)
        }
        loginThrottle.clearFailures(account: username, address: address)
        reply(connection, requestID, .done, into: &step)
        deleteAccount(username, at: time, into: &step)
    }

    /// HTTP API: the operator deletes an account.
    func deleteUser(requestID: String, username rawUsername: String, at time: Int64, into step: inout CoreStep) {
        guard let username = UsernameRules.canonical(rawUsername), durableState.accounts[username] != nil else {
            return fail(nil, requestID, CoreError(.userNotFound, "no user \(rawUsername)"), into: &step)
        }
        deleteAccount(username, at: time, into: &step)
        reply(nil, requestID, .done, into: &step)
    }

    /// Ends every friendship as `friend_remove` does (the friend's notice, the matches), then
    /// erases the user in one command.
    func deleteAccount(_ user: Username, at time: Int64, into step: inout CoreStep) {
        for friend in friends(of: user).sorted() {
            let command = CoreCommand.removeFriend(user: user, friend: friend, time: time)
            record(command, into: &step)
            tellLive(after: command, at: time, into: &step)
            publishNotice(InboxNotice.friendRemoved(user: user, friend: friend), to: friend, at: time, into: &step)
            endActivities(between: user, and: friend, at: time, into: &step)
        }
        let command = CoreCommand.eraseUser(username: user, time: time)
        let prior = priorFacts(of: command)
        record(command, into: &step)
        tellLive(after: command, prior: prior, at: time, into: &step)
        // The deciding node removes the files (in cluster mode the photos' directory is shared).
        if !prior.orphanedPhotos.isEmpty { step.outputs.append(.removePhotoFiles(prior.orphanedPhotos)) }
    }

    /// What `eraseUser` removes that this node's disk must hear of, read before it is applied:
    /// the photos only the user owns.
    func orphanedPhotos(of user: Username) -> [String] {
        durableState.photos.orphanedByErasing(user)
    }

    /// Applies `eraseUser`: one `erase` per state component.
    func eraseUser(_ user: Username, at time: Int64) {
        durableState.accounts.erase(user)
        usernames.remove(user)
        durableState.sessions.erase(user)
        durableState.friendships.erase(user)
        // The channels follow in chunks (`eraseChannels`); reads treat them as erased already.
        durableState.erasures.begin(user, at: time)
        durableState.readMarkers.erase(user, droppedChannels: [])
        durableState.feed.erase(user)
        durableState.activityStatuses.erase(user)
        durableState.activityMatches.erase(user)
        durableState.places.erase(user)
        durableState.memories.erase(user)
        _ = durableState.photos.erase(user)
        durableState.keptResults.erase(user)
        // The parts of issue 16: identities, profile, password reset, blocks, moderation.
        durableState.identities.erase(user)
        eraseProfile(of: user)
        durableState.passwordResets.erase(user)
        durableState.blocks.erase(user)
        durableState.suspensions.erase(user)
        durableState.reports.erase(user)
        durableState.quarantinedUsernames.hold(user, at: time)
    }
}

/// What proves that the person asking to delete an account holds it: here its password. A
/// fresh ID-token sign-in proves it too, verified off the core as sign-ins are and decided in
/// `identityVerified` (`IdentityProof.Purpose.deleteAccount`).
public enum AccountDeletionProof: Sendable, Equatable {
    case password(String)
}
