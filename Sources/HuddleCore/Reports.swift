import HuddleProtocol

/// The users' reports and the operator's resolutions (durable; protocol.md, "Reports").
///
/// Ids come from one counter, so "oldest first" is "lowest id first" and an id is a stable
/// paging cursor for the operator. Bounded: a reporter has at most `maxOpenPerReporter` open
/// reports, and the server keeps `maxKept` in all — past it, the report resolved longest ago
/// goes (an open one is never dropped; with every kept report open, new ones are refused).
/// Coded as the counter and the reports sorted by id; the indexes are rebuilt when decoding.
public struct Reports: Sendable, Equatable {
    public static let maxOpenPerReporter = 100
    public static let maxKept = 100_000

    public private(set) var lastID: UInt64 = 0
    private var byID: [UInt64: ModerationReport] = [:]
    /// Open report ids, ascending: the operator's queue.
    private var openIDs: [UInt64] = []
    /// Resolved report ids in the order they were resolved: what goes first past `maxKept`.
    private var resolvedOrder: [UInt64] = []
    private var openByReporter: [Username: Set<UInt64>] = [:]

    public init() {}

    public subscript(id: UInt64) -> ModerationReport? { byID[id] }

    public var count: Int { byID.count }
    public var openCount: Int { openIDs.count }

    public func openCount(of reporter: Username) -> Int { openByReporter[reporter]?.count ?? 0 }

    /// Whether `reporter` has an open report of `target` already.
    public func hasOpen(by reporter: Username, of target: ReportTarget) -> Bool {
        (openByReporter[reporter] ?? []).contains { byID[$0]?.target == target }
    }

    /// Whether a new report fits: false only when every kept report is open.
    public var hasRoom: Bool { byID.count < Self.maxKept || !resolvedOrder.isEmpty }

    /// Reports with ids above `after`, oldest first, at most `limit`: open ones, resolved ones
    /// or both. `nextAfter` is the `after` of the next page, nil when there is none.
    public func page(open: Bool?, after: UInt64, limit: Int) -> ReportPage {
        let ids: [UInt64]
        switch open {
        case true?: ids = Array(openIDs[Feed.countOfIDs(in: openIDs, below: after + 1)...].prefix(limit + 1))
        case false?, nil:
            var found: [UInt64] = []
            var id = after + 1
            // Ids are dense (one per report ever filed): walking them skips only dropped ones.
            while id <= lastID, found.count <= limit {
                if let report = byID[id], open == nil || report.resolution != nil { found.append(id) }
                id += 1
            }
            ids = found
        }
        let shown = ids.prefix(limit)
        return ReportPage(reports: shown.map { byID[$0]! }, nextAfter: ids.count > shown.count ? shown.last : nil)
    }

    mutating func file(_ report: ModerationReport) {
        lastID = max(lastID, report.id)
        if byID.count >= Self.maxKept, !resolvedOrder.isEmpty { drop(resolvedOrder.removeFirst()) }
        byID[report.id] = report
        if report.resolution == nil {
            openIDs.insert(report.id, at: Feed.countOfIDs(in: openIDs, below: report.id))
            openByReporter[report.reporter, default: []].insert(report.id)
        } else {
            resolvedOrder.append(report.id)
        }
    }

    /// Returns false when there is no such open report.
    @discardableResult
    mutating func resolve(_ id: UInt64, _ resolution: ReportResolution) -> Bool {
        guard let report = byID[id], report.resolution == nil else { return false }
        byID[id]!.resolution = resolution
        closeOpen(report)
        resolvedOrder.append(id)
        return true
    }

    private mutating func closeOpen(_ report: ModerationReport) {
        let index = Feed.countOfIDs(in: openIDs, below: report.id)
        if index < openIDs.count, openIDs[index] == report.id { openIDs.remove(at: index) }
        openByReporter[report.reporter]?.remove(report.id)
        if openByReporter[report.reporter]?.isEmpty == true { openByReporter[report.reporter] = nil }
    }

