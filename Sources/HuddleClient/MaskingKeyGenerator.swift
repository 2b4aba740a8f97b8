import CHuddleShims

/// Masking keys for client frames (RFC 6455 §5.3). The masking key only has to be unpredictable
/// to intermediaries that see the traffic, not secret, so a fast generator (wyrand: one multiply
/// per key) seeded from OpenSSL's CSPRNG serves a whole event loop; calling RAND_bytes per frame
/// would cost a lock and hundreds of nanoseconds each.
struct MaskingKeyGenerator {
    private var state: UInt64

    init() {
        var seed: UInt64 = 0
        let seeded = withUnsafeMutableBytes(of: &seed) { RAND_bytes($0.baseAddress, Int32($0.count)) } == 1
        if !seeded {
            var system = SystemRandomNumberGenerator()
            seed = system.next()
        }
        state = seed
    }

    mutating func next() -> UInt32 {
        state &+= 0xa076_1d64_78bd_642f
        let product = state.multipliedFullWidth(by: state ^ 0xe703_7ed1_a0b4_28db)
        return UInt32(truncatingIfNeeded: product.high ^ product.low)
    }
}
