import Glibc
import QuireCore
import QuireStyle
import QuireText

/// One glyph of a run: its id, its place from the run's origin (device pixels) and the chapter
/// text offset (UTF-16) of its cluster.
public struct PlacedGlyph: Sendable, Hashable, BitwiseCopyable {
    public var id: UInt32
    public var x: Float
    public var y: Float
    public var source: Int32
}

/// Glyphs to draw with one face, size and colour. `origin` is the pen position on the baseline;
/// each glyph sits at origin + (x, y) in device pixels.
///
/// The glyphs are one array of `PlacedGlyph`s: a run is mostly a word, and display items are
/// copied from line to flow to page, so one allocation and one reference per run instead of
/// four of each.
public struct GlyphRun: Sendable {
    public var face: FontFace
    public var size: Double
    public var color: Color
    public var origin: Point
    public var placed: [PlacedGlyph]
    /// Stroke-emboldening when the family has no bold face (fallback fonts).
    public var syntheticBold: Bool
    /// Slanted when the family has no italic face.
    public var syntheticItalic: Bool
    /// Whether the glyphs' `source`s say where their text is, so a painter can mark a search
    /// match; false for generated text (list markers, ruby, emphasis marks).
    public var hasSources: Bool
    /// How the run stands on a page of vertical text (see `GlyphOrientation`).
    public var orientation: GlyphOrientation = .horizontal

    public init(
        face: FontFace, size: Double, color: Color, origin: Point, placed: [PlacedGlyph], syntheticBold: Bool,
        syntheticItalic: Bool, hasSources: Bool
    ) {
        self.face = face
        self.size = size
        self.color = color
        self.origin = origin
        self.placed = placed
        self.syntheticBold = syntheticBold
        self.syntheticItalic = syntheticItalic
        self.hasSources = hasSources
    }

    /// A run from parallel arrays (`sources` empty for generated text, else one per glyph).
    public init(
        face: FontFace, size: Double, color: Color, origin: Point, glyphs: [UInt32], xs: [Float], ys: [Float],
        syntheticBold: Bool, syntheticItalic: Bool, sources: [Int32] = []
    ) {
        let hasSources = !sources.isEmpty && sources.count == glyphs.count
        let placed = glyphs.indices.map { index in
            PlacedGlyph(id: glyphs[index], x: xs[index], y: ys[index], source: hasSources ? sources[index] : 0)
        }
        self.init(
            face: face, size: size, color: color, origin: origin, placed: placed, syntheticBold: syntheticBold,
            syntheticItalic: syntheticItalic, hasSources: hasSources)
    }

    public var glyphs: [UInt32] { placed.map(\.id) }

    public var xs: [Float] { placed.map(\.x) }

    public var ys: [Float] { placed.map(\.y) }

    /// The chapter text offset (UTF-16) of each glyph's cluster; empty for generated text.
    public var sources: [Int32] {
        get { hasSources ? placed.map(\.source) : [] }
        set {
            hasSources = !newValue.isEmpty && newValue.count == placed.count
            for index in placed.indices { placed[index].source = hasSources ? newValue[index] : 0 }
        }
    }
}

/// Vertical text is laid out as horizontal lines, which the page then turns a quarter turn
/// clockwise into columns (`VerticalFrame`). Its runs say how their glyphs stand.
public enum GlyphOrientation: UInt8, Sendable {
    /// Horizontal text, drawn as placed.
    case horizontal
    /// Upright glyphs of vertical text (CJK in a column, `text-combine-upright`), drawn as placed,
    /// unturned. In a line still to be turned their offsets are the line's; turning the page gives
    /// them their places on it, but not a turn.
    case upright
    /// Turned a quarter turn clockwise about the origin (Latin in a column, set sideways).
    case sideways
}

/// An image's place on the page. Until images are decoded, `state` says why only a placeholder shows.
public struct ImageBox: Sendable, Hashable {
    public var rect: Rect
    public var resource: String?
    public var alt: String
    public var state: State
    /// Image bytes carried with the page (an inline `<svg>` serialized), instead of a resource.
    public var inlineData: [UInt8]? = nil
    /// `opacity` (with the ancestors'): the image is painted at this alpha.
    public var opacity = 1.0

    public init(rect: Rect, resource: String?, alt: String, state: State, inlineData: [UInt8]? = nil, opacity: Double = 1) {
        self.opacity = opacity
        self.rect = rect
        self.resource = resource
        self.alt = alt
        self.state = state
        self.inlineData = inlineData
    }

    /// `image`: draw the decoded image; `placeholder`: not measured yet; `missing`: cannot be shown (alt box).
    public enum State: String, Sendable, Hashable { case image, placeholder, missing }
}

