import HuddleProtocol

/// Who may read which photo (durable): a photo is named by the SHA-256 of its bytes, and its
/// owners are the users who uploaded those bytes. Content addressing means two users who upload
/// the same bytes share one file and both own it; neither learns of the other.
///
/// Ownership outlives the memories that use a photo: deleting a memory or a point leaves the
/// photo readable by its owner and the file in place (no garbage collection yet).
/// Coded as a list sorted by hash, owners sorted; the per-owner counts and byte totals are
/// rebuilt when decoding.
public struct PhotoOwnership: Sendable, Equatable {
    private struct Photo: Sendable, Equatable {
        var size: Int
        var owners: Set<Username>
    }

    private var byHash: [String: Photo] = [:]
    private var countByOwner: [Username: Int] = [:]
    private var bytesByOwner: [Username: Int] = [:]

    public init() {}

    public var count: Int { byHash.count }

    public func owns(_ user: Username, _ hash: String) -> Bool {
        byHash[hash]?.owners.contains(user) == true
    }

    /// The size in bytes of a photo someone owns.
    public func size(of hash: String) -> Int? {
        byHash[hash]?.size
    }

    public func photoCount(of user: Username) -> Int {
        countByOwner[user] ?? 0
    }

    /// The bytes of the photos `user` owns, each at its size (what the photo quota counts).
    public func storedBytes(of user: Username) -> Int {
        bytesByOwner[user] ?? 0
    }

    /// Makes `user` an owner of the photo; the first upload of the bytes decides its size.
    mutating func add(_ user: Username, _ hash: String, size: Int) {
        guard byHash[hash, default: Photo(size: size, owners: [])].owners.insert(user).inserted else { return }
        countByOwner[user, default: 0] += 1
        bytesByOwner[user, default: 0] += byHash[hash]!.size
    }

    /// The photos the user owns, by hash, sorted.
    public func hashes(ownedBy user: Username) -> [String] {
        byHash.filter { $0.value.owners.contains(user) }.map(\.key).sorted()
    }

    /// The photos `erase(user)` would leave nobody owning, sorted.
    func orphanedByErasing(_ user: Username) -> [String] {
        byHash.filter { $0.value.owners == [user] }.map(\.key).sorted()
    }

    /// Account deletion: the user owns no photo any more. Returns the hashes nobody owns now,
    /// sorted: their files may be removed from disk.
    mutating func erase(_ user: Username) -> [String] {
        var orphaned: [String] = []
        for hash in hashes(ownedBy: user) {
            byHash[hash]!.owners.remove(user)
            if byHash[hash]!.owners.isEmpty {
                byHash[hash] = nil
                orphaned.append(hash)
            }
        }
        countByOwner[user] = nil
        bytesByOwner[user] = nil
        return orphaned
    }
}

/// `{hash, size, owners}` objects by hash, owners sorted.
extension PhotoOwnership: PersistedValue {
    var persisted: JSONValue {
        .array(byHash.keys.sorted().map { hash in
            let photo = byHash[hash]!
            return .record([("hash", hash.persisted), ("size", photo.size.persisted), ("owners", photo.owners.sorted().persisted)])
        })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "Photo") {
            let hash: String = try f("hash")
            let size: Int = try f("size")
            let owners: [Username] = try f("owners")
            guard byHash[hash] == nil, PhotoHash.isValid(hash), size > 0, !owners.isEmpty, Set(owners).count == owners.count else {
                throw RecordDecodingError("photo \(hash) is repeated or malformed")
            }
            for owner in owners { add(owner, hash, size: size) }
        }
    }
}
