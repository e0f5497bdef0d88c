public import Foundation

/// XEP-0203 Delayed Delivery and XEP-0082 date-time profiles.
public enum Delay {
    /// The stamp of the `<delay/>` child, as the server's original time of the stanza.
    public static func stamp(of element: Element) -> Date? {
        guard let delay = element.child("delay", namespace: Namespace.delay), let stamp = delay[attribute: "stamp"] else { return nil }
        return XMPPDateTime.parse(stamp)
    }

    public static func element(stamp: Date, from: JID? = nil) -> Element {
        var e = Element("delay", namespace: Namespace.delay, attributes: [("stamp", XMPPDateTime.format(stamp))])
        if let from { e[attribute: "from"] = from.description }
        return e
    }
}

/// XEP-0082 DateTime: `CCYY-MM-DDThh:mm:ss[.sss]TZD`, parsed without locale surprises.
public enum XMPPDateTime {
    public static func parse(_ string: String) -> Date? {
        // Fixed-position parse: the profile is strict and formatters are slow and locale-sensitive.
        let s = Array(string.utf8)
        func digits(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= s.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                guard s[i] >= 48 && s[i] <= 57 else { return nil }
                v = v * 10 + Int(s[i] - 48)
            }
            return v
        }
        guard s.count >= 20, let year = digits(0, 4), s[4] == 45, let month = digits(5, 2), s[7] == 45,
              let day = digits(8, 2), s[10] == 84 || s[10] == 116, let hour = digits(11, 2), s[13] == 58,
              let minute = digits(14, 2), s[16] == 58, let second = digits(17, 2) else { return nil }
        var index = 19
        var fraction = 0.0
        if index < s.count, s[index] == 46 {
            index += 1
            var scale = 0.1
            while index < s.count, s[index] >= 48, s[index] <= 57 {
                fraction += Double(s[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        guard index < s.count else { return nil }
        var offsetSeconds = 0
        if s[index] == 90 || s[index] == 122 {
            index += 1
        } else if s[index] == 43 || s[index] == 45, let oh = digits(index + 1, 2), index + 3 < s.count, s[index + 3] == 58,
                  let om = digits(index + 4, 2) {
            offsetSeconds = (oh * 3600 + om * 60) * (s[index] == 45 ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == s.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components) else { return nil }
        return date.addingTimeInterval(fraction - Double(offsetSeconds))
    }

    /// UTC with milliseconds, e.g. `2026-01-02T03:04:05.678Z`.
    public static func format(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return format(milliseconds: ms)
    }

    public static func format(milliseconds ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - seconds * 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        func pad(_ v: Int?, _ width: Int) -> String {
            let s = String(v ?? 0)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2)).\(pad(millis, 3))Z"
    }
}
