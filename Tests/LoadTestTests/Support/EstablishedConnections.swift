import Foundation

/// The machine's established IPv4 TCP connections toward local port `port`, counted by the
/// connecting side's address (from /proc/net/tcp: what the kernel itself holds, not what the
/// harness says it did).
func establishedConnectionsBySource(toPort port: Int) throws -> [String: Int] {
    // Read to its end: a /proc file reports size 0, which a sized read takes at its word.
    guard let file = FileHandle(forReadingAtPath: "/proc/net/tcp") else { throw ChildProcessFailure("cannot open /proc/net/tcp") }
    defer { try? file.close() }
    let table = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    var counts: [String: Int] = [:]
    for line in table.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        // sl local_address rem_address st …; addresses are HEXADDR:HEXPORT, the address in
        // the host's (little-endian) byte order.
        guard fields.count > 3, fields[3] == "01" else { continue }
        let local = fields[1].split(separator: ":"), remote = fields[2].split(separator: ":")
        guard local.count == 2, remote.count == 2, Int(remote[1], radix: 16) == port, let raw = UInt32(local[0], radix: 16) else { continue }
        let address = "\(raw & 0xff).\(raw >> 8 & 0xff).\(raw >> 16 & 0xff).\(raw >> 24)"
        counts[address, default: 0] += 1
    }
    return counts
}
