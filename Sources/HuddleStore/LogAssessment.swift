/// The rules that decide whether a log, as scanned, can be opened — shared by recovery (which
/// refuses on the first fatal finding and cuts the torn tail) and `verify` (which lists them).
///
/// - Damage that an interrupted write could leave (short header, short payload, bad CRC, absurd
///   length) is cut off only when it sits in the last segment and no valid record follows it
///   anywhere: then it can only be the tail of an append whose sync never returned, which was
///   therefore never acknowledged. Rotation syncs a segment before the next one exists, so
///   damage in an earlier segment is never a torn write.
/// - Anything else refuses to open: dropping those bytes could drop acknowledged records.
/// - Sequences must continue from segment to segment. A gap is allowed only where the snapshot
///   covers it (the log was behind the snapshot, or its start was removed after one).
struct LogAssessment {
    var fatal: [StoreError] = []
    /// Index in the scanned segments of the one whose tail is to be cut, and where.
    var tornTail: (segment: Int, damage: SegmentDamage)?

    init(segments: [SegmentSummary], snapshotSequence: UInt64) {
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            if let problem = segment.headerProblem {
                fatal.append(.corruptLog(file: segment.name, offset: 0, reason: problem))
                continue
            }
            if index == 0 {
                if segment.firstSequence > snapshotSequence + 1 {
                    fatal.append(.corruptLog(file: segment.name, offset: 0, reason:
                        "the log starts at sequence \(segment.firstSequence) but the snapshot covers only up to "
                        + "\(snapshotSequence): records \(snapshotSequence + 1)...\(segment.firstSequence - 1) are missing"))
                }
            } else {
                let previous = segments[index - 1]
                if previous.headerProblem == nil && previous.damage == nil {
                    if segment.firstSequence <= previous.lastSequence {
                        fatal.append(.corruptLog(file: segment.name, offset: 0, reason:
                            "starts at sequence \(segment.firstSequence), but \(previous.name) already reaches \(previous.lastSequence)"))
                    } else if segment.firstSequence > previous.lastSequence + 1 && segment.firstSequence > snapshotSequence + 1 {
                        fatal.append(.corruptLog(file: segment.name, offset: 0, reason:
                            "sequence gap: \(previous.name) ends at \(previous.lastSequence), this segment starts at "
                            + "\(segment.firstSequence), and the snapshot covers only up to \(snapshotSequence)"))
                    }
                }
            }
            guard let damage = segment.damage else { continue }
            if !damage.couldBeTornWrite {
                fatal.append(.corruptLog(file: segment.name, offset: damage.offset, reason: damage.reason))
            } else if !isLast {
                fatal.append(.corruptLog(file: segment.name, offset: damage.offset, reason:
                    damage.reason + "; later segments follow, so this is not an interrupted write"))
            } else if let follower = segment.validRecordAfterDamage {
                fatal.append(.corruptLog(file: segment.name, offset: damage.offset, reason:
                    damage.reason + "; a valid record follows at offset \(follower), so cutting here would lose it"))
            } else {
                tornTail = (index, damage)
            }
        }
    }
}
