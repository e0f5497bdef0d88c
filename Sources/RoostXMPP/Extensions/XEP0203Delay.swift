public import Foundation
import RoostCore

/// XEP-0203 Delayed Delivery and XEP-0082 date-time profiles.
///
/// A `<delay/>` says when a stanza was first sent, in the words of whoever added it: the server (offline
/// storage, an archive's `<forwarded/>`), or the sender, who may write anything. Which to believe is the
/// router's decision (`MessageTime` in RoostAgent); this only reads what is there.
public enum Delay {
    /// One `<delay/>` child: its `from` as written and its time.
    public struct Stamp: Sendable, Equatable {
        public var from: String?
        /// UTC milliseconds.
        public var milliseconds: Int64
    }

    /// Every readable `<delay/>` child of `element`, in document order.
    public static func stamps(of element: Element) -> [Stamp] {
        element.children("delay", namespace: Namespace.delay).compactMap { delay in
            delay[attribute: "stamp"].flatMap(Timestamp.parse).map { Stamp(from: delay[attribute: "from"], milliseconds: $0) }
        }
    }

    /// The first readable `<delay/>` child's time, UTC milliseconds.
    public static func milliseconds(of element: Element) -> Int64? {
        stamps(of: element).first?.milliseconds
    }

    public static func element(stamp: Date, from: JID? = nil) -> Element {
        var e = Element("delay", namespace: Namespace.delay, attributes: [("stamp", XMPPDateTime.format(stamp))])
        if let from { e[attribute: "from"] = from.description }
        return e
    }
}

/// XEP-0082 DateTime for the engine's `Date` values, through the program's one codec (`Timestamp`).
public enum XMPPDateTime {
    public static func parse(_ string: String) -> Date? {
        Timestamp.parse(string).map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
    }

    /// UTC with milliseconds, e.g. `2026-01-02T03:04:05.678Z`.
    public static func format(_ date: Date) -> String {
        format(milliseconds: Timestamp.milliseconds(date))
    }

    public static func format(milliseconds ms: Int64) -> String {
        Timestamp.rfc3339(ms)
    }
}
