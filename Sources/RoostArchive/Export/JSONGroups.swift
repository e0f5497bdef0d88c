/// The roster `groups` column holds a JSON array of strings; read it without Foundation's decoder.
enum JSONGroups {
    static func decode(_ text: String) -> [String] {
        guard case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) else { return [] }
        return items.compactMap { if case .string(let name) = $0 { name } else { nil } }
    }
}
