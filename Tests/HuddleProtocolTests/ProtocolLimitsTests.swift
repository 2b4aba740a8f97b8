import HuddleProtocol
import Testing

@Suite struct ProtocolLimitsTests {
    /// protocol.md promises these numbers to client authors.
    @Test func defaultsMatchProtocolDocument() {
        let limits = ProtocolLimits()
        #expect(limits.maxDepth == 32)
        #expect(limits.maxDataBytes == 16 * 1024)
        #expect(limits.maxIDLength == 64)
        #expect(limits.maxHistoryLimit == 100)
        #expect(limits.defaultHistoryLimit == 50)
    }
}
