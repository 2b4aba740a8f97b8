/// Which servers a `wss://` connection trusts. Equal options share one `TLSClientContext` per
/// event loop, so the CA store is loaded once per loop, not once per connection.
public struct ClientTLSOptions: Sendable, Hashable {
    /// A PEM file of certificates to trust instead of the system store (a private or test CA);
    /// nil trusts the system store.
    public var caFile: String?
    /// Accept any certificate for any name. Only for self-signed test servers: anyone on the
    /// path can then read and change the traffic.
    public var insecure: Bool

    public init(caFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.insecure = insecure
    }
}
