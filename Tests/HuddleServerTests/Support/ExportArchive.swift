import Foundation

/// The export archive as a client sees it (protocol.md, "Export"): `GET /api/v1/export` with a
/// session token, its response, and the ustar archive read back by a small reader of its own
/// (independent of the server's writer: the test checks the format, not the code against itself).
struct ExportArchive {
    struct Entry {
        var name: String
        var bytes: [UInt8]
    }

    var entries: [Entry]

    /// `export.json`, parsed.
    var document: JSONObject? {
        guard let entry = entries.first(where: { $0.name == "export.json" }) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(entry.bytes)) as? JSONObject
    }

    /// The photos, by the hash their name carries (`photos/<hash>.<ext>`).
    var photos: [String: [UInt8]] {
        var photos: [String: [UInt8]] = [:]
        for entry in entries where entry.name.hasPrefix("photos/") {
            let file = entry.name.dropFirst("photos/".count)
            photos[String(file.prefix { $0 != "." })] = entry.bytes
        }
        return photos
    }

    /// Reads a ustar archive: 512-byte headers (checksum checked), each file's bytes padded to
    /// 512, two zero blocks at the end and nothing after them.
    init(tar bytes: [UInt8]) throws {
        entries = []
        var offset = 0
        while true {
            guard offset + 512 <= bytes.count else { throw TestFailure("the archive ends inside a header at \(offset)") }
            let header = Array(bytes[offset..<(offset + 512)])
            if header.allSatisfy({ $0 == 0 }) {
                guard bytes.count == offset + 1024, bytes[(offset + 512)...].allSatisfy({ $0 == 0 }) else {
                    throw TestFailure("the archive does not end with exactly two zero blocks (\(bytes.count - offset) bytes left)")
                }
                return
            }
            func field(_ start: Int, _ length: Int) -> String {
                String(decoding: header[start..<(start + length)].prefix { $0 != 0 }, as: UTF8.self)
            }
            func octal(_ start: Int, _ length: Int) throws -> Int {
                let text = field(start, length).trimmingCharacters(in: .whitespaces)
                guard let value = Int(text, radix: 8) else { throw TestFailure("not an octal number in a tar header: \(text)") }
                return value
            }
            guard field(257, 6) == "ustar", field(263, 2) == "00" else { throw TestFailure("not a ustar header at \(offset)") }
            let checksum = header.enumerated().reduce(0) { $0 + ((148..<156).contains($1.offset) ? 0x20 : Int($1.element)) }
            guard try octal(148, 8) == checksum else { throw TestFailure("bad header checksum at \(offset)") }
            guard header[156] == UInt8(ascii: "0") else { throw TestFailure("not a regular file at \(offset)") }
            let size = try octal(124, 12)
            let start = offset + 512
            guard start + size <= bytes.count else { throw TestFailure("\(field(0, 100)) is cut short") }
            entries.append(Entry(name: field(0, 100), bytes: Array(bytes[start..<(start + size)])))
            offset = start + (size + 511) / 512 * 512
        }
    }

    /// `GET /api/v1/export`; the archive when the answer is 200.
    static func download(token: String?, port: Int) throws -> (response: PhotoRequest.Response, archive: ExportArchive?) {
        let request = try PhotoRequest(port: port)
        try request.sendHead("GET", "/api/v1/export", token: token)
        let response = try request.readResponse()
        guard response.status == 200 else { return (response, nil) }
        return (response, try ExportArchive(tar: response.body))
    }
}
