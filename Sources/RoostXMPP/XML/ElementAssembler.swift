/// Builds one stanza tree from start, text and end events.
///
/// Character data arrives in many small pieces (one per entity reference, per feed, per line);
/// it is collected as UTF-8 bytes and turned into one `String` per text node, never appended
/// character by character.
struct ElementAssembler {
    private var open: [Element] = []
    private var text: [UInt8] = []

    var isEmpty: Bool { open.isEmpty }

    mutating func start(_ element: Element) {
        flushText()
        open.append(element)
    }

    mutating func append(text bytes: UnsafeBufferPointer<UInt8>) {
        text.append(contentsOf: bytes)
    }

    /// Closes the innermost element; returns it when it was the outermost, i.e. a whole stanza.
    mutating func end() -> Element? {
        flushText()
        let element = open.removeLast()
        guard !open.isEmpty else { return element }
        open[open.count - 1].children.append(.element(element))
        return nil
    }

    mutating func removeAll() {
        open.removeAll()
        text.removeAll()
    }

    private mutating func flushText() {
        guard !text.isEmpty else { return }
        if !open.isEmpty {
            open[open.count - 1].children.append(.text(String(decoding: text, as: UTF8.self)))
        }
        text.removeAll(keepingCapacity: true)
    }
}
