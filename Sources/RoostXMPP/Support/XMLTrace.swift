import RoostCore

/// The XML exchange as `roost -vv` shows it: every element sent and received, with what must never reach a
/// log replaced by `[redacted]` — SASL payloads (`<auth>`, `<response>`, `<challenge>`, `<success>`, which carry
/// the password or what proves it) and the password of in-band registration and password change (XEP-0077).
enum XMLTrace {
    private static let secretElements: Set<String> = ["auth", "response", "challenge", "success", "password"]

    /// Text sent by Roost: it is Roost's own serialisation, so elements open and close as written.
    static func redacted(sent text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "<") {
            result += rest[..<open]
            rest = rest[open...]
            guard let name = elementName(rest), secretElements.contains(name), let end = rest.firstIndex(of: ">") else {
                let next = rest.index(after: rest.startIndex)
                result += rest[..<next]
                rest = rest[next...]
                continue
            }
            let tag = rest[...end]
            result += tag
            rest = rest[rest.index(after: end)...]
            if tag.hasSuffix("/>") { continue }
            if let close = rest.range(of: "</") , rest[..<close.lowerBound].contains(where: { !$0.isWhitespace }) {
                result += "[redacted]"
                rest = rest[close.lowerBound...]
            }
        }
        result += rest
        return LogText.quote(result, limit: 4000)
    }

    /// An event received, serialised with secret elements' text redacted.
    static func text(of event: XMLStreamParser.Event) -> String {
        switch event {
        case .streamStart(let element):
            return LogText.quote(XMLSerializer.serialize(element), limit: 4000)
        case .stanza(let element):
            return LogText.quote(XMLSerializer.serialize(redacted(element)), limit: 4000)
        case .streamEnd:
            return "</stream:stream>"
        }
    }

    private static func redacted(_ element: Element) -> Element {
        var copy = element
        if secretElements.contains(element.name), !element.text.isEmpty {
            copy.children = [.text("[redacted]")]
            return copy
        }
        copy.children = element.children.map { node in
            if case .element(let child) = node { return .element(redacted(child)) }
            return node
        }
        return copy
    }

    private static func elementName(_ text: Substring) -> String? {
        var name = text.dropFirst().prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }
        if let colon = name.firstIndex(of: ":") { name = name[name.index(after: colon)...] }
        return name.isEmpty ? nil : String(name)
    }
}
