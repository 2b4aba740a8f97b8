import Glibc

/// Read-only examination of a data directory, for `huddle data verify` and `huddle data inspect`.
/// Neither function changes anything: files are opened read-only, nothing is created, truncated
/// or locked, so both may run next to a live server (whose last segment may then show an append
/// in progress as an interrupted write).
public enum DataDirectoryCheck {
    /// Checks everything start-up would rely on: every snapshot fully (header, size, inflation,
    /// payload CRC), every record of every segment (CRC, sequence), and that the log continues
    /// from the newest valid snapshot without a gap — and says what start-up would do with it
    /// (`VerifyReport.outcome`). A tail start-up would cut is a notice; a damaged snapshot that
    /// start-up passes over for an older valid one is `passedOver`; what makes start-up refuse
    /// is a problem.
    public static func verify(directory: String) -> VerifyReport {
        var report = VerifyReport(directory: directory)
        let listing: DataDirectoryListing
        do {
            listing = try DataDirectoryListing(directory: directory)
        } catch {
            report.problems.append("cannot read the directory: \(error)")
            return report
        }

        for entry in listing.snapshots {
            var verdict = VerifyReport.SnapshotVerdict(file: entry.name, lastSequence: entry.lastSequence)
            do {
                _ = try SnapshotFile.payload(directory: directory, name: entry.name, lastSequence: entry.lastSequence)
            } catch {
                verdict.problem = "\(error)"
            }
            report.snapshots.append(verdict)
        }
        // What start-up does with them (`SnapshotStore.loadNewestValid`): the newest valid one is
        // loaded, damaged ones above it are passed over, older ones are never read; with none
        // valid it refuses.
        let loaded = report.snapshots.last { $0.problem == nil }
        report.newestValidSnapshot = loaded?.lastSequence
        for snapshot in report.snapshots {
            guard let problem = snapshot.problem else { continue }
            if let loaded, snapshot.lastSequence > loaded.lastSequence {
                report.passedOver.append("\(snapshot.file): \(problem); start-up passes over it and loads \(loaded.file)")
            } else if loaded != nil {
                report.notices.append("\(snapshot.file): \(problem); start-up does not need it (a newer one is valid)")
            } else {
                report.problems.append("\(snapshot.file): \(problem)")
            }
        }
        if loaded == nil && !report.snapshots.isEmpty {
            report.problems.append("no snapshot is valid: start-up refuses rather than start without their state")
        }
        let snapshotSequence = report.newestValidSnapshot ?? 0

        let summaries = listing.segments.map { entry in
            do {
                return try SegmentSummary.scan(directory: directory, name: entry.name, firstSequence: entry.firstSequence)
            } catch {
                var unreadable = SegmentSummary(name: entry.name, firstSequence: entry.firstSequence, fileSize: 0)
                unreadable.headerProblem = "\(error)"
                return unreadable
            }
        }
        let assessment = LogAssessment(segments: summaries, snapshotSequence: snapshotSequence)
        for error in assessment.fatal { report.problems.append("\(error)") }
        for summary in summaries {
            var verdict = VerifyReport.SegmentVerdict(
                file: summary.name, firstSequence: summary.firstSequence,
                lastSequence: summary.lastSequence, recordCount: summary.recordCount)
            let findings = assessment.fatal.compactMap { error -> String? in
                if case .corruptLog(summary.name, let offset, let reason) = error { return "offset \(offset): \(reason)" }
                return nil
            }
            verdict.problem = findings.isEmpty ? nil : findings.joined(separator: "; ")
            report.segments.append(verdict)
        }
        if let (index, damage) = assessment.tornTail {
            let segment = summaries[index]
            report.notices.append(
                "\(segment.name): the last \(segment.fileSize - damage.offset) byte(s), from offset \(damage.offset), "
                    + "are an interrupted write (\(damage.reason)); opening the log cuts them")
        }

        if let last = summaries.last, last.headerProblem == nil, last.lastSequence < snapshotSequence {
            report.notices.append(
                "the log ends at \(last.lastSequence), before the snapshot's \(snapshotSequence): "
                    + "opening the log continues it at \(snapshotSequence + 1)")
        }
        if summaries.isEmpty && snapshotSequence > 0 {
            report.notices.append("no log segments: opening the log starts it at \(snapshotSequence + 1)")
        }
        for name in listing.temporaryFiles {
            report.notices.append("\(name): left by an interrupted write; removed by the next open or snapshot")
        }
        if listing.snapshots.isEmpty && listing.segments.isEmpty {
            report.notices.append("no snapshots and no log: an empty data directory")
        }
        return report
    }

    /// Lists the files with what their headers and records say, for a human or a script.
    public static func inspect(directory: String) -> InspectReport {
        var report = InspectReport(directory: directory)
        let listing: DataDirectoryListing
        do {
            listing = try DataDirectoryListing(directory: directory)
        } catch {
            report.problems.append("cannot read the directory: \(error)")
            return report
        }
        for entry in listing.segments {
            var file = InspectReport.SegmentEntry(name: entry.name, firstSequence: entry.firstSequence)
            do {
                (file.byteCount, file.modified) = try FileIO.status(pathIn(directory, entry.name))
                let summary = try SegmentSummary.scan(directory: directory, name: entry.name, firstSequence: entry.firstSequence)
                file.recordCount = summary.recordCount
                if summary.recordCount > 0 {
                    file.firstRecord = summary.firstSequence
                    file.lastRecord = summary.lastSequence
                }
                if let problem = summary.headerProblem {
                    file.note = problem
                } else if let damage = summary.damage {
                    file.note = "damaged at offset \(damage.offset): \(damage.reason)"
                }
            } catch {
                file.note = "\(error)"
            }
            report.segments.append(file)
        }
        for entry in listing.snapshots {
            var file = InspectReport.SnapshotEntry(name: entry.name, lastSequence: entry.lastSequence)
            do {
                (file.byteCount, file.modified) = try FileIO.status(pathIn(directory, entry.name))
                let header = try SnapshotFile.header(directory: directory, name: entry.name, lastSequence: entry.lastSequence)
                file.payloadByteCount = header.uncompressedLength
            } catch {
                file.note = "\(error)"
            }
            report.snapshots.append(file)
        }
        for name in listing.temporaryFiles + listing.otherFiles {
            var file = InspectReport.OtherEntry(name: name)
            if let status = try? FileIO.status(pathIn(directory, name)) {
                (file.byteCount, file.modified) = status
            }
            report.otherFiles.append(file)
        }
        return report
    }
}
