import Foundation
@testable import RoostXMPP

/// Target `xml`: `XMLStreamParser` on whole streams as a server sends them (the input is the stream).
///
/// Properties:
/// - feeding never crashes, and stays within the parser's limits (stanza size, depth);
/// - where the stream is cut into pieces does not matter: the input fed at once and fed in pieces (sizes taken
///   from the input's first bytes) give the same events, or both fail (the size limit excepted: by design it is
///   checked per network read, so a stanza a little over it may pass when it arrives in one piece);
/// - parse → serialize → parse is stable: every stanza serialized and parsed again serializes to the same bytes.
enum XMLFuzz {
    static let header = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let input = Array(bytes)
        let whole = events(of: input, pieces: [input.count])
        var sizes: [Int] = []
        var seed = input.prefix(4).reduce(7) { $0 &* 31 &+ Int($1) }
        var covered = 0
        while covered < input.count {
            seed = seed &* 1_103_515_245 &+ 12_345
            let size = 1 + abs(seed >> 8) % 37
            sizes.append(size)
            covered += size
        }
        let split = events(of: input, pieces: sizes)
        switch (whole, split) {
        case (.events(let a), .events(let b)) where a != b:
            return "fed at once: \(a)\nfed in pieces \(sizes): \(b)"
        case (.events, .failed(let why)) where !why.tooLarge, (.failed(let why), .events) where !why.tooLarge:
            return "fed at once: \(whole)\nfed in pieces \(sizes): \(split)"
        default:
            break
        }
        guard case .events(let list) = whole else { return nil }
        for case .stanza(let element) in list {
            // Written as it would stand in a jabber:client stream, and parsed again in one.
            let text = XMLSerializer.serialize(element, parentNamespace: "jabber:client")
            guard case .events(let again) = events(of: Array((header + text).utf8), pieces: [header.utf8.count + text.utf8.count],
                                                   maxStanzaBytes: 1 << 20),
                  again.count == 2, case .stanza(let reparsed) = again[1] else {
                return "a serialized stanza does not parse again: \(text)"
            }
            let second = XMLSerializer.serialize(reparsed, parentNamespace: "jabber:client")
            guard second == text else { return "serialize → parse → serialize changed\n\(text)\ninto\n\(second)" }
        }
        return nil
    }

    enum Outcome: CustomStringConvertible {
        case events([XMLStreamParser.Event])
        case failed(XMLStreamError)

        var description: String {
            switch self {
            case .events(let list): "\(list.count) events: \(list)"
            case .failed(let why): "failed: \(why)"
            }
        }
    }

    /// Small limits, so the fuzzer reaches them.
    static func events(of input: [UInt8], pieces: [Int], maxStanzaBytes: Int = 4096) -> Outcome {
        let parser = XMLStreamParser(maxStanzaBytes: maxStanzaBytes, maxDepth: 16)
        var all: [XMLStreamParser.Event] = []
        var offset = 0
        for size in pieces where offset < input.count {
            let end = min(input.count, offset + size)
            do {
                all += try parser.feed(Array(input[offset..<end]))
            } catch {
                return .failed(error)
            }
            offset = end
        }
        return .events(all)
    }
}

private extension XMLStreamError {
    var tooLarge: Bool {
        if case .stanzaTooLarge = self { return true }
        return false
    }
}
