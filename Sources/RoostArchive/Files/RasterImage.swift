import Foundation

/// The raster picture formats Roost shows and scales, recognised by their first bytes only: a file's name or the
/// type its sender declared never decides how it is read (an SVG named `photo.png`, typed `image/png`, is not a
/// picture here). The one place that tells them apart: the web view (what it serves inline, avatars) and the
/// thumbnail maker (which gdk-pixbuf loader reads a file: never the one gdk-pixbuf would guess).
public enum RasterImage: String, Sendable, CaseIterable {
    case png, jpeg, gif, webp, bmp, avif

    /// The media type.
    public var mime: String { "image/" + rawValue }

    /// gdk-pixbuf's name for the loader of this format.
    public var loaderName: String { rawValue }

    /// The format of a file from its first 16 bytes, or nil when it is none of these.
    public static func sniff(_ head: [UInt8]) -> RasterImage? {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) { return .gif }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return .webp }
        if head.count >= 14, head.starts(with: Array("BM".utf8)) { return .bmp }
        if head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8), ["avif", "avis"].contains(String(decoding: head[8..<12], as: UTF8.self)) {
            return .avif
        }
        return nil
    }

    /// The format of the file at `path`, or nil (also when it cannot be read).
    public static func sniff(fileAt path: String) -> RasterImage? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 16)
        let count = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return sniff(Array(head[0..<count]))
    }
}
