import HuddleBuildInfo
import HuddleCrypto
import HuddleStore
import Logging

/// The one start-up line that says what this server is running with: which build, which
/// features are on, where the data is and how durable an ok is, the main limits. Secrets appear
/// only as on/off.
enum StartupSummary {
    static func metadata(_ configuration: ServerConfiguration, threads: Int, tlsPort: Int?) -> Logger.Metadata {
        [
            "version": "\(BuildInfo.version)",
            "commit": "\(BuildInfo.commit)",
            "threads": "\(threads)",
            "tls": "\(tlsPort.map { "on (port \($0))" } ?? "off")",
            "http_api": "\(configuration.apiKey == nil ? "off" : "on")",
            "push": "\(configuration.push.webhook.map { "on (\($0.logged), signed: \(configuration.push.secret != nil))" } ?? "off")",
            "metrics": "\(configuration.metricsToken == nil ? "open" : "token")",
            "web_app": "\(configuration.webApp ? "on (/app/, /sdk/huddle.js)" : "off")",
            "bench_endpoints": "\(configuration.benchEndpoints ? "on" : "off")",
            "data_dir": "\(configuration.dataDirectory)",
            "fsync": "\(fsyncName(configuration.syncPolicy))",
            "snapshot_interval_s": "\(configuration.snapshotIntervalMilliseconds / 1000)",
            "rate_limit": "\(configuration.requestsPerSecond)/s per connection, \(configuration.userRequestsPerSecond)/s per user",
            "max_outbound_bytes": "\(configuration.maxOutboundBytes)",
            "max_photo_size": "\(configuration.maxPhotoSize)",
            "summary_interval_s": "\(configuration.summaryIntervalMilliseconds / 1000)",
            "cluster": "\(configuration.cluster.map(clusterSummary) ?? "off")",
            "identity": "\(identitySummary(configuration.identity))",
        ]
    }

    /// Which cluster this node joined and how durable its ok is there (`--redis` and its flags).
    private static func clusterSummary(_ cluster: ClusterSettings) -> String {
        "on (node \(cluster.nodeName), \(cluster.redis), shared dir \(cluster.sharedDirectory), wait replicas \(cluster.waitReplicas))"
    }

    /// The OIDC issuers (issuer, audiences, where the keys are) and the app-token key kind; the
    /// secret never.
    private static func identitySummary(_ identity: IdentitySettings) -> String {
        guard identity.isEnabled else { return "off" }
        var parts = identity.issuers.map { "oidc \($0.issuer) aud \($0.audiences.joined(separator: ",")) jwks \($0.keys)" }
        if let app = identity.appTokens {
            parts.append("app tokens \(app.key.algorithm.rawValue)\(app.issuer.map { " iss \($0)" } ?? "")\(app.audience.map { " aud \($0)" } ?? "")")
        }
        return "on (\(parts.joined(separator: "; ")))"
    }

    /// The `--fsync` word for the policy.
    private static func fsyncName(_ policy: SyncPolicy) -> String {
        switch policy {
        case .always: "always"
        case .everySecond: "everysec"
        case .never: "no"
        }
    }
}