/// A gradient placed in a box: `area` is what it paints (the box, or the part of it on this page),
/// `box` the rectangle its geometry comes from, positions resolved to fractions of its line.
public struct GradientFill: Sendable, Hashable {
    public enum Shape: Sendable, Hashable {
        /// From `start` to `end`, in page pixels.
        case linear(start: Point, end: Point)
        /// Centred in the box, with radii `rx` and `ry`.
        case radial(rx: Double, ry: Double)
    }
    public var area: Rect
    public var box: Rect
    public var shape: Shape
    public var colors: [Color]
    public var positions: [Double]
    public var repeating: Bool
    /// Rounded corners of the box it fills (see `DecoratedBox.radii`); empty when square.
    public var radii: [Double] = []

    /// The gradient of `style` laid over `box`; `scale` device px per CSS px.
    public init(_ gradient: Gradient, box: Rect, scale: Double) {
        self.area = box
        self.box = box
        self.repeating = gradient.repeating
        let (w, h) = (box.width, box.height)
        let centre = Point(x: box.x + w / 2, y: box.y + h / 2)
        var length: Double
        switch gradient.shape {
        case .linear, .linearToCorner:
            var dx: Double, dy: Double
            if case .linear(let degrees) = gradient.shape {
                dx = sin(degrees * .pi / 180)
                dy = -cos(degrees * .pi / 180)
            } else if case .linearToCorner(let horizontal, let vertical) = gradient.shape {
                // Perpendicular to the diagonal between the other two corners (CSS Images 3).
                dx = Double(horizontal) * h
                dy = Double(vertical) * w
                let norm = max((dx * dx + dy * dy).squareRoot(), 1e-9)
                dx /= norm
                dy /= norm
            } else {
                (dx, dy) = (0, 1)
            }
            length = abs(w * dx) + abs(h * dy)
            shape = .linear(
                start: Point(x: centre.x - dx * length / 2, y: centre.y - dy * length / 2),
                end: Point(x: centre.x + dx * length / 2, y: centre.y + dy * length / 2))
        case .radial(let circle):
            if circle {
                let r = (w * w + h * h).squareRoot() / 2
                shape = .radial(rx: r, ry: r)
                length = r
            } else {
                shape = .radial(rx: w / 2 * 2.0.squareRoot(), ry: h / 2 * 2.0.squareRoot())
                length = w / 2 * 2.0.squareRoot()
            }
        }
        let stops = gradient.resolvedStops(length: length / scale)
        colors = stops.map(\.color)
        positions = stops.map(\.position)
    }

    init(area: Rect, box: Rect, shape: Shape, colors: [Color], positions: [Double], repeating: Bool, radii: [Double] = []) {
        self.radii = radii
        self.area = area
        self.box = box
        self.shape = shape
        self.colors = colors
        self.positions = positions
        self.repeating = repeating
    }

    /// The same gradient within rounded corners.
    func clipped(radii: [Double]) -> GradientFill {
        var rounded = self
        rounded.radii = radii.allSatisfy { $0 == 0 } ? [] : radii
        return rounded
    }

    func translated(dx: Double, dy: Double) -> GradientFill {
        var moved = self
        moved.area.x += dx
        moved.area.y += dy
        moved.box.x += dx
        moved.box.y += dy
        if case .linear(let start, let end) = shape {
            moved.shape = .linear(start: Point(x: start.x + dx, y: start.y + dy), end: Point(x: end.x + dx, y: end.y + dy))
        }
        return moved
    }
}

/// The rare, large cases are `indirect` (held in a box): an item is then as small as a glyph
/// run, and the chapter's thousands of them move and grow in arrays at that size.
public enum DisplayItem: Sendable {
    case glyphs(GlyphRun)
    case fill(Rect, Color)
    indirect case gradient(GradientFill)
    /// A straight rule (borders, underlines, hr): from/to along its centre line.
    case stroke(from: Point, to: Point, width: Double, color: Color, style: BorderStyle)
    indirect case image(ImageBox, altText: GlyphRun?)
    /// Rounded corners or shadows.
    indirect case box(DecoratedBox)
    indirect case backgroundImage(BackgroundImageFill)
}

/// The text a line holds: offsets into the spine item's text content (UTF-16, end exclusive).
public struct LineRecord: Sendable, Hashable {
    public var rect: Rect
    public var start: Int
    public var end: Int
    /// Which paragraph of the chapter the line belongs to, its index there and the paragraph's line
    /// count (what widow and orphan checks need).
    public var paragraph: Int
    public var lineIndex: Int
    public var lineCount: Int
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
    /// What the page's items are clipped to (a fixed-layout viewport on a larger page); nil is the page.
    public var clip: Rect? = nil
    /// The page's text is set in columns (`writing-mode: vertical-rl` or `vertical-lr`).
    public var vertical = false
    /// Its columns follow each other from the left (`vertical-lr`), not from the right.
    public var columnsLeftToRight = false
}

