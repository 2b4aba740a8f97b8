import ChildProcessExit
import Foundation
import Testing

/// `/metrics` carries the standard `process_*` gauges and `huddle_build_info` (issue 18), so a
/// stock dashboard shows memory, CPU, descriptors and which build is running.
@Suite("Process metrics", .ownThread)
struct ProcessMetricsTests {
    @Test("process gauges describe the server process, and build info names its commit")
    func processAndBuildInfo() async throws {
        let server = try await ServerProcess([])
        let metrics = try PrometheusText.fetch(port: server.port)
        let pid = server.process.processIdentifier
        // The same facts, read by the test from the outside.
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        let openFDs = try #require(metrics.value("process_open_fds"))
        #expect(metrics.types["process_open_fds"] == "gauge")
        #expect(abs(openFDs - Double(fds)) <= 4, "server reports \(openFDs) open fds, /proc shows \(fds)")
        let rss = try #require(metrics.value("process_resident_memory_bytes"))
        #expect(rss > 1_000_000 && rss < 4_000_000_000, "rss \(rss)")
        #expect(metrics.types["process_cpu_seconds_total"] == "counter")
        #expect(try #require(metrics.value("process_cpu_seconds_total")) > 0)
        #expect((metrics.value("process_max_fds") ?? 0) >= openFDs)
        let started = try #require(metrics.value("process_start_time_seconds"))
        let now = Date().timeIntervalSince1970
        // Started by this test, a moment ago (clock ticks are 10 ms; a loaded machine is slow).
        #expect(started <= now + 1 && started > now - 600, "start time \(started), now \(now)")
        let build = try #require(metrics.samples.first { $0.name == "huddle_build_info" })
        #expect(build.value == 1)
        // The same commit --version names (VersionTests holds that one to the checkout's HEAD).
        let version = try runChildToCompletion(ServerProcess.binary.path, ["--version"], timeout: 30).output
        #expect(version.contains("commit \(build.labels["commit"] ?? "-"))"), "\(build.labels) vs \(version)")
        #expect(build.labels["version"]?.isEmpty == false)
        try await server.stop()
    }
}

/// `--metrics-token` (issue 18): /metrics answers only with `Authorization: Bearer TOKEN`, so
/// a server on a public address does not publish its load to anyone; /healthz stays open.
@Suite("Metrics token", .ownThread)
struct MetricsTokenTests {
    @Test("with --metrics-token, /metrics needs the bearer token and /healthz does not")
    func metricsNeedToken() async throws {
        let token = "metrics-\(UUID().uuidString)"
        let server = try await ServerProcess(["--metrics-token", token])
        let anonymous = try HTTPExchange(port: server.port, "GET", "/metrics")
        #expect(anonymous.status == 401)
        #expect(anonymous.headers["www-authenticate"]?.hasPrefix("Bearer") == true, "\(anonymous.headers)")
        #expect(!anonymous.body.contains("huddle_"))
        #expect(try HTTPExchange(port: server.port, "GET", "/metrics", key: "wrong").status == 401)
        let allowed = try HTTPExchange(port: server.port, "GET", "/metrics", key: token)
        #expect(allowed.status == 200 && allowed.body.contains("huddle_build_info"))
        #expect(try HTTPExchange(port: server.port, "GET", "/healthz").status == 200)
        try await server.stop()
        #expect(!server.logText.contains(token))
    }
}
