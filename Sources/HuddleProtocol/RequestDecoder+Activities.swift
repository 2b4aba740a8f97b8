/// Arguments of the activity ops (protocol.md, "Activities and matches"). Whether an activity
/// is on the server's list, whether the audience are friends and the range of `expires_in`
/// are the core's to judge; here only shapes and lengths.
extension RequestDecoder {
    /// `activity`: a string of 1–32 characters.
    static func activityName(_ arguments: RequestArguments) throws(RequestError) -> String {
        let name = try arguments.string("activity")
        guard RequestArguments.hasLength(name, in: 1...ProtocolLimits.maxActivityNameLength) else {
            throw arguments.badRequest("activity must be 1 to \(ProtocolLimits.maxActivityNameLength) characters")
        }
        return name
    }

    /// `friends`: optional; an array of 1–256 usernames (each a string of at most 32 characters).
    /// An empty array is refused rather than read as "everyone" or "no one": leave it out for
    /// every friend.
    static func activityAudience(_ arguments: RequestArguments) throws(RequestError) -> [String]? {
        guard let value = arguments.value("friends"), value != .null else { return nil }
        let limit = ProtocolLimits.maxActivityAudience
        guard case .array(let elements) = value, (1...limit).contains(elements.count) else {
            throw arguments.badRequest("friends must be an array of 1 to \(limit) usernames; leave it out for every friend")
        }
        var names: [String] = []
        names.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let name) = element, RequestArguments.hasLength(name, in: 1...ProtocolLimits.maxUsernameLength) else {
                throw arguments.badRequest("friends[\(index)] must be a username (a string of 1 to \(ProtocolLimits.maxUsernameLength) characters)")
            }
            names.append(name)
        }
        return names
    }

    /// `expires_in`: optional, a whole number of seconds.
    static func activityExpiry(_ arguments: RequestArguments) throws(RequestError) -> Int64? {
        guard let value = arguments.value("expires_in"), value != .null else { return nil }
        guard let seconds = value.int64Value else { throw arguments.badRequest("expires_in must be a whole number of seconds") }
        return seconds
    }

    /// `order`: optional, "time" (the default) or "activity"; true for "activity".
    static func matchOrderIsByActivity(_ arguments: RequestArguments) throws(RequestError) -> Bool {
        switch try arguments.optionalString("order") {
        case nil, "time": return false
        case "activity": return true
        default: throw arguments.badRequest("order must be \"time\" or \"activity\"")
        }
    }
}