extension Page {
    /// Image tiles are at most this tall: a scrolled document is painted band by band, so a
    /// 200,000 px chapter never needs one surface of that size (cairo's own limit is 32,767).
    public static let maxTileHeight = 16384

    /// The bands a page is painted in, top first: one for a device page, several for a tall
    /// scrolled document.
    public var tiles: [(top: Int, height: Int)] {
        stride(from: 0, to: max(height, 1), by: Self.maxTileHeight).map { ($0, min(Self.maxTileHeight, height - $0)) }
    }

    /// A stable JSON form of the display list, for golden tests and debugging. Fonts are named by
    /// file name (not path), coordinates rounded to 1/100 px.
    public func displayListJSON() -> QuireCore.JSON {
        func number(_ value: Double) -> JSON { .double((value * 100).rounded() / 100) }
        func color(_ value: Color) -> JSON {
            .string("#" + hexString([value.red, value.green, value.blue, value.alpha]))
        }
        func fontName(_ face: FontFace) -> String {
            String(face.key.split(separator: "/").last ?? Substring(face.key))
        }
        var items: [JSON] = []
        for item in self.items {
            switch item {
            case .glyphs(let run):
                var members: [(String, JSON)] = [
                    ("glyphs", .string(fontName(run.face))), ("size", number(run.size)), ("color", color(run.color)),
                    ("x", number(run.origin.x)), ("y", number(run.origin.y)),
                    ("ids", .array(run.glyphs.map { .int(Int($0)) })),
                    ("xs", .array(run.xs.map { number(Double($0)) })),
                    ("synthetic", .string((run.syntheticBold ? "b" : "") + (run.syntheticItalic ? "i" : ""))),
                ]
                // Runs of vertical text: how they stand, and where each glyph sits down the column.
                if run.orientation != .horizontal || self.vertical {
                    members.append(("orientation", .string("\(run.orientation)")))
                    members.append(("ys", .array(run.ys.map { number(Double($0)) })))
                }
                items.append(.object(members))
            case .fill(let rect, let fill):
                items.append(.object([("fill", color(fill)), ("rect", .array([number(rect.x), number(rect.y), number(rect.width), number(rect.height)]))]))
            case .stroke(let from, let to, let width, let stroke, let style):
                items.append(
                    .object([
                        ("stroke", color(stroke)), ("style", .string(style.rawValue)), ("width", number(width)),
                        ("from", .array([number(from.x), number(from.y)])), ("to", .array([number(to.x), number(to.y)])),
                    ]))
            case .gradient(let fill):
                items.append(
                    .object([
                        ("gradient", .array(fill.colors.map(color))), ("positions", .array(fill.positions.map(number))),
                        ("rect", .array([number(fill.area.x), number(fill.area.y), number(fill.area.width), number(fill.area.height)])),
                    ]))
            case .box(let decorated):
                items.append(
                    .object([
                        ("box", color(decorated.background)), ("radii", .array(decorated.radii.map(number))),
                        ("rect", .array([number(decorated.box.x), number(decorated.box.y), number(decorated.box.width), number(decorated.box.height)])),
                        ("border", .array([decorated.borderWidths.top, decorated.borderWidths.right, decorated.borderWidths.bottom, decorated.borderWidths.left].map(number))),
                        ("shadows", .int(decorated.shadows.count)),
                    ]))
            case .backgroundImage(let fill):
                items.append(
                    .object([
                        ("backgroundImage", .optional(fill.resource)),
                        ("rect", .array([number(fill.area.x), number(fill.area.y), number(fill.area.width), number(fill.area.height)])),
                    ]))
            case .image(let box, _):
                items.append(
                    .object([
                        ("image", .optional(box.resource)), ("state", .string(box.state.rawValue)),
                        ("rect", .array([number(box.rect.x), number(box.rect.y), number(box.rect.width), number(box.rect.height)])),
                    ]))
            }
        }
        return .object([
            ("spineIndex", .int(spineIndex)), ("page", .int(indexInChapter)), ("start", .int(start)), ("end", .int(end)),
            ("lines", .array(lines.map { .array([.int($0.start), .int($0.end), number($0.rect.y), number($0.rect.height)]) })),
            ("items", .array(items)),
        ])
    }
}
