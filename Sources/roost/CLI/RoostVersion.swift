/// The version `roost --version` prints.
enum RoostVersion {
    static let string = "0.1.0"
}
