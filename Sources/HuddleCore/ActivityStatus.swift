import HuddleProtocol

extension ActivityStatus {
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
