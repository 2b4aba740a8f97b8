import HuddleProtocol

/// `account_delete` (protocol.md, "Deletion and retention").
extension HuddleClient {
    /// Deletes the signed-in user's account and everything the server holds about them; the
    /// password proves it is theirs. The client then reconnects anonymously, as after a logout:
    /// the 4001 that follows is expected, not a refusal.
    public func deleteAccount(password: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.accountDelete(password: password), decode: { _ throws(HuddleClientError) in () }) { [self] outcome in
            if case .success = outcome { signedOut() }
            completion(outcome)
        }
    }
}
