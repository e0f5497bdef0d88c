/// A name as expat reports it in namespace-triplet mode: `uri SEP local SEP prefix`, `uri SEP local`
/// or just `local` when no namespace applies.
struct ExpandedName {
    var namespace: String?
    var local: String
    var prefix: String?

    /// `prefix:local` when the name was written with a prefix, as attributes keep it.
    var qualified: String {
        guard let prefix else { return local }
        return prefix + ":" + local
    }

    init(_ cString: UnsafePointer<CChar>) {
        let raw = UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self)
        var length = 0
        var first = -1
        var second = -1
        while raw[length] != 0 {
            if raw[length] == ExpatHandle.separator {
                if first < 0 { first = length } else if second < 0 { second = length }
            }
            length += 1
        }
        let bytes = UnsafeBufferPointer(start: raw, count: length)
        guard first >= 0 else {
            namespace = nil
            local = String(decoding: bytes, as: UTF8.self)
            prefix = nil
            return
        }
        namespace = String(decoding: bytes[..<first], as: UTF8.self)
        if second >= 0 {
            local = String(decoding: bytes[(first + 1)..<second], as: UTF8.self)
            prefix = String(decoding: bytes[(second + 1)...], as: UTF8.self)
        } else {
            local = String(decoding: bytes[(first + 1)...], as: UTF8.self)
            prefix = nil
        }
    }
}
