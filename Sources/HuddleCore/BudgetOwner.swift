/// Whom a request's cost is counted against: its user once the connection is signed in —
/// every connection of the user shares one budget — and before that its client address.
public enum BudgetOwner: Hashable, Sendable {
    case user(Username)
    case address(String)
}

extension HuddleCore {
    /// nil for a connection the core does not know (closed, or never opened).
    public func budgetOwner(of connection: ConnectionRef) -> BudgetOwner? {
        guard let state = connections[connection] else { return nil }
        if let identity = state.identity { return .user(identity.username) }
        return .address(state.address)
    }
}
