/// Writes elements as XML text with correct escaping.
///
/// The `xmlns` declaration is written only where an element's namespace differs from its parent's,
/// so stanzas inside a `jabber:client` stream go out without a redundant declaration.
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
            case .element(let e): write(e, parentNamespace: element.namespace, into: &out)
            case .text(let t): out += escapeText(t)
            }
        }
        out += "</"
        out += element.name
        out += ">"
    }

    public static func escapeText(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == 0x0D })
        else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    public static func escapeAttribute(_ s: String) -> String {
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
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension Element: CustomStringConvertible {
    public var description: String { XMLSerializer.serialize(self) }
}
