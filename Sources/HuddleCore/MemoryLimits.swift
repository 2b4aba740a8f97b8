/// The bounds that keep one user's memories finite (protocol.md, "Limits"). They only decide
/// what `handle` accepts, never what `apply` does, so changing them cannot make a replay differ.
///
/// Sized so that the largest reply stays small enough for a phone: a memory with all its points
/// is at most about 1.5 MB of JSON (100 points × a 2000-character note, 20 photo hashes and a
/// place name), the `memories` list at most about 2.5 MB.
public enum MemoryLimits {
    public static let memoriesPerUser = 1000
    public static let pointsPerMemory = 100
    public static let photosPerPoint = 20
    /// Distinct photos a user may own (upload); a re-upload of one they own counts once.
    public static let photosPerUser = 10_000
    public static let titleLengths = 1...200
    public static let maxPlaceNameLength = 200
    public static let maxNoteLength = 2000
}
