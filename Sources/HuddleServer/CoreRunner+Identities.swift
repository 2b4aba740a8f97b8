import HuddleCore

/// Identity sign-ins (protocol.md, "Identities"): the token is checked on the verifier threads,
/// and the core gets the decided request, answered in the op's place.
extension CoreRunner {
    /// The refusals the core decides about identities (a spent nonce, an identity another
    /// account holds, the last way to sign in) get a log line, as the verifier's refusals do.
    func logIfIdentityRefusal(_ error: CoreError, on ref: ConnectionRef) {
        switch error.code {
        case .nonceReused, .identityTaken, .identityNotFound, .lastSignInMethod, .tooManyIdentities:
            logger.notice("identity refused", metadata: ["connection": "\(ref.loop).\(ref.serial)", "code": "\(error.code.rawValue)", "reason": "\(error.message)"])
        default:
            break
        }
    }

    /// Any thread (the connection's loop).
    func verifyIdentity(
        _ token: IdentitySignIns.Token, for purpose: IdentityProof.Purpose, ref: ConnectionRef, requestID: String, op: String, device: String?,
        peer: String
    ) {
        guard let identitySignIns else {
            let refusal = CoreError(.unknownIssuer, "this server is not configured for identity providers or app tokens")
            let body = CoreRequestBody.identityVerified(IdentityProof(purpose: purpose, identity: nil, refusal: refusal, session: NewSession(tokenHash: [], expiresAt: 0, device: nil)))
            logger.notice("identity token refused", metadata: ["op": "\(op)", "peer": "\(peer)", "code": "\(refusal.code.rawValue)", "reason": "\(refusal.message)"])
            return submit(CoreRequest(connection: ref, requestID: requestID, body), op: op)
        }
        identitySignIns.verify(token, for: purpose, device: device, op: op, peer: peer) { [self] body, sessionToken in
            submit(CoreRequest(connection: ref, requestID: requestID, body), op: op, token: sessionToken)
        }
    }
}
