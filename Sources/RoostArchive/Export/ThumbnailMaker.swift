/// Scales pictures down for the html export, so a page of holiday photos opens quickly. Supplied by the
/// caller (the command line uses gdk-pixbuf): the archive library itself reads no image formats.
///
/// Pictures come from strangers: a maker reads only raster formats it recognises by their first bytes (never a
/// format a file's name or declared type claims, never SVG), learns the size from the header before decoding, and
/// decodes nothing larger than `ThumbnailLimits` allows (a 20000×20000 PNG would take 1.6 GB).
public protocol ThumbnailMaker: Sendable {
    /// The picture's size in pixels (from its header) and whether the maker would decode it; nil when it is not a
    /// picture the maker can read.
    func probe(_ path: String) -> PictureProbe?
    /// Writes a copy of the picture at `source` scaled to fit `maxSide` pixels to `destination` (JPEG, or PNG
    /// when the picture has transparency; the extension is the maker's choice and returned with the size). Nil when
    /// the picture cannot be read, is too large to decode, or `isCancelled` became true while it was read.
    func thumbnail(of source: String, to destinationWithoutExtension: String, maxSide: Int,
                   isCancelled: @escaping @Sendable () -> Bool) -> (path: String, width: Int, height: Int)?
}

/// What a picture's header says.
public struct PictureProbe: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// Within `ThumbnailLimits`: a copy can be made.
    public var decodable: Bool

    public init(width: Int, height: Int, decodable: Bool) {
        self.width = width
        self.height = height
        self.decodable = decodable
    }
}

extension ThumbnailMaker {
    /// The picture's size in pixels, or nil when it is not a picture the maker can read.
    public func dimensions(of path: String) -> (width: Int, height: Int)? {
        probe(path).map { ($0.width, $0.height) }
    }

    public func thumbnail(of source: String, to destinationWithoutExtension: String, maxSide: Int) -> (path: String, width: Int, height: Int)? {
        thumbnail(of: source, to: destinationWithoutExtension, maxSide: maxSide, isCancelled: { false })
    }
}

public enum ThumbnailLimits {
    /// Pictures with more pixels are not decoded: 40 megapixels are 160 MB as RGBA while a PNG, GIF or WebP is
    /// scaled down.
    public static let maxPixels = 40_000_000
    /// A JPEG is scaled while it is decoded (by up to 8 on each side), so it may have more: 250 megapixels decode
    /// into at most about 12 MB.
    public static let maxJPEGPixels = 250_000_000
}
