import ArgumentParser
import Glibc
import HuddleRedis

/// `huddle serve`'s cluster-mode flags: `--redis`, `--node-name`, `--shared-dir`.
extension Serve {
    func validateCluster() throws {
        guard let redis else {
            if nodeName != nil || sharedDir != nil { throw ValidationError("--node-name and --shared-dir are for cluster mode: they need --redis") }
            return
        }
        do {
            _ = try RedisEndpoint(url: redis)
        } catch {
            throw ValidationError("--redis: \(error)")
        }
        guard let sharedDir, !sharedDir.isEmpty else {
            throw ValidationError("--redis needs --shared-dir DIR: the directory (a shared file system) where every node of the cluster reads and writes photos")
        }
        var status = stat()
        guard stat(sharedDir, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw ValidationError("--shared-dir \(sharedDir) is not a directory")
        }
        if let nodeName {
            guard !nodeName.isEmpty, nodeName.utf8.count <= 100, nodeName.allSatisfy({ !$0.isWhitespace && !$0.isNewline }) else {
                throw ValidationError("--node-name must be 1–100 characters without spaces")
            }
        }
    }

    /// The host name and the port: unique as long as one host runs one node per port.
    static func defaultNodeName(port: Int) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let named = buffer.withUnsafeMutableBufferPointer { gethostname(UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), $0.count - 1) == 0 }
        let host = named ? String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self) : "localhost"
        return "\(host):\(port)"
    }
}
