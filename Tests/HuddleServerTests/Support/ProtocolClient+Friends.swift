/// Two users signed up and made friends, each with the presence event of the befriending
/// consumed: the start of every chat and deletion scenario.
extension ProtocolClient {
    static func friends(
        _ first: String, _ second: String, port: Int
    ) throws -> (first: ProtocolClient, firstToken: String, second: ProtocolClient, secondToken: String) {
        let (one, oneToken) = try signedUp(first, port: port)
        let (two, twoToken) = try signedUp(second, port: port)
        try one.ok("friend_request", ["user": second])
        try two.ok("friend_accept", ["user": first])
        _ = try one.nextEvent("presence")
        _ = try two.nextEvent("presence")
        return (one, oneToken, two, twoToken)
    }
}
