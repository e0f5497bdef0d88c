/// A value that does not fit its key; the loader adds file, line and key around `message`.
struct ConfigValueError: Error, Sendable {
    let message: String
    /// The check could not be made for want of descriptors, memory or disk (see `ResourceShortage`): nothing about
    /// the value; the same check can pass later.
    let isResourceShortage: Bool

    init(_ message: String, resourceShortage: Bool = false) {
        self.message = message
        isResourceShortage = resourceShortage
    }
}
