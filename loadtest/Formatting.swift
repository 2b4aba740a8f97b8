import Foundation

/// `value` with a fixed number of decimals, for tables and the report.
func formatted(_ value: Double, decimals: Int = 1) -> String {
    String(format: "%.\(decimals)f", value)
}

/// `value` with a fixed number of decimals, or "n/a" when it was not measured.
func formatted(_ value: Double?, decimals: Int = 1) -> String {
    value.map { formatted($0, decimals: decimals) } ?? "n/a"
}

/// A whole percentage ("7%"), or "n/a" when it was not measured (not "n/a%").
func percent(_ value: Double?) -> String {
    value.map { formatted($0, decimals: 0) + "%" } ?? "n/a"
}

/// A count with thousands separators (1,234,567), the way the report and BENCHMARKS.md write them.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return value < 0 ? "-" + out : out
}
