/// Photos (protocol.md, "Photos"): the server stores the bytes in the data directory and asks
/// the core who may upload, records who owns what, and asks who may read.
///
/// These requests come from HTTP, authenticated by a session token on each request rather than
/// by a signed-in connection, so the token's session is checked here every time (a revoked or
/// expired session stops working at once). A photo is readable by users who uploaded its
/// bytes, and as an avatar by its owner's friends (`mayReadAvatar`); anyone else is told
/// `photo_not_found`, exactly as for a photo nobody has.
extension HuddleCore {
    func authorizePhotoUpload(_ caller: ConnectionRef, tokenHash: [UInt8], size: Int, at time: Int64, into step: inout CoreStep) {
        switch photoRequestUser(tokenHash, at: time) {
        case .failure(let error): answerPhotoRequest(caller, .refused(error), into: &step)
        case .success(let user):
            // Refused before any body is read, at the size it may reach: a file stored and then
            // refused by `recordPhoto` would stay on disk with no owner.
            guard durableState.photos.storedBytes(of: user) + size <= configuration.photoQuotaBytes else {
                return answerPhotoRequest(caller, .refused(quotaExceeded()), into: &step)
            }
            answerPhotoRequest(caller, .uploadAllowed(user: user), into: &step)
        }
    }

    func recordPhoto(_ caller: ConnectionRef, tokenHash: [UInt8], hash: String, size: Int, at time: Int64, into step: inout CoreStep) {
        let owner: Username
        switch photoRequestUser(tokenHash, at: time) {
        case .failure(let error): return answerPhotoRequest(caller, .refused(error), into: &step)
        case .success(let user): owner = user
        }
        guard PhotoHash.isValid(hash), size > 0 else {
            return answerPhotoRequest(caller, .refused(CoreError(.badRequest, "a photo is a non-empty file named by its SHA-256")), into: &step)
        }
        let photos = durableState.photos
        if photos.owns(owner, hash) {
            return answerPhotoRequest(caller, .stored(hash: hash, size: photos.size(of: hash) ?? size, newlyOwned: false), into: &step)
        }
        guard photos.photoCount(of: owner) < MemoryLimits.photosPerUser else {
            let error = CoreError(.tooManyPhotos, "a user keeps at most \(MemoryLimits.photosPerUser) photos")
            return answerPhotoRequest(caller, .refused(error), into: &step)
        }
        guard photos.storedBytes(of: owner) + (photos.size(of: hash) ?? size) <= configuration.photoQuotaBytes else {
            return answerPhotoRequest(caller, .refused(quotaExceeded()), into: &step)
        }
        record(.addPhotoOwner(owner: owner, hash: hash, size: size, time: time), into: &step)
        answerPhotoRequest(caller, .stored(hash: hash, size: durableState.photos.size(of: hash) ?? size, newlyOwned: true), into: &step)
    }

    func authorizePhotoRead(_ caller: ConnectionRef, tokenHash: [UInt8], hash: String, at time: Int64, into step: inout CoreStep) {
        switch photoRequestUser(tokenHash, at: time) {
        case .failure(let error):
            answerPhotoRequest(caller, .refused(error), into: &step)
        case .success(let reader):
            guard durableState.photos.owns(reader, hash) || mayReadAvatar(hash, reader: reader), let size = durableState.photos.size(of: hash) else {
                return answerPhotoRequest(caller, .refused(CoreError(.photoNotFound, "no such photo")), into: &step)
            }
            answerPhotoRequest(caller, .readAllowed(hash: hash, size: size), into: &step)
        }
    }

    /// The user a session token (its hash) stands for now: `invalid_token` for an unknown or
    /// revoked one, `token_expired` past its expiry — as `auth` says.
    func photoRequestUser(_ tokenHash: [UInt8], at time: Int64) -> Result<Username, CoreError> {
        guard let session = durableState.sessions[tokenHash], durableState.accounts[session.username] != nil else {
            return .failure(CoreError(.invalidToken, "unknown or revoked token"))
        }
        guard time < session.expiresAt else { return .failure(CoreError(.tokenExpired, "the session expired; log in again")) }
        return .success(session.username)
    }

    private func quotaExceeded() -> CoreError {
        CoreError(.photoQuotaExceeded, "a user's photos take at most \(configuration.photoQuotaBytes) bytes")
    }

    func answerPhotoRequest(_ caller: ConnectionRef, _ access: PhotoAccess, into step: inout CoreStep) {
        step.outputs.append(.photoAccess(caller: caller, access))
    }
}
