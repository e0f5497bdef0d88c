import Foundation

/// Resolves `DateExpression`s to UTC millisecond spans `[start, end)` for a given "now" and time zone.
/// Absolute dates span the unit written (a day, a month, a minute); `today`/`yesterday` span a day;
/// relative dates are instants (start == end).
struct DateResolver {
    let now: Date
    let calendar: Calendar

    init(now: Date, timeZone: TimeZone) {
        self.now = now
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    func span(_ expression: DateExpression) -> (start: Int64, end: Int64) {
        switch expression {
        case .today:
            let start = calendar.startOfDay(for: now)
            return (ms(start), ms(calendar.date(byAdding: .day, value: 1, to: start) ?? start))
        case .yesterday:
            let today = calendar.startOfDay(for: now)
            return (ms(calendar.date(byAdding: .day, value: -1, to: today) ?? today), ms(today))
        case .relative(let amount, let unit):
            let component: Calendar.Component = switch unit {
            case .hour: .hour
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
            let instant = ms(calendar.date(byAdding: component, value: -amount, to: now) ?? .distantPast)
            return (instant, instant)
        case .absolute(let year, let month, let day, let hour, let minute):
            let components = DateComponents(year: year, month: month ?? 1, day: day ?? 1, hour: hour ?? 0, minute: minute ?? 0)
            guard let start = calendar.date(from: components) else { return (0, 0) }
            let unit: Calendar.Component = minute != nil ? .minute : day != nil ? .day : month != nil ? .month : .year
            return (ms(start), ms(calendar.date(byAdding: unit, value: 1, to: start) ?? start))
        }
    }

    private func ms(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
