/// The newest snapshot that passed every check, and what was passed over to find it.
public struct LoadedSnapshot: Sendable {
    public var payload: [UInt8]
    /// The log continues with the record after this one.
    public var lastSequence: UInt64
    public var file: String
    /// Newer snapshots that failed their checks: "name: reason", newest first. Worth a warning:
    /// the state was rebuilt from an older snapshot and a longer log tail.
    public var skipped: [String]
}
