import HuddleProtocol

/// protocol.md "Profiles", "Sessions" and "Passwords": the caller's own profile, their sessions
/// (revoked one by one), password change and reset. Reads are resent after a drop; changes are
/// not (none takes a `client_id`), and fail with the drop, to be asked again.
extension HuddleClient {
    /// `profile`: the caller's display name and avatar (nil when unset).
    public func profile(completion: @escaping (Result<OwnProfile, HuddleClientError>) -> Void) {
        request(.profile, resendAfterReconnect: true, reading: OwnProfile.init(result:), completion: completion)
    }

    /// `profile_set`: nil leaves a field as it is, "" clears it; `avatar` is the hash of a
    /// photo the caller uploaded. The profile as it is now.
    public func setProfile(
        displayName: String? = nil, avatar: String? = nil, completion: @escaping (Result<OwnProfile, HuddleClientError>) -> Void
    ) {
        request(.profileSet(displayName: displayName, avatar: avatar), reading: OwnProfile.init(result:), completion: completion)
    }

    /// `sessions`: the caller's sessions, most recently seen first.
    public func sessions(completion: @escaping (Result<SessionList, HuddleClientError>) -> Void) {
        request(.sessions, resendAfterReconnect: true, reading: SessionList.init(result:), completion: completion)
    }

    /// `session_revoke`: ends the session with this `SessionEntry.id`; its connections close.
    public func revokeSession(id: String, completion: @escaping (Result<Int, HuddleClientError>) -> Void) {
        request(.sessionRevoke(id: id), reading: ReplyResult.revoked(in:), completion: completion)
    }

    /// `password_change`: how many other sessions were revoked (none unless `revokeOthers`).
    public func changePassword(
        from oldPassword: String, to newPassword: String, revokeOthers: Bool = false, completion: @escaping (Result<Int, HuddleClientError>) -> Void
    ) {
        request(.passwordChange(oldPassword: oldPassword, newPassword: newPassword, revokeOthers: revokeOthers), reading: ReplyResult.revoked(in:), completion: completion)
    }

    /// `password_reset_request`: a code is mailed if `login` names an account (the reply is the
    /// same either way). Works signed in or not.
    public func requestPasswordReset(login: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.passwordResetRequest(login: login), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `password_reset`: sets the password with the mailed code; every session of the user is
    /// revoked (log in again). How many were.
    public func resetPassword(login: String, code: String, newPassword: String, completion: @escaping (Result<Int, HuddleClientError>) -> Void) {
        request(.passwordReset(login: login, code: code, newPassword: newPassword), reading: ReplyResult.revoked(in:), completion: completion)
    }
}
