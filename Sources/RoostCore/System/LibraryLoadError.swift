/// A C library that Roost opens only when a command first needs it (libcurl, libnotify, libsoup, gdk-pixbuf:
/// opened with `dlopen`, so that commands which only read the archive start without loading them) could not be
/// opened, typically because its Debian package is not installed.
public struct LibraryLoadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The shared object's name, e.g. `libcurl.so.4`.
    public let library: String
    /// What the dynamic loader said.
    public let reason: String

    public init(library: String, reason: String) {
        self.library = library
        self.reason = reason
    }

    /// Checks a C module's `roost_*_load()` result: NULL when the library is loaded, otherwise the loader's text.
    public static func check(_ library: String, _ result: UnsafePointer<CChar>?) throws(LibraryLoadError) {
        if let result { throw LibraryLoadError(library: library, reason: String(cString: result)) }
    }

    public var description: String { "\(library) could not be loaded: \(reason)" }
}
