/// A live connection, as the core knows it: which I/O loop owns it and its serial number there.
/// Connections are ephemeral: they are never logged or snapshotted.
public struct ConnectionRef: Hashable, Sendable, Comparable {
    public var loop: Int
    public var serial: UInt64

    public init(loop: Int, serial: UInt64) {
        self.loop = loop
        self.serial = serial
    }

    public static func < (lhs: ConnectionRef, rhs: ConnectionRef) -> Bool {
        (lhs.loop, lhs.serial) < (rhs.loop, rhs.serial)
    }
}
