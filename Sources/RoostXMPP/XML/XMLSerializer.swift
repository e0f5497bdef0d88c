/// Writes elements as XML text with correct escaping.
///
/// The `xmlns` declaration is written only where an element's namespace differs from its parent's,
/// so stanzas inside a `jabber:client` stream go out without a redundant declaration. An element whose
/// namespace is nil is written without a declaration and so inherits its parent's on the wire, which
/// is what `Element("body", text: …)` inside a message means.
///
/// Characters that XML 1.0 cannot carry at all (most C0 controls, U+FFFE, U+FFFF) are written as
/// U+FFFD: one stray control character from a user must not make the server close the stream.
public enum XMLSerializer {
    public static func serialize(_ element: Element, parentNamespace: String? = nil) -> String {
        // Written as UTF-8 bytes and made a `String` once: appending to a `String` piece by piece was most of
        // what storing each incoming stanza cost the live agent.
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(element, parentNamespace: parentNamespace, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func write(_ element: Element, parentNamespace: String?, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "<"))
        out.append(contentsOf: element.name.utf8)
        if let ns = element.namespace, ns != parentNamespace {
            out.append(contentsOf: " xmlns=\"".utf8)
            appendEscaped(ns, attribute: true, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        for attribute in element.attributes where attribute.name != "xmlns" {
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: attribute.name.utf8)
            out.append(contentsOf: "=\"".utf8)
            appendEscaped(attribute.value, attribute: true, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        if element.children.isEmpty {
            out.append(contentsOf: "/>".utf8)
            return
        }
        out.append(UInt8(ascii: ">"))
        for child in element.children {
            switch child {
            case .element(let e): write(e, parentNamespace: element.namespace ?? parentNamespace, into: &out)
            case .text(let t): appendEscaped(t, attribute: false, to: &out)
            }
        }
        out.append(contentsOf: "</".utf8)
        out.append(contentsOf: element.name.utf8)
        out.append(UInt8(ascii: ">"))
    }

    public static func escapeText(_ s: String) -> String {
        guard s.utf8.contains(where: needsTextEscape) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 16)
        appendEscaped(s, attribute: false, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public static func escapeAttribute(_ s: String) -> String {
        guard s.utf8.contains(where: needsAttributeEscape) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 8)
        appendEscaped(s, attribute: true, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The one escaper, on UTF-8 bytes: markup characters as entities (quotes, tab and line feed too in attribute
    /// values), CR as `&#13;`, and what XML 1.0 cannot carry (C0 controls, U+FFFE, U+FFFF) as U+FFFD. A `String`
    /// is valid UTF-8, so every 0xEF starts a three-byte sequence; U+FFFE and U+FFFF are EF BF BE and EF BF BF.
    static func appendEscaped(_ s: String, attribute: Bool, to out: inout [UInt8]) {
        let utf8 = s.utf8
        guard utf8.contains(where: attribute ? needsAttributeEscape : needsTextEscape) else {
            out.append(contentsOf: utf8)
            return
        }
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: "&#13;".utf8)
            case UInt8(ascii: "\"") where attribute: out.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'") where attribute: out.append(contentsOf: "&apos;".utf8)
            case UInt8(ascii: "\n") where attribute: out.append(contentsOf: "&#10;".utf8)
            case UInt8(ascii: "\t") where attribute: out.append(contentsOf: "&#9;".utf8)
            case UInt8(ascii: "\n"), UInt8(ascii: "\t"): out.append(byte)
            case 0..<0x20: out.append(contentsOf: replacement)
            case 0xEF:
                // Two continuation bytes follow (valid UTF-8).
                let second = utf8[index]
                utf8.formIndex(after: &index)
                let third = utf8[index]
                utf8.formIndex(after: &index)
                if second == 0xBF, third == 0xBE || third == 0xBF {
                    out.append(contentsOf: replacement)
                } else {
                    out.append(byte)
                    out.append(second)
                    out.append(third)
                }
            default: out.append(byte)
            }
        }
    }

    /// U+FFFD in UTF-8.
    private static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// Bytes after which text cannot be copied verbatim: markup characters, CR (a parser would turn
    /// it into LF), other C0 controls, and 0xEF, the lead byte of U+FFFE and U+FFFF.
    private static func needsTextEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), 0xEF: true
        case 0x09, 0x0A: false
        default: byte < 0x20
        }
    }

    /// The same for attribute values, where quotes and every C0 control (tab and line feed too) are escaped.
    private static func needsAttributeEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"), 0xEF: true
        default: byte < 0x20
        }
    }
}

extension Element: CustomStringConvertible {
    public var description: String { XMLSerializer.serialize(self) }
}
