import RoostCore

/// Turns `key:value` into a `QueryFilter`, validating the value.
enum FilterParser {
    static let isValues = "in, out, chat, normal, headline, muc, groupchat, edited, unread, read, retracted, reply"

    static func filter(key: String, value: String, valueColumn: Int, keyColumn: Int, query: String) throws(QueryError) -> QueryFilter {
        guard !value.isEmpty else {
            throw QueryError("\(key): needs a value", column: keyColumn, query: query)
        }
        func invalid(_ message: String) -> QueryError { QueryError(message, column: valueColumn, query: query) }
        switch key {
        case "from": return .from(value)
        case "to": return .to(value)
        case "with": return .with(value)
        case "account": return .account(value)
        case "in": return .room(value)
        case "is":
            switch value.lowercased() {
            case "in", "incoming", "received": return .direction(.incoming)
            case "out", "outgoing", "sent": return .direction(.outgoing)
            case "chat": return .kind(.chat)
            case "normal": return .kind(.normal)
            case "headline": return .kind(.headline)
            case "muc", "groupchat": return .kind(.groupchat)
            case "edited", "corrected": return .edited
            case "unread": return .unread(true)
            case "read": return .unread(false)
            case "retracted", "deleted": return .retracted
            case "reply": return .reply
            default: throw invalid("unknown is:\(value) (expected one of \(isValues))")
            }
        case "has":
            switch value.lowercased() {
            case "file", "files", "attachment", "attachments": return .hasFile
            case "image", "images", "picture", "pictures": return .hasMedia("image/")
            case "video", "videos": return .hasMedia("video/")
            case "audio": return .hasMedia("audio/")
            case "reaction", "reactions": return .reaction(nil)
            default: throw invalid("unknown has:\(value) (expected has:file, has:image, has:video, has:audio or has:reaction)")
            }
        case "filename":
            return .fileName(value)
        case "reaction":
            return .reaction(value)
        case "type":
            let parts = value.lowercased().split(separator: "/", omittingEmptySubsequences: false)
            let token = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$&^_.+-")
            guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && ($0 == "*" || $0.allSatisfy(token.contains)) }),
                  parts[0] != "*" else {
                throw invalid("type: needs a media type such as image/png, image or image/*")
            }
            return .fileType(parts.count == 1 || parts[1] == "*" ? String(parts[0]) + "/" : value.lowercased())
        case "after":
            return .after(try date(value, column: valueColumn, query: query))
        case "before":
            return .before(try date(value, column: valueColumn, query: query))
        case "date":
            guard let dots = value.range(of: "..") else {
                // `date:2026-01` is that month; `date:7d` is "since seven days ago".
                let single = try date(value, column: valueColumn, query: query)
                return .date(from: single, through: single.isInstant ? nil : single)
            }
            let lower = String(value[..<dots.lowerBound])
            let upper = String(value[dots.upperBound...])
            if lower.isEmpty && upper.isEmpty { throw invalid("date:.. needs a date on at least one side") }
            let upperColumn = valueColumn + value.distance(from: value.startIndex, to: dots.upperBound)
            let from = lower.isEmpty ? nil : try date(lower, column: valueColumn, query: query)
            let through = upper.isEmpty ? nil : try date(upper, column: upperColumn, query: query)
            return .date(from: from, through: through)
        default:
            throw invalid("unknown filter \(key):")
        }
    }

    /// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM`, `Nh`/`Nd`/`Nw`/`Nm`/`Ny`, `today`, `yesterday`.
    static func date(_ text: String, column: Int, query: String) throws(QueryError) -> DateExpression {
        func invalid() -> QueryError {
            QueryError("invalid date '\(text)' (use YYYY-MM-DD, YYYY-MM, YYYY-MM-DDTHH:MM, 7d, 2w, 3m, 1y, today or yesterday)",
                       column: column, query: query)
        }
        switch text.lowercased() {
        case "today": return .today
        case "yesterday": return .yesterday
        default: break
        }
        if let unitCharacter = text.last, let unit = DateExpression.Unit(rawValue: String(unitCharacter).lowercased()) {
            let digits = text.dropLast()
            if !digits.isEmpty, digits.count <= 6, digits.allSatisfy(\.isASCIIDigit), let amount = Int(digits) {
                return .relative(amount: amount, unit: unit)
            }
        }
        let datePart: Substring
        var hour: Int?
        var minute: Int?
        if let t = text.firstIndex(where: { $0 == "T" || $0 == "t" }) {
            datePart = text[..<t]
            let time = text[text.index(after: t)...].split(separator: ":", omittingEmptySubsequences: false)
            guard time.count == 2, time.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }),
                  let h = Int(time[0]), let m = Int(time[1]), h < 24, m < 60 else { throw invalid() }
            hour = h
            minute = m
        } else {
            datePart = Substring(text)
        }
        let parts = datePart.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0].count == 4,
              parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }) else { throw invalid() }
        let year = Int(parts[0])!
        let month = parts.count > 1 ? Int(parts[1]) : nil
        let day = parts.count > 2 ? Int(parts[2]) : nil
        if hour != nil && day == nil { throw invalid() }
        if let month, !(1...12).contains(month) { throw invalid() }
        if let day, let month {
            guard (1...CivilTime.daysInMonth(year: year, month: month)).contains(day) else { throw invalid() }
        }
        guard (1970...9999).contains(year) else { throw invalid() }
        return .absolute(year: year, month: month, day: day, hour: hour, minute: minute)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
