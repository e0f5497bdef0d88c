import Foundation
public import RoostArchive
internal import CGdkPixbuf

/// Thumbnails for the html export and the web view's previews through gdk-pixbuf, Debian's image loader, rather
/// than image decoders of our own: decoding pictures strangers sent is exactly what a well-kept, widely used
/// library should do. EXIF orientation is applied; JPEG at quality 85, PNG when the picture has transparency.
///
/// The picture is read through the loader of the raster format its first bytes name (`RasterImage`), never one
/// gdk-pixbuf would pick itself (its SVG loader for a file typed `image/png` holding SVG), and fed here in pieces:
/// the size is known from the header (size-prepared) before anything is decoded, a picture over `ThumbnailLimits`
/// is not decoded at all (the loader is told to make nothing, 0×0), and a cancelled read stops between pieces.
public struct PixbufThumbnails: ThumbnailMaker {
    public init() {}

    /// nil also when gdk-pixbuf (opened on first use, CGdkPixbuf) is missing: no thumbnail then.
    public func probe(_ path: String) -> PictureProbe? {
        guard let (format, loaded) = load(path, maxSide: nil, isCancelled: { false }) else { return nil }
        _ = loaded
        return format
    }

    public func thumbnail(of source: String, to destinationWithoutExtension: String, maxSide: Int,
                          isCancelled: @escaping @Sendable () -> Bool) -> (path: String, width: Int, height: Int)? {
        guard let (probe, loaded) = load(source, maxSide: maxSide, isCancelled: isCancelled), probe.decodable, let loaded else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(loaded)) }
        guard let oriented = gdk_pixbuf_apply_embedded_orientation(loaded) else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(oriented)) }
        let alpha = gdk_pixbuf_get_has_alpha(oriented) != 0
        let path = destinationWithoutExtension + (alpha ? ".png" : ".jpg")
        var error: UnsafeMutablePointer<GError>?
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

    /// What size-prepared learns, and what it asks for.
    private final class Header {
        let format: RasterImage
        let maxSide: Int?
        var probe: PictureProbe?

        init(format: RasterImage, maxSide: Int?) {
            self.format = format
            self.maxSide = maxSide
        }
    }

    /// Reads the picture's header, and with `maxSide` decodes it scaled to fit (never enlarged): its probe and the
    /// picture (a reference the caller releases), or with no picture when only probed, too large or cancelled.
    private func load(_ path: String, maxSide: Int?, isCancelled: () -> Bool) -> (PictureProbe, OpaquePointer?)? {
        guard roost_pixbuf_load() == nil, let format = RasterImage.sniff(fileAt: path) else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var error: UnsafeMutablePointer<GError>?
        guard let loader = gdk_pixbuf_loader_new_with_type(format.loaderName, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(loader)) }
        let header = Header(format: format, maxSide: maxSide)
        let context = Unmanaged.passRetained(header)
        defer { context.release() }
        roost_pixbuf_loader_on_size_prepared(loader, { loader, width, height, data in
            guard let loader, let data else { return }
            let header = Unmanaged<Header>.fromOpaque(data).takeUnretainedValue()
            let pixels = Int(width) * Int(height)
            let limit = header.format == .jpeg ? ThumbnailLimits.maxJPEGPixels : ThumbnailLimits.maxPixels
            let decodable = width > 0 && height > 0 && pixels <= limit
            header.probe = PictureProbe(width: Int(width), height: Int(height), decodable: decodable)
            guard decodable, let maxSide = header.maxSide else {
                // Nothing is decoded: the loaders take 0×0 as "stop here, allocate nothing".
                gdk_pixbuf_loader_set_size(loader, 0, 0)
                return
            }
            let longer = max(Int(width), Int(height))
            let side = min(maxSide, longer)
            let scale = Double(side) / Double(longer)
            gdk_pixbuf_loader_set_size(loader, Int32(max(1, (Double(width) * scale).rounded())), Int32(max(1, (Double(height) * scale).rounded())))
        }, context.toOpaque())
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var failed = false
        while header.probe.map({ $0.decodable && maxSide != nil }) ?? true {
            if isCancelled() {
                failed = true
                break
            }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                failed = count < 0
                break
            }
            let written = buffer.withUnsafeBytes { gdk_pixbuf_loader_write(loader, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), gsize(count), &error) }
            if let failure = error {
                g_error_free(failure)
                error = nil
            }
            if written == 0 {
                failed = true
                break
            }
        }
        let closed = gdk_pixbuf_loader_close(loader, &error) != 0
        if let error { g_error_free(error) }
        guard let probe = header.probe else { return nil }
        guard maxSide != nil, probe.decodable, !failed, closed, let picture = gdk_pixbuf_loader_get_pixbuf(loader) else { return (probe, nil) }
        g_object_ref(UnsafeMutableRawPointer(picture))
        return (probe, picture)
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
