/// The one escaper for text from other parties on its way to a person: a log line or a terminal.
///
/// Control characters (C0 but, on a terminal, line feed and tab; DEL; C1), the line and paragraph
/// separators, the byte order mark and the bidirectional controls (the "Trojan Source" ones) are shown as
/// `\u{1b}`-style escapes (`\n`, `\r`, `\t` for the common three), so a hostile server or contact can
/// neither forge log lines, nor move the cursor, recolour or retitle a terminal, nor reorder what a
/// reader sees. Everything else, including emoji joiners and every script, passes as it is.
public enum VisibleText {
    /// `text` with every such character escaped; `keepingLineBreaks` leaves line feeds and tabs alone
    /// (multi-line output on a terminal). `limit` cuts after that many characters, marking the cut with `…`.
    public static func escaped(_ text: String, keepingLineBreaks: Bool, limit: Int? = nil) -> String {
        if limit == nil, !mayNeedEscaping(text) { return text }
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if let limit, count >= limit {
                out += "…"
                break
            }
            count += 1
            if let escape = escape(scalar, keepingLineBreaks: keepingLineBreaks) { out += escape } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// The escape `escaped` writes for `scalar`, nil when it passes as it is: the rule, in one place.
    private static func escape(_ scalar: Unicode.Scalar, keepingLineBreaks: Bool) -> String? {
        switch scalar.value {
        case 0x0A where keepingLineBreaks, 0x09 where keepingLineBreaks: nil
        case 0x0A: "\\n"
        case 0x0D: "\\r"
        case 0x09: "\\t"
        case _ where isHidden(scalar): "\\u{\(String(scalar.value, radix: 16))}"
        default: nil
        }
    }

    /// `escaped(text, keepingLineBreaks:)` of UTF-8 `bytes`, appended to `out` without making a String (the lines
    /// of a long transcript), with `indent` spaces after each line feed kept. False, with `out` as it was, when
    /// `bytes` are not valid UTF-8: the caller then decodes them as a String does (invalid sequences replaced).
    public static func append(_ bytes: UnsafeBufferPointer<UInt8>, keepingLineBreaks: Bool, indent: Int = 0,
                              to out: inout [UInt8]) -> Bool {
        let start = out.count
        var index = 0
        while index < bytes.count {
            // Printable ASCII, most of any text, passes: a run of it at a time.
            var run = index
            while run < bytes.count && bytes[run] >= 0x20 && bytes[run] < 0x7F { run += 1 }
            if run > index {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<run]))
                index = run
                continue
            }
            let byte = bytes[index]
            var parser = Unicode.UTF8.ForwardParser()
            var input = UnsafeBufferPointer(rebasing: bytes[index...]).makeIterator()
            guard case .valid(let encoded) = parser.parseScalar(from: &input) else {
                out.removeSubrange(start...)
                return false
            }
            let scalar = Unicode.UTF8.decode(encoded)
            if let escape = escape(scalar, keepingLineBreaks: keepingLineBreaks) {
                out.append(contentsOf: escape.utf8)
            } else {
                out.append(contentsOf: encoded)
                if byte == 0x0A { out.append(contentsOf: repeatElement(0x20, count: indent)) }
            }
            index += encoded.count
        }
        return true
    }

    /// A name another party chose (a nick, a contact's name, a file name, a room's name or subject) as a person
    /// is shown it, in a page or a notification: one line, every character `isHidden` shows as an escape. A name is
    /// short and read as a whole, so a right-to-left override in it (`photo\u{202e}gpj.exe`, read
    /// "photoexe.jpg") is shown, not obeyed.
    public static func name(_ text: String) -> String {
        escaped(text, keepingLineBreaks: false)
    }

    /// Characters that act on a terminal or on the reading order instead of showing.
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029, 0xFEFF: true
        default: false
        }
    }

    /// A quick look at the bytes: false when no character can need escaping (the common case, kept cheap
    /// for the hundreds of thousands of lines of a search).
    private static func mayNeedEscaping(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes {
                // C0 and DEL; the lead bytes of U+0080…U+009F (C2), U+061C (D8), U+200E…U+2069 (E2), U+FEFF (EF).
                if byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xD8 || byte == 0xE2 || byte == 0xEF { return true }
            }
            return false
        }
    }
}

/// Text from the network (or any other party) on its way into a log line: one line, escapes for everything
/// `VisibleText` hides, and a length cap so a megabyte of server text does not become a megabyte of log.
public enum LogText {
    /// `text` made safe for one log line.
    public static func quote(_ text: String, limit: Int = 300) -> String {
        VisibleText.escaped(text, keepingLineBreaks: false, limit: limit)
    }

    /// Any value's description (an error that may carry server text, a JID), made safe for one log line.
    public static func quote<Value>(_ value: Value, limit: Int = 300) -> String {
        quote(String(describing: value), limit: limit)
    }
}
