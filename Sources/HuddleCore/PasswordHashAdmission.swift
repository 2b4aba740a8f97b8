/// Password hashes the core has asked the server for and not yet had answered: the bounds of
/// `CoreConfiguration` on anonymous KDF work (protocol.md, "Limits"). A hash counts from the
/// request that starts it until the request that carries its result, even if its connection
/// closed meanwhile: the worker spends the time either way, so closing and reconnecting does
/// not get around the bound. Ephemeral.
struct PasswordHashAdmission: Sendable {
    enum Kind: Sendable { case signUp, login }

    private(set) var signUps = 0
    private(set) var logins = 0
    private var signUpsByAddress: [String: Int] = [:]

    /// nil if a hash of this kind may start for `address`; otherwise the refusal.
    func refusal(of kind: Kind, from address: String, configuration: CoreConfiguration) -> CoreError? {
        let retry = configuration.hashingRetryMilliseconds
        switch kind {
        case .signUp:
            if signUpsByAddress[address, default: 0] >= configuration.signUpsHashingPerAddress {
                let message = "\(configuration.signUpsHashingPerAddress) signups from this address are being processed; try again later"
                return CoreError(.tooManyAttempts, message, retryAfterMilliseconds: retry)
            }
            if signUps >= configuration.signUpsHashing {
                return CoreError(.busy, "the server is processing too many signups; try again later", retryAfterMilliseconds: retry)
            }
        case .login:
            if logins >= configuration.loginsHashing {
                return CoreError(.busy, "the server is processing too many logins; try again later", retryAfterMilliseconds: retry)
            }
        }
        return nil
    }

    mutating func begin(_ kind: Kind, from address: String) {
        switch kind {
        case .signUp:
            signUps += 1
            signUpsByAddress[address, default: 0] += 1
        case .login:
            logins += 1
        }
    }

    mutating func end(_ kind: Kind, from address: String) {
        switch kind {
        case .signUp:
            signUps = max(0, signUps - 1)
            let left = signUpsByAddress[address, default: 0] - 1
            signUpsByAddress[address] = left > 0 ? left : nil
        case .login:
            logins = max(0, logins - 1)
        }
    }
}
