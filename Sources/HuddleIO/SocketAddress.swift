import CHuddleShims
import Glibc

/// One resolved IPv4 or IPv6 endpoint, as `connect(2)` takes it. A value (no heap) so a
/// connecting client can keep the remaining candidates of a name and try them in turn.
public struct SocketAddress: Sendable, CustomStringConvertible {
    var storage: sockaddr_storage
    var length: socklen_t

    public var family: Int32 { Int32(storage.ss_family) }

    /// The numeric address and port, `127.0.0.1:8080` or `[::1]:8080`, for logs and errors.
    public var description: String {
        var storage = self.storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return withUnsafePointer(to: &storage) { pointer -> String in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                    return "[\(host)]:\(UInt16(bigEndian: address.pointee.sin6_port))"
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var raw = address.pointee.sin_addr
                inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                return "\(host):\(UInt16(bigEndian: address.pointee.sin_port))"
            }
        }
    }

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        storage = sockaddr_storage()
        self.length = min(length, socklen_t(MemoryLayout<sockaddr_storage>.size))
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.baseAddress!.copyMemory(from: address, byteCount: Int(self.length))
        }
    }
}
