import QuireStyle
import QuireText

/// Glyphs to draw with one face, size and colour. `origin` is the pen position on the baseline;
/// each glyph sits at origin + (xs[i], ys[i]) in device pixels.
public struct GlyphRun: Sendable {
    public var face: FontFace
    public var size: Double
    public var color: Color
    public var origin: Point
    public var glyphs: [UInt32]
    public var xs: [Float]
    public var ys: [Float]
    /// Stroke-emboldening when the family has no bold face (fallback fonts).
    public var syntheticBold: Bool
    /// Slanted when the family has no italic face.
    public var syntheticItalic: Bool
}

/// An image's place on the page. Until images are decoded, `state` says why only a placeholder shows.
public struct ImageBox: Sendable, Hashable {
    public var rect: Rect
    public var resource: String?
    public var alt: String
    public var state: State

    public enum State: String, Sendable, Hashable { case placeholder, missing }
}

public enum DisplayItem: Sendable {
    case glyphs(GlyphRun)
    case fill(Rect, Color)
    /// A straight rule (borders, underlines, hr): from/to along its centre line.
    case stroke(from: Point, to: Point, width: Double, color: Color, style: BorderStyle)
    case image(ImageBox, altText: GlyphRun?)
}

/// The text a line holds: offsets into the spine item's text content (UTF-16, end exclusive).
public struct LineRecord: Sendable, Hashable {
    public var rect: Rect
    public var start: Int
    public var end: Int
}

/// One page: enough to paint it and to know which characters it holds.
public struct Page: Sendable {
    public var spineIndex: Int
    public var indexInChapter: Int
    public var width: Int
    public var height: Int
    public var items: [DisplayItem]
    public var lines: [LineRecord]
    /// Text offsets of the page: start inclusive, end exclusive. Pages of a chapter partition its text.
    public var start: Int
    public var end: Int
}
