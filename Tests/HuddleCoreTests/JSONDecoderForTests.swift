import Foundation
import HuddleCore

/// Encodes and decodes a durable state the way snapshots do (JSON, sorted keys).
enum JSONDecoderForTests {
    static func roundTrip(_ state: CoreDurableState) throws -> CoreDurableState {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try JSONDecoder().decode(CoreDurableState.self, from: encoder.encode(state))
    }
}
