/// A value that does not fit its key; the loader adds file, line and key around `message`.
struct ConfigValueError: Error, Sendable {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
