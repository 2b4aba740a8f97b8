/// `profile_set`'s arguments (protocol.md, "Profiles"). The values' rules (a display name's
/// characters, an avatar the caller owns) are the core's; here only types and presence.
extension RequestDecoder {
    static func profileSet(_ arguments: RequestArguments) throws(RequestError) -> Operation {
        let displayName = try arguments.optionalString("display_name")
        let avatar = try arguments.optionalString("avatar")
        guard displayName != nil || avatar != nil else { throw arguments.badRequest("give display_name, avatar or both") }
        return .profileSet(displayName: displayName, avatar: avatar)
    }
}
