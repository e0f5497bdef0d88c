/// A value bound to or read from a statement. Internal: C types and SQL never leak out of the archive.
package enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLValue {
    package init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    package init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    package init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    package init(_ value: Bool) { self = .integer(value ? 1 : 0) }
}
