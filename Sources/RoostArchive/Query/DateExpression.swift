/// A date as written in a query; resolved against "now" and a time zone when the query runs.
public enum DateExpression: Sendable, Equatable {
    public enum Unit: String, Sendable {
        case hour = "h", day = "d", week = "w", month = "m", year = "y"
    }

    /// `2026`, `2026-01`, `2026-01-31`, `2026-01-31T18:30` (local time); the span is the unit written.
    case absolute(year: Int, month: Int?, day: Int?, hour: Int?, minute: Int?)
    /// `7d` = the instant seven days before now.
    case relative(amount: Int, unit: Unit)
    case today
    case yesterday

    var isInstant: Bool {
        if case .relative = self { return true }
        return false
    }
}
