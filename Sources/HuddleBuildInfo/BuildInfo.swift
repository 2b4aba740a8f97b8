/// What build a binary is: the release it claims and the commit it was built from (stamped by
/// the BuildCommit plugin; "unknown" outside a git checkout). Shared by every Huddle binary so
/// `--version` reads the same everywhere.
public enum BuildInfo {
    /// Raised by hand at each release.
    public static let version = "0.18.0"

    /// `--version`'s text: `0.18.0 (commit 1a2b3c4d5e6f)`.
    public static var versionLine: String { "\(version) (commit \(commit))" }
}
