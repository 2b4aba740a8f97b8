import HuddleCore
import Testing

@Suite struct ConnectionRefTests {
    /// Outputs list recipients sorted; the order is by loop, then serial.
    @Test func ordersByLoopThenSerial() {
        let refs = [ConnectionRef(loop: 1, serial: 2), ConnectionRef(loop: 0, serial: 9), ConnectionRef(loop: 1, serial: 1)]
        #expect(refs.sorted() == [ConnectionRef(loop: 0, serial: 9), ConnectionRef(loop: 1, serial: 1), ConnectionRef(loop: 1, serial: 2)])
    }
}
