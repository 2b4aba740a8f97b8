import HuddleCore
import HuddleIO
import Logging

/// The verifier threads: each `identity_signin`, `identity_link` and `app_auth` has its token
/// checked here (signature and claims, and a JWKS reload when a key rotated), never on a loop
/// or the core, and ends by handing the core its decided request: the verified identity, or
/// the refusal that is the reply. The token itself goes no further.
final class IdentitySignIns: Sendable {
    enum Token: Sendable {
        /// `nonce`: the client's, which the ID token must carry.
        case idToken(String, nonce: String?)
        case appToken(String)
    }

    let verifier: IdentityVerifier
    private let workers: WorkerThreads
    private let logger: Logger
    private let sessionTTLMilliseconds: Int64

    init(verifier: IdentityVerifier, threads: Int, sessionTTLMilliseconds: Int64, logger: Logger) throws {
        self.verifier = verifier
        workers = try WorkerThreads(name: "huddle-identity", count: threads)
        self.sessionTTLMilliseconds = sessionTTLMilliseconds
        self.logger = logger
    }

    /// Verifies `token` and calls `decided` (on a verifier thread, or at once when the queue is
    /// full) with the request for the core and, for a sign-in that may succeed, the plaintext
    /// session token the reply carries.
    func verify(
        _ token: Token, for purpose: IdentityProof.Purpose, device: String?, op: String, peer: String,
        decided: @escaping @Sendable (CoreRequestBody, _ sessionToken: String?) -> Void
    ) {
        let metrics = verifier.metrics
        guard metrics.pending.add(1, ordering: .relaxed).newValue <= verifier.settings.maxPendingVerifications else {
            metrics.pending.subtract(1, ordering: .relaxed)
            let busy = CoreError(.busy, "too many sign-ins are being verified; try again later", retryAfterMilliseconds: 1_000)
            logger.notice("identity token refused", metadata: ["op": "\(op)", "peer": "\(peer)", "code": "\(busy.code.rawValue)", "reason": "\(busy.message)"])
            return decided(.identityVerified(IdentityProof(purpose: purpose, identity: nil, refusal: busy, session: Self.noSession)), nil)
        }
        workers.run { [self] in
            defer { metrics.pending.subtract(1, ordering: .relaxed) }
            let now = WallClock.milliseconds()
            let kind: IdentityMetrics.Kind
            let outcome: Result<VerifiedIdentity, CoreError>
            switch token {
            case .idToken(let text, let nonce):
                kind = .idToken
                outcome = verifier.verifyIDToken(text, nonce: nonce, now: now)
            case .appToken(let text):
                kind = .appToken
                outcome = verifier.verifyAppToken(text, now: now)
            }
            switch outcome {
            case .success(let identity):
                metrics.count(kind, .verified)
                let sessionToken = purpose.opensASession ? SessionToken.generate() : nil
                let session = sessionToken.map { NewSession(tokenHash: SessionToken.hash($0), expiresAt: now + sessionTTLMilliseconds, device: device) }
                let proof = IdentityProof(purpose: purpose, identity: identity, refusal: nil, session: session ?? Self.noSession)
                decided(.identityVerified(proof), sessionToken)
            case .failure(let error):
                metrics.count(kind, .refused)
                // Never the token: only what was wrong with it.
                logger.notice("identity token refused", metadata: ["op": "\(op)", "peer": "\(peer)", "code": "\(error.code.rawValue)", "reason": "\(error.message)"])
                decided(.identityVerified(IdentityProof(purpose: purpose, identity: nil, refusal: error, session: Self.noSession)), nil)
            }
        }
    }

    func stop() { workers.stop() }

    private static let noSession = NewSession(tokenHash: [], expiresAt: 0, device: nil)
}
