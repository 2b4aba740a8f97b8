import HuddleIO
import Synchronization

/// Local addresses that connections bind before connecting, taken in turn. Toward one server
/// address a machine has one range of ephemeral ports per source address (about 28,000 by
/// default), so a load generator holding more connections spreads them over several
/// addresses (127.0.0.2, 127.0.0.3, … on loopback). Every copy of the options holding it
/// shares the turn.
public final class SourceAddresses: Sendable {
    public let all: [SocketAddress]
    private let taken = Atomic<Int>(0)

    /// `hosts`: at least one address, numeric (`127.0.0.2`, `::1`) or a name.
    public init(_ hosts: [String]) throws {
        precondition(!hosts.isEmpty, "at least one source address")
        all = try hosts.map { try Socket.resolve(host: $0, port: 0)[0] }
    }

    /// The address whose turn it is.
    public func next() -> SocketAddress {
        all[taken.add(1, ordering: .relaxed).oldValue % all.count]
    }
}
