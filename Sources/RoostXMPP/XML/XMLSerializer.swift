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
        var out = ""
        write(element, parentNamespace: parentNamespace, into: &out)
        return out
    }

    static func write(_ element: Element, parentNamespace: String?, into out: inout String) {
        out += "<"
        out += element.name
        if let ns = element.namespace, ns != parentNamespace {
            out += " xmlns=\""
            out += escapeAttribute(ns)
            out += "\""
        }
        for attribute in element.attributes where attribute.name != "xmlns" {
            out += " "
            out += attribute.name
            out += "=\""
            out += escapeAttribute(attribute.value)
            out += "\""
        }
        if element.children.isEmpty {
            out += "/>"
            return
        }
        out += ">"
        for child in element.children {
            switch child {
            case .element(let e): write(e, parentNamespace: element.namespace ?? parentNamespace, into: &out)
            case .text(let t): out += escapeText(t)
            }
        }
        out += "</"
        out += element.name
        out += ">"
    }

    public static func escapeText(_ s: String) -> String {
        guard s.utf8.contains(where: needsTextEscape) else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(isXMLCharacter(scalar) ? scalar : replacement)
            }
        }
        return out
    }

    public static func escapeAttribute(_ s: String) -> String {
        guard s.utf8.contains(where: needsAttributeEscape) else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default: out.unicodeScalars.append(isXMLCharacter(scalar) ? scalar : replacement)
            }
        }
        return out
    }

    private static let replacement: Unicode.Scalar = "\u{FFFD}"

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

    /// The XML 1.0 `Char` production; Swift strings cannot hold surrogates, so only these remain.
    private static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: true
        case 0x00..<0x20, 0xFFFE, 0xFFFF: false
        default: true
        }
    }
}

extension Element: CustomStringConvertible {
    public var description: String { XMLSerializer.serialize(self) }
}
