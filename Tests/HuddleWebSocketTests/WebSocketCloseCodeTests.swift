import HuddleWebSocket
import Testing

@Suite struct WebSocketCloseCodeTests {
    @Test func codesAllowedOnTheWire() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999] {
            #expect(WebSocketCloseCode(rawValue: code).isValidOnWire, "\(code)")
        }
    }

    @Test func reservedAndUnassignedCodesAreRejected() {
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535] {
            #expect(!WebSocketCloseCode(rawValue: code).isValidOnWire, "\(code)")
        }
    }
}
