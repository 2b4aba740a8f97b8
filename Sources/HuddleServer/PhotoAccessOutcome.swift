import HuddleCore

/// What the core thread sends back for a photo request: the core's answer, or — when storage
/// refuses writes — the refusal the core never saw (an upload is refused before its body is
/// read; one whose ownership could not be logged is refused after its bytes were stored).
enum PhotoAccessOutcome: Sendable {
    case decided(PhotoAccess)
    case storageUnavailable
}
