import Foundation

/// The body of `GET path` from the server on loopback port `port` (HTTP/1.0: the server closes
/// when done, so the body is everything after the head).
func httpGet(port: Int, path: String) async throws -> String {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw ChildProcessFailure("socket: \(String(cString: strerror(errno)))") }
    defer { close(socket) }
    // A server that never answers fails the test instead of hanging it.
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw ChildProcessFailure("connect to port \(port): \(String(cString: strerror(errno)))") }
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard send(socket, request, request.count, 0) == request.count else { throw ChildProcessFailure("send: \(String(cString: strerror(errno)))") }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = recv(socket, &buffer, buffer.count, 0)
        guard count > 0 else {
            if count < 0 { throw ChildProcessFailure("recv from port \(port): \(String(cString: strerror(errno)))") }
            break
        }
        response += buffer[0..<count]
    }
    let text = String(decoding: response, as: UTF8.self)
    guard let head = text.range(of: "\r\n\r\n") else { throw ChildProcessFailure("no HTTP response from port \(port): \(text)") }
    return String(text[head.upperBound...])
}
