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
}

extension PhotoOwnership: Codable {
    private struct Record: Codable {
        var hash: String
        var size: Int
        var owners: [Username]
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            let record = try container.decode(Record.self)
            guard byHash[record.hash] == nil, PhotoHash.isValid(record.hash), record.size > 0, !record.owners.isEmpty,
                  Set(record.owners).count == record.owners.count
            else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "photo \(record.hash) is repeated or malformed")
            }
            for owner in record.owners { add(owner, record.hash, size: record.size) }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for hash in byHash.keys.sorted() {
            let photo = byHash[hash]!
            try container.encode(Record(hash: hash, size: photo.size, owners: photo.owners.sorted()))
        }
    }
}
