/// Whom a request's cost is counted against: its user once the connection is signed in —
/// every connection of the user shares one budget — and before that its client address, with
/// sign-ins (`login`, `auth`) in a lane of their own: signups and other anonymous requests
/// from an address (an attacker's, or many phones behind one carrier NAT) cannot use up the
/// share its users' logins need. Sign-ins are bounded apart by the login throttle.
public enum BudgetOwner: Hashable, Sendable {
    case user(Username)
    case address(String)
    case signIn(address: String)
}

extension HuddleCore {
    /// nil for a connection the core does not know (closed, or never opened).
    public func budgetOwner(of connection: ConnectionRef, for request: CoreRequest? = nil) -> BudgetOwner? {
        guard let state = connections[connection] else { return nil }
        if let identity = state.identity { return .user(identity.username) }
        return request?.isSignIn == true ? .signIn(address: state.address) : .address(state.address)
    }
}
