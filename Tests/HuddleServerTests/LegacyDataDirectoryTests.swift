import Foundation
import Testing

/// A data directory written by an older release starts on this one.
@Suite struct LegacyDataDirectoryTests {
    /// Writes `LegacyDataScenario` into the directory named by `HUDDLE_WRITE_LEGACY_DATA` (run
    /// with the release whose format the directory is to show); does nothing otherwise.
    @Test func writeTheScenarioWhenAsked() async throws {
        guard let path = ProcessInfo.processInfo.environment["HUDDLE_WRITE_LEGACY_DATA"], !path.isEmpty else { return }
        try await LegacyDataScenario.write(to: URL(fileURLWithPath: path))
    }
}
