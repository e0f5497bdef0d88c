/// The first value of a D-Bus reply, for the few shapes Roost reads.
enum DBusValue: Sendable, Equatable {
    case bool(Bool)
    case number(UInt64)
    case string(String)
    case strings([String])
}
