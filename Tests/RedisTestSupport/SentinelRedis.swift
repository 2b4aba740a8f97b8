import Foundation

/// A Sentinel-managed Redis for one test (issue 14, acceptance 3): a primary, one replica and
/// three Sentinels (`RedisProcess`), ready once the replica's link is up and every Sentinel
/// knows the replica and the two other Sentinels, so that a kill of the primary is followed by
/// a failover (down after 1 s, a majority of Sentinels to authorize it).
public final class SentinelRedis: @unchecked Sendable {
    public let primary: RedisProcess
    public let replica: RedisProcess
    public let sentinels: [RedisProcess]

    /// The URL nodes are given: every Sentinel, and the master's name.
    public var endpoint: String {
        "redis+sentinel://" + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") + "/\(RedisProcess.masterName)"
    }

    /// `minReplicasToWrite`: the primary refuses writes while fewer replicas are linked
    /// (`min-replicas-to-write`), what an operator pairs with `--redis-wait-replicas`.
    public init(minReplicasToWrite: Int = 0) async throws {
        primary = try await RedisProcess()
        replica = try await RedisProcess(.replica(of: primary.port))
        let (primary, replica) = (primary, replica)
        try await eventually("the replica's link to the primary") {
            RedisProbe.command(port: replica.port, ["INFO", "replication"])?.contains("master_link_status:up") == true
        }
        if minReplicasToWrite > 0 {
            guard RedisProbe.command(port: primary.port, ["CONFIG", "SET", "min-replicas-to-write", "\(minReplicasToWrite)"]) == "OK" else {
                throw TestFailure("CONFIG SET min-replicas-to-write refused")
            }
        }
        var sentinels: [RedisProcess] = []
        for _ in 1...3 { sentinels.append(try await RedisProcess(.sentinel(monitoring: primary.port))) }
        self.sentinels = sentinels
        for sentinel in sentinels {
            try await eventually("Sentinel \(sentinel.port)'s discovery of the replica and the other Sentinels", timeout: 60) {
                RedisProbe.command(port: sentinel.port, ["INFO", "sentinel"])?
                    .contains("status=ok,address=127.0.0.1:\(primary.port),slaves=1,sentinels=3") == true
            }
        }
    }

    /// The port of the master the Sentinels name now (nil while none answers).
    public func masterPort() -> Int? {
        for sentinel in sentinels {
            if let answer = RedisProbe.command(port: sentinel.port, ["SENTINEL", "get-master-addr-by-name", RedisProcess.masterName]),
               let port = answer.split(whereSeparator: { !$0.isNumber }).last.flatMap({ Int($0) }) {
                return port
            }
        }
        return nil
    }

    public var logText: String {
        ([("primary", primary), ("replica", replica)] + sentinels.enumerated().map { ("sentinel \($0.offset + 1)", $0.element) })
            .map { "=== redis \($0.0) (port \($0.1.port))\n\($0.1.logText)" }.joined(separator: "\n")
    }
}
