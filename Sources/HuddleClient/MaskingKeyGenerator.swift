/// Masking keys for client frames (RFC 6455 §5.3). The masking key only has to be unpredictable
/// to intermediaries that see the traffic, not secret, so a fast generator (wyrand: one multiply
/// per key) seeded from the kernel's CSPRNG (getrandom, through `SystemRandomNumberGenerator`)
/// serves a whole event loop; a system call per frame would cost hundreds of nanoseconds each.
struct MaskingKeyGenerator {
    private var state: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    mutating func next() -> UInt32 {
        state &+= 0xa076_1d64_78bd_642f
        let product = state.multipliedFullWidth(by: state ^ 0xe703_7ed1_a0b4_28db)
        return UInt32(truncatingIfNeeded: product.high ^ product.low)
    }
}