    private mutating func drop(_ id: UInt64) {
        guard let report = byID.removeValue(forKey: id) else { return }
        if report.resolution == nil { closeOpen(report) }
    }

    /// Account deletion (protocol.md, "Deletion and retention"): the reports `user` filed go,
    /// and those about them already resolved. Open reports about them stay, the operator's case
    /// still to decide, until resolved (`forgetResolved(_:)` then drops them).
    mutating func erase(_ user: Username) {
        let gone = byID.values.filter { $0.reporter == user || ($0.user == user && $0.resolution != nil) }.map(\.id)
        for id in gone { drop(id) }
        resolvedOrder.removeAll { byID[$0] == nil }
    }

    /// A report about a deleted user is not kept once resolved.
    mutating func forgetResolved(_ id: UInt64) {
        guard byID[id]?.resolution != nil else { return }
        drop(id)
        resolvedOrder.removeAll { $0 == id }
    }

    /// What an export of `user` holds: the reports they filed.
    public func exported(for user: Username) -> JSONValue {
        .array(byID.keys.sorted().compactMap { byID[$0]?.reporter == user ? byID[$0]!.json : nil })
    }
}

/// The counter, the reports by id, and the order they were resolved in.
extension Reports: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("lastID", lastID.persisted), ("reports", .array(byID.keys.sorted().map { byID[$0]!.persisted })),
            ("resolvedOrder", resolvedOrder.persisted),
        ])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Reports")
        let reports: [ModerationReport] = try f("reports")
        let order: [UInt64] = try f("resolvedOrder")
        for report in reports {
            guard byID[report.id] == nil else { throw RecordDecodingError("report \(report.id) appears twice") }
            byID[report.id] = report
            if report.resolution == nil {
                openIDs.append(report.id)
                openByReporter[report.reporter, default: []].insert(report.id)
            }
        }
        lastID = try f("lastID")
        resolvedOrder = order
        guard (reports.last?.id ?? 0) <= lastID, Set(order) == Set(reports.filter { $0.resolution != nil }.map(\.id)), order.count == Set(order).count
        else { throw RecordDecodingError("the reports are past their counter, or their resolution order does not match them") }
    }
}

extension ModerationReport: PersistedValue {
    var persisted: JSONValue {
        var members: [(String, JSONValue?)] = [
            ("id", id.persisted), ("reporter", reporter.persisted), ("kind", target.kind.persisted), ("user", user.persisted),
        ]
        switch target {
        case .user: break
        case let .message(channel, offset): members += [("channel", channel.persisted), ("offset", offset.persisted)]
        case let .post(post): members += [("post", post.persisted)]
        case let .comment(post, comment): members += [("post", post.persisted), ("comment", comment.persisted)]
        }
        members += [
            ("reason", reason.persisted), ("text", text.persisted), ("content", content?.persisted), ("time", time.persisted),
            ("resolution", resolution.map { JSONValue.record([("action", $0.action.persisted), ("note", $0.note.persisted), ("time", $0.time.persisted)]) }),
        ]
        return .record(members)
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "ModerationReport")
        let user: Username = try f("user")
        let kind: String = try f("kind")
        let target: ReportTarget
        switch kind {
        case "user": target = .user(user)
        case "message": target = .message(channel: try f("channel"), offset: try f("offset"))
        case "post": target = .post(try f("post"))
        case "comment": target = .comment(post: try f("post"), comment: try f("comment"))
        default: throw RecordDecodingError("unknown report kind \(kind)")
        }
        var resolution: ReportResolution?
        if let value = persisted["resolution"], value != .null {
            let r = try PersistedFields(value, "ReportResolution")
            resolution = ReportResolution(action: try r("action"), note: try r("note"), time: try r("time"))
        }
        self.init(
            id: try f("id"), reporter: try f("reporter"), target: target, user: user, reason: try f("reason"), text: try f("text"),
            content: try f.optional("content"), time: try f("time"), resolution: resolution)
    }
}
