import HuddleProtocol
import Testing

/// The export archive's ustar headers (protocol.md, "Export"), checked field by field against
/// POSIX.1-1988's layout.
@Suite struct TarArchiveTests {
    private func field(_ header: [UInt8], _ start: Int, _ length: Int) -> String {
        String(decoding: header[start..<(start + length)].prefix { $0 != 0 }, as: UTF8.self)
    }

    @Test func aHeaderHasUstarsFieldsAndChecksum() {
        let header = TarArchive.header(name: "photos/ab.jpg", size: 70_000, modified: 1_763_712_000)
        #expect(header.count == 512)
        #expect(field(header, 0, 100) == "photos/ab.jpg")
        #expect(field(header, 100, 8) == "0000644")
        #expect(field(header, 124, 12) == String(70_000, radix: 8).leftPadded(to: 11))
        #expect(field(header, 136, 12) == String(1_763_712_000, radix: 8).leftPadded(to: 11))
        #expect(header[156] == UInt8(ascii: "0"))
        #expect(field(header, 257, 6) == "ustar" && field(header, 263, 2) == "00")
        // The checksum: the header's bytes summed with its own field as spaces; 6 digits, NUL, space.
        let sum = header.enumerated().reduce(0) { $0 + ((148..<156).contains($1.offset) ? 0x20 : Int($1.element)) }
        #expect(field(header, 148, 6) == String(sum, radix: 8).leftPadded(to: 6) && header[154] == 0 && header[155] == 0x20)
    }

    @Test func lengthsCountHeadersPaddingAndTheEnd() {
        #expect(TarArchive.paddingLength(after: 0) == 0)
        #expect(TarArchive.paddingLength(after: 1) == 511)
        #expect(TarArchive.paddingLength(after: 512) == 0)
        #expect(TarArchive.end.count == 1024 && TarArchive.end.allSatisfy { $0 == 0 })
        #expect(TarArchive.archiveLength(fileSizes: []) == 1024)
        #expect(TarArchive.archiveLength(fileSizes: [1, 512, 513]) == 1024 + 3 * 512 + 512 + 512 + 1024)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
