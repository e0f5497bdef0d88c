/// A JSON object whose keys stay in insertion order. Setting an existing key replaces its value in place.
struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private(set) var members: [(key: String, value: JSONValue)] = []

    init() {}

    init(_ pairs: [(String, JSONValue)]) {
        for (key, value) in pairs {
            self[key] = value
        }
    }

    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            let position = members.firstIndex { $0.key == key }
            switch (position, newValue) {
            case let (position?, value?): members[position].value = value
            case let (position?, nil): members.remove(at: position)
            case let (nil, value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.elementsEqual(rhs.members) { $0.key == $1.key && $0.value == $1.value }
    }
}
