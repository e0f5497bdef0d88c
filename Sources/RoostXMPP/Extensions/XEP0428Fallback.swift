/// XEP-0428 Fallback Indication: which part of a body is only there for clients that do not know a feature
/// (a reply's quote of the message it answers, "> bob wrote: …").
public enum Fallback {
    /// The body without the parts marked as fallback for `feature` (ranges in Unicode code points, `start`
    /// inclusive, `end` exclusive). A `<body/>` fallback without a range makes the whole body fallback (nil).
    /// Ranges outside the body, reversed or overlapping are ignored: the body is then returned as it came.
    public static func body(of message: Message, strippingFallbackFor feature: String) -> String? {
        guard let body = message.body else { return nil }
        let fallbacks = message.element.children("fallback", namespace: Namespace.fallback)
            + message.element.children("fallback", namespace: Namespace.legacyFallback)
        var ranges: [Range<Int>] = []
        for fallback in fallbacks {
            // The legacy namespace of slixmpp 1.8 has no `for`; it is only used for replies.
            guard fallback[attribute: "for"] == feature || (fallback.namespace == Namespace.legacyFallback && fallback[attribute: "for"] == nil)
            else { continue }
            let parts = fallback.children("body", namespace: fallback.namespace ?? Namespace.fallback)
            if parts.isEmpty { return nil }
            for part in parts {
                guard let startText = part[attribute: "start"], let endText = part[attribute: "end"] else { return nil }
                guard let start = Int(startText), let end = Int(endText), start >= 0, start <= end else { return body }
                ranges.append(start..<end)
            }
        }
        guard !ranges.isEmpty else { return body }
        let scalars = Array(body.unicodeScalars)
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var kept = String.UnicodeScalarView()
        var position = 0
        for range in ranges {
            guard range.lowerBound >= position, range.upperBound <= scalars.count else { return body }
            kept.append(contentsOf: scalars[position..<range.lowerBound])
            position = range.upperBound
        }
        kept.append(contentsOf: scalars[position...])
        return String(kept)
    }
}
