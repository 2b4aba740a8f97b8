/// One activity a user has on: who may match with it, since when, and until when.
public struct ActivityStatus: Sendable, Equatable {
    public var activity: String
    /// nil: every friend; otherwise the chosen friends, sorted, unique.
    public var audience: [Username]?
    /// When it was turned on; turning it on again while on keeps this.
    public var since: Int64
    /// From this time on it counts as off, whether or not `expireActivities` has cleared it yet.
    public var expiresAt: Int64

    public init(activity: String, audience: [Username]?, since: Int64, expiresAt: Int64) {
        self.activity = activity
        self.audience = audience
        self.since = since
        self.expiresAt = expiresAt
    }

    /// Whether `friend` may match with it (friendship itself is checked by the caller).
    func admits(_ friend: Username) -> Bool {
        guard let audience else { return true }
        return audience.binarySearchContains(friend)
    }

    func isOn(at time: Int64) -> Bool { expiresAt > time }
}

extension [Username] {
    /// Membership in a sorted array, in O(log n).
    func binarySearchContains(_ name: Username) -> Bool {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < name { low = middle + 1 } else { high = middle }
        }
        return low < count && self[low] == name
    }
}
