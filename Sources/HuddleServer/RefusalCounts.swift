import Logging

/// Every refusal class `/metrics` counts, by kind, for the activity summary line: an operator
/// reading the log sees what was refused since the last line without a scrape. Kinds are
/// error replies by code (`rate_limited`, `busy`, `signing_in`, `unavailable`,
/// `invalid_credentials`, …), connections closed for not reading (`slow_consumer_*`),
/// `/broadcast` publishers held back (`publisher_held`), push notifications given up
/// (`push_dropped_*`) and photo uploads refused (`photo_upload_*`). `budget_*` says which
/// fair share the `rate_limited` replies of a user (or address) were over: a breakdown of
/// `rate_limited`, so it is not added to the total.
struct RefusalCounts: Equatable, Sendable {
    private(set) var counts: [String: Int] = [:]
    /// Which budget the fair-share `rate_limited` refusals were over (already in `counts`).
    private(set) var budgets: [String: Int] = [:]

    init() {}

    mutating func add(_ kind: String, _ count: Int) {
        counts[kind, default: 0] += count
    }

    mutating func add(budget: String, _ count: Int) {
        budgets[budget, default: 0] += count
    }

    /// Refusals of every kind, each counted once.
    var total: Int { counts.values.reduce(0, +) }

    /// What was refused after `earlier` (counters only grow), kinds with none left out.
    func since(_ earlier: RefusalCounts) -> RefusalCounts {
        func difference(_ now: [String: Int], _ then: [String: Int]) -> [String: Int] {
            now.reduce(into: [:]) { result, entry in
                let count = entry.value - (then[entry.key] ?? 0)
                if count > 0 { result[entry.key] = count }
            }
        }
        var result = RefusalCounts()
        result.counts = difference(counts, earlier.counts)
        result.budgets = difference(budgets, earlier.budgets)
        return result
    }

    /// `refused_<kind>` for each non-zero kind and `refused_budget_<budget>` for each budget.
    var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for (kind, count) in counts where count > 0 { metadata["refused_\(kind)"] = "\(count)" }
        for (budget, count) in budgets where count > 0 { metadata["refused_budget_\(budget)"] = "\(count)" }
        return metadata
    }
}
