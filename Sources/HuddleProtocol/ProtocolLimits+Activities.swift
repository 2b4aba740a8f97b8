/// Request limits of the activity ops (protocol.md, "Activities and matches" and "Limits").
/// Constants rather than stored settings: a client must be able to rely on them.
extension ProtocolLimits {
    /// An activity name in a request; no listed name is longer (the server refuses such lists).
    public static let maxActivityNameLength = 32
    /// How many friends an `activity_on` audience may name.
    public static let maxActivityAudience = 256
    /// A username is never longer, so a longer audience entry cannot name a friend.
    public static let maxUsernameLength = 32
}
