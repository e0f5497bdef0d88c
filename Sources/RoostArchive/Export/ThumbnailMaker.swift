/// Scales pictures down for the html export, so a page of holiday photos opens quickly. Supplied by the
/// caller (the command line uses gdk-pixbuf): the archive library itself reads no image formats.
public protocol ThumbnailMaker: Sendable {
    /// The picture's size in pixels, or nil when it is not a picture the maker can read.
    func dimensions(of path: String) -> (width: Int, height: Int)?
    /// Writes a copy of the picture at `source` scaled to fit `maxSide` pixels to `destination` (JPEG, or PNG
    /// when the picture has transparency; the extension is the maker's choice and returned with the size).
    func thumbnail(of source: String, to destinationWithoutExtension: String, maxSide: Int) -> (path: String, width: Int, height: Int)?
}
