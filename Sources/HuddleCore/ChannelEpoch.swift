/// Makes a channel's epoch when it is created by its first publication.
///
/// The epoch must differ from any earlier incarnation of the channel (a server that lost its
/// state starts counting again) yet be a pure function of the log, so that a replay and every
/// node of a cluster agree: the creating publication's time and the count of channels created
/// so far, both in base 36 — e.g. "mi8q3c00-1".
enum ChannelEpoch {
    static func make(time: Int64, sequence: UInt64) -> String {
        String(time, radix: 36) + "-" + String(sequence, radix: 36)
    }
}
