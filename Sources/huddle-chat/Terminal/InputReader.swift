import Glibc
import HuddleIO

/// Reads standard input on a thread of its own and hands every chunk to the event loop, where
/// the rest of huddle-chat lives. A thread rather than the loop's epoll: stdin may be a regular
/// file (`huddle-chat < script`), which epoll refuses.
enum InputReader {
    /// `received` runs on `loop` with each chunk, then `ended` once at end of input.
    static func start(loop: EventLoop, received: @escaping @Sendable ([UInt8]) -> Void, ended: @escaping @Sendable () -> Void) throws {
        _ = try LoopThread.spawn(name: "huddle-chat-stdin") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count > 0 {
                    let chunk = Array(buffer[0..<count])
                    loop.execute { received(chunk) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    loop.execute { ended() }
                    return
                }
            }
        }
    }
}
