import Foundation
public import RoostArchive
internal import CGdkPixbuf

/// Thumbnails for the html export through gdk-pixbuf, Debian's image loader (PNG, JPEG, GIF, WebP, … as its
/// loaders provide), rather than image decoders of our own: decoding pictures strangers sent is exactly
/// what a well-kept, widely used library should do. EXIF orientation is applied; JPEG at quality 85, PNG
/// when the picture has transparency.
public struct PixbufThumbnails: ThumbnailMaker {
    public init() {}

    /// nil also when gdk-pixbuf (opened on first use, CGdkPixbuf) is missing: no thumbnail then.
    public func dimensions(of path: String) -> (width: Int, height: Int)? {
        guard roost_pixbuf_load() == nil else { return nil }
        var width: Int32 = 0
        var height: Int32 = 0
        guard gdk_pixbuf_get_file_info(path, &width, &height) != nil, width > 0, height > 0 else { return nil }
        return (Int(width), Int(height))
    }

    public func thumbnail(of source: String, to destinationWithoutExtension: String, maxSide: Int) -> (path: String, width: Int, height: Int)? {
        guard let (width, height) = dimensions(of: source) else { return nil }
        // Never larger than the original: at_scale would enlarge a small picture to fit the box.
        let side = Int32(min(maxSide, max(width, height)))
        var error: UnsafeMutablePointer<GError>?
        guard let loaded = gdk_pixbuf_new_from_file_at_scale(source, side, side, 1, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(loaded)) }
        guard let oriented = gdk_pixbuf_apply_embedded_orientation(loaded) else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(oriented)) }
        let alpha = gdk_pixbuf_get_has_alpha(oriented) != 0
        let path = destinationWithoutExtension + (alpha ? ".png" : ".jpg")
        let saved: gboolean = alpha
            ? gdk_pixbuf_savev(oriented, path, "png", nil, nil, &error)
            : withOptions(["quality"], ["85"]) { keys, values in gdk_pixbuf_savev(oriented, path, "jpeg", keys, values, &error) }
        if let error { g_error_free(error) }
        guard saved != 0 else {
            unlink(path)
            return nil
        }
        return (path, Int(gdk_pixbuf_get_width(oriented)), Int(gdk_pixbuf_get_height(oriented)))
    }

    /// NULL-terminated C string arrays for `gdk_pixbuf_savev`'s options.
    private func withOptions<T>(_ keys: [String], _ values: [String],
                                _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        var cKeys: [UnsafeMutablePointer<CChar>?] = keys.map { strdup($0) } + [nil]
        var cValues: [UnsafeMutablePointer<CChar>?] = values.map { strdup($0) } + [nil]
        defer {
            cKeys.forEach { free($0) }
            cValues.forEach { free($0) }
        }
        return cKeys.withUnsafeMutableBufferPointer { k in cValues.withUnsafeMutableBufferPointer { v in body(k.baseAddress!, v.baseAddress!) } }
    }
}
