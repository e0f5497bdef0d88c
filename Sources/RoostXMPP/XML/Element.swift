/// One XML element of a stanza, with its namespace resolved.
///
/// Stanzas are small trees: a value type keeps them `Sendable` and comparable, and the stream
/// parser hands whole trees to the layers above, never partial ones.
public struct Element: Sendable, Hashable {
    public enum Node: Sendable, Hashable {
        case element(Element)
        case text(String)
    }

    /// Local name, without prefix.
    public var name: String
    /// The namespace URI this element is in (from `xmlns` or inherited); nil when none applies.
    public var namespace: String?
    /// Attributes in document order, by qualified name (`xml:lang` keeps its prefix).
    public var attributes: [(name: String, value: String)] {
        get { attributeList.map { ($0.name, $0.value) } }
        set { attributeList = newValue.map { Attribute(name: $0.name, value: $0.value) } }
    }
    public var children: [Node]

    struct Attribute: Sendable, Hashable {
        var name: String
        var value: String
    }
    private var attributeList: [Attribute]

    public init(_ name: String, namespace: String? = nil, attributes: [(String, String)] = [], children: [Node] = []) {
        self.name = name
        self.namespace = namespace
        self.attributeList = attributes.map { Attribute(name: $0.0, value: $0.1) }
        self.children = children
    }

    /// For the stream parser: the attributes as it collected them, without a copy.
    init(_ name: String, namespace: String?, attributeList: [Attribute]) {
        self.name = name
        self.namespace = namespace
        self.attributeList = attributeList
        self.children = []
    }

    /// Convenience for a leaf element holding only text.
    public init(_ name: String, namespace: String? = nil, text: String) {
        self.init(name, namespace: namespace, children: [.text(text)])
    }

    public subscript(attribute name: String) -> String? {
        get { attributeList.first { $0.name == name }?.value }
        set {
            if let index = attributeList.firstIndex(where: { $0.name == name }) {
                if let newValue { attributeList[index].value = newValue } else { attributeList.remove(at: index) }
            } else if let newValue {
                attributeList.append(Attribute(name: name, value: newValue))
            }
        }
    }

    public var childElements: [Element] {
        children.compactMap { if case .element(let e) = $0 { e } else { nil } }
    }

    /// The first child with this name, in `namespace` or, when nil, in the parent's namespace.
    ///
    /// The look-ups walk `children` in place: routing asks a stanza for a dozen children it mostly lacks, and
    /// building `childElements` for each question was a tenth of the live agent's routing CPU.
    public func child(_ name: String, namespace: String? = nil) -> Element? {
        let ns = namespace ?? self.namespace
        for case .element(let e) in children where e.name == name && e.namespace == ns { return e }
        return nil
    }

    public func children(_ name: String, namespace: String? = nil) -> [Element] {
        let ns = namespace ?? self.namespace
        var found: [Element] = []
        for case .element(let e) in children where e.name == name && e.namespace == ns { found.append(e) }
        return found
    }

    /// The first child element in `namespace`, whatever its name (for errors, chat states, features).
    public func child(inNamespace namespace: String) -> Element? {
        for case .element(let e) in children where e.namespace == namespace { return e }
        return nil
    }

    /// All directly contained text, concatenated.
    public var text: String {
        children.reduce(into: "") { if case .text(let t) = $1 { $0 += t } }
    }

    public mutating func append(_ element: Element) { children.append(.element(element)) }
    public mutating func append(text: String) { children.append(.text(text)) }

    public static func == (lhs: Element, rhs: Element) -> Bool {
        lhs.name == rhs.name && lhs.namespace == rhs.namespace && lhs.attributeList == rhs.attributeList
            && lhs.children == rhs.children
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(namespace)
        hasher.combine(attributeList)
        hasher.combine(children)
    }
}
