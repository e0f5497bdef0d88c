/// The `a=value,b=value` attribute list that SCRAM messages are made of (RFC 5802 §7).
struct SCRAMAttributes {
    private(set) var pairs: [(name: Character, value: String)] = []

    init(parsing message: String) throws(SASLError) {
        for field in message.split(separator: ",", omittingEmptySubsequences: false) {
            guard field.count >= 2, let name = field.first, name.isASCII, name.isLetter,
                  field[field.index(after: field.startIndex)] == "=" else {
                throw .malformedChallenge("expected attribute=value pairs separated by commas")
            }
            pairs.append((name, String(field.dropFirst(2))))
        }
    }

    var firstName: Character? { pairs.first?.name }

    subscript(name: Character) -> String? {
        pairs.first { $0.name == name }?.value
    }
}
