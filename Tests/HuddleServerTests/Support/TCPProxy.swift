import CHuddleShims
import Foundation
import Synchronization

/// A TCP relay between clients and a server, which a test controls: it can cut every relayed
/// connection (FIN, or RST like a killed socket), freeze them (bytes silently dropped both
/// ways, as a dead network path without a FIN looks), mute them (the server's bytes dropped:
/// requests arrive, replies are lost), refuse new ones (the server is away),
/// and point at a restarted server's new port while clients keep the proxy's address.
/// One thread polls everything; blocking writes are fine for tests' small traffic.
final class TCPProxy: @unchecked Sendable {
    /// The port clients connect to.
    let port: Int
    private let listener: Int32
    private let control: Mutex<Control>
    private var thread: Thread?

    private struct Control {
        var targetPort: Int
        var refusing = false
        var cutRequested: Bool?  // the value: with RST
        var freezeRequested = false
        var muteRequested = false
        var stopped = false
        var accepted = 0
        /// Cut and freeze requests made, and those the relay thread has carried out.
        var requested = 0
        var applied = 0
    }

    /// A client and the server connection made for it.
    private struct Pair {
        var client: Int32
        var server: Int32
        /// Frozen: whatever arrives is read and dropped.
        var frozen = false
        /// Muted: what the server sends is read and dropped; the client's bytes still arrive.
        var muted = false
    }

    init(targetPort: Int) throws {
        control = Mutex(Control(targetPort: targetPort))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("proxy socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 128) == 0 else {
            Glibc.close(fd)
            throw TestFailure("proxy bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var local = sockaddr_in()
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: local.sin_port))
        let thread = Thread { [self] in relay() }
        thread.name = "test-proxy"
        self.thread = thread
        thread.start()
    }

    var url: String { "ws://127.0.0.1:\(port)" }

    /// Relays new connections to `port` (a restarted server).
    func setTarget(_ port: Int) { control.withLock { $0.targetPort = port } }

    /// New connections are closed at once, as if nothing listened.
    func setRefusing(_ refusing: Bool) { control.withLock { $0.refusing = refusing } }

    /// Closes every relayed connection on both sides; with `reset`, as RST (a killed socket).
    /// Returns once done.
    func cutAll(reset: Bool) {
        awaitRelay(control.withLock { $0.cutRequested = reset; $0.requested += 1; return $0.requested })
    }

    /// From now on, bytes on the connections relayed so far are dropped: both ends hear
    /// nothing, and nothing tells them the path is dead. New connections relay normally.
    /// Returns once in force, so whatever a test sends next is lost.
    func freezeAll() {
        awaitRelay(control.withLock { $0.freezeRequested = true; $0.requested += 1; return $0.requested })
    }

    /// From now on, what the server sends on the connections relayed so far is dropped, while
    /// what the clients send still reaches it: requests are done, their replies lost. New
    /// connections relay normally. Returns once in force.
    func muteAll() {
        awaitRelay(control.withLock { $0.muteRequested = true; $0.requested += 1; return $0.requested })
    }

    /// Waits (briefly: one relay turn) until the relay thread has carried out request `ticket`.
    private func awaitRelay(_ ticket: Int) {
        while control.withLock({ $0.applied < ticket && !$0.stopped }) { usleep(1_000) }
    }

    /// Connections accepted so far.
    var acceptedCount: Int { control.withLock { $0.accepted } }

    /// Closes everything; the relay thread ends within a poll interval. Call it when done
    /// (the thread keeps the proxy alive until then).
    func stop() {
        control.withLock { $0.stopped = true }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func relay() {
        var pairs: [Pair] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer {
            for pair in pairs { Glibc.close(pair.client); Glibc.close(pair.server) }
            Glibc.close(listener)
        }
        while true {
            let commands = control.withLock { control -> Control in
                let snapshot = control
                control.cutRequested = nil
                control.freezeRequested = false
                control.muteRequested = false
                return snapshot
            }
            if commands.stopped { return }
            if let reset = commands.cutRequested {
                for pair in pairs { Self.shut(pair.client, reset: reset); Self.shut(pair.server, reset: reset) }
                pairs = []
            }
            if commands.freezeRequested {
                for index in pairs.indices { pairs[index].frozen = true }
            }
            if commands.muteRequested {
                for index in pairs.indices { pairs[index].muted = true }
            }
            control.withLock { $0.applied = commands.requested }

            var polled = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for pair in pairs {
                polled.append(pollfd(fd: pair.client, events: Int16(POLLIN), revents: 0))
                polled.append(pollfd(fd: pair.server, events: Int16(POLLIN), revents: 0))
            }
            guard poll(&polled, nfds_t(polled.count), 20) > 0 else { continue }

            if polled[0].revents & Int16(POLLIN) != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    // Read now, not at the top of the turn: a test's change must apply to the next accept.
                    let (refusing, target) = control.withLock { control -> (Bool, Int) in
                        control.accepted += 1
                        return (control.refusing, control.targetPort)
                    }
                    if refusing {
                        Glibc.close(client)
                    } else if let server = Self.connect(port: target) {
                        pairs.append(Pair(client: client, server: server))
                    } else {
                        Glibc.close(client)  // the server is down: the client sees its connection end
                    }
                }
            }
            var ended: Set<Int> = []
            for (index, pair) in pairs.enumerated() where 2 + index * 2 < polled.count {
                let clientEvents = polled[1 + index * 2].revents
                let serverEvents = polled[2 + index * 2].revents
                if clientEvents != 0 && !forward(from: pair.client, to: pair.server, dropping: pair.frozen, &buffer) { ended.insert(index) }
                if serverEvents != 0 && !forward(from: pair.server, to: pair.client, dropping: pair.frozen || pair.muted, &buffer) { ended.insert(index) }
            }
            for index in ended.sorted(by: >) {
                Glibc.close(pairs[index].client)
                Glibc.close(pairs[index].server)
                pairs.remove(at: index)
            }
        }
    }

    /// Moves what is readable on `source` to `destination`; false when either side ended.
    private func forward(from source: Int32, to destination: Int32, dropping: Bool, _ buffer: inout [UInt8]) -> Bool {
        let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return false }
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        if dropping { return true }
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    private static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }

    private static func shut(_ fd: Int32, reset: Bool) {
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        Glibc.close(fd)
    }
}
