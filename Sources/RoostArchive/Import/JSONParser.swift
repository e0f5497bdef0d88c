/// A strict RFC 8259 parser over UTF-8 bytes: one value, nothing after it but whitespace. Written out
/// because import parses every line of a file (a large file's tail twice: see `ArchiveImporter`) and
/// Foundation's parser is several times slower and loses the integer/number distinction.
struct JSONParser {
    struct Failure: Error, Equatable {
        /// 1-based column (byte offset) of the problem.
        let column: Int
        let reason: String
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONNode {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) -> JSONNode in try parse(buffer) }
    }

    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONNode {
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        if parser.position != buffer.count { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ reason: String) -> Failure {
        Failure(column: position + 1, reason: reason)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> JSONNode {
        guard position < bytes.count else { throw failure("unexpected end of line") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("expected a JSON value")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw failure("expected \(word)") }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] {
            throw failure("expected \(word)")
        }
        position += count
    }

    private mutating func nest() throws(Failure) {
        depth += 1
        if depth > 64 { throw failure("nested too deeply") }
    }

    private mutating func object() throws(Failure) -> JSONNode {
        try nest()
        defer { depth -= 1 }
        position += 1
        var members: [String: JSONNode] = [:]
        // Export lines have up to ~26 members: sizing once avoids rehashing while the object grows.
        members.reserveCapacity(32)
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            position += 1
            skipWhitespace()
            let member = try value()
            if members.updateValue(member, forKey: key) != nil { throw failure("member \"\(key)\" appears twice") }
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of line in an object") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func array() throws(Failure) -> JSONNode {
        try nest()
        defer { depth -= 1 }
        position += 1
        var items: [JSONNode] = []
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try value())
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of line in an array") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
            throw failure("expected ',' or ']'")
        }
    }

    private mutating func string() throws(Failure) -> String {
        position += 1
        let start = position
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = try decode(start..<position)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in a string") }
            position += 1
        }
        // With escapes (a stored stanza's quoted attributes: most of a line's bytes): the runs between escapes are
        // copied whole, not byte by byte (issue 15 profile: the byte-wise appends were 3 % of an import).
        var scalars: [UInt8] = []
        scalars.reserveCapacity(bytes.count - start)
        scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let run = position
            while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"),
                  bytes[position] >= 0x20 {
                position += 1
            }
            if position > run { scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<position])) }
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return try scalars.withUnsafeBufferPointer { buffer throws(Failure) -> String in try Self.validUTF8(buffer, at: start, parser: self) }
            }
            if byte < 0x20 { throw failure("control character in a string") }
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append(0x22)
            case UInt8(ascii: "\\"): scalars.append(0x5C)
            case UInt8(ascii: "/"): scalars.append(0x2F)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                        throw failure("unpaired surrogate escape")
                    }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("unpaired surrogate escape") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw failure("unpaired surrogate escape")
                }
                guard let scalar = Unicode.Scalar(code) else { throw failure("invalid \\u escape") }
                scalars.append(contentsOf: String(Character(scalar)).utf8)
            default:
                throw failure("invalid escape \\\(Character(Unicode.Scalar(escape)))")
            }
        }
        throw failure("unterminated string")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func decode(_ range: Range<Int>) throws(Failure) -> String {
        try Self.validUTF8(UnsafeBufferPointer(rebasing: bytes[range]), at: range.lowerBound, parser: self)
    }

    private static func validUTF8(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int, parser: JSONParser) throws(Failure) -> String {
        guard UTF8Check.isValid(buffer) else { throw Failure(column: offset + 1, reason: "a string is not valid UTF-8") }
        // Valid input decodes without repairs, and this non-generic initializer is the fast one.
        return String(decoding: buffer, as: UTF8.self)
    }

    private mutating func number() throws(Failure) -> JSONNode {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
            throw failure("invalid number")
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            if position == digits { throw failure("invalid number") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            if position == digits { throw failure("invalid number") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text) else { throw Failure(column: start + 1, reason: "invalid number") }
        return .number(number)
    }
}
