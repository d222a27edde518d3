import QuireContainer
import QuireCore
import QuireStyle

/// A box the plain fill and straight strokes cannot draw: one with rounded corners
/// (`border-radius`) or shadows (`box-shadow`). Painted in CSS order: outer shadows, the
/// background, inset shadows, then the border, all clipped to `area` (the part on this page).
public struct DecoratedBox: Sendable, Hashable {
    /// What this item may paint: the box and its outer shadows, or the part of them on this page.
    public var area: Rect
    /// The border box, in page pixels.
    public var box: Rect
    /// Corner radii in device pixels, horizontal then vertical, for the top-left, top-right,
    /// bottom-right and bottom-left corners; already reduced so adjacent corners do not overlap.
    public var radii: [Double]
    public var background: Color
    public var borderWidths: Edges<Double>
    public var borderColors: Edges<Color>
    public var borderStyle: BorderStyle
    public var shadows: [Shadow]

    /// A `box-shadow` layer in device pixels.
    public struct Shadow: Sendable, Hashable {
        public var x: Double
        public var y: Double
        public var blur: Double
        public var spread: Double
        public var color: Color
        public var inset: Bool
    }

    public var hasBorder: Bool { borderWidths.top > 0 || borderWidths.right > 0 || borderWidths.bottom > 0 || borderWidths.left > 0 }

    /// The decorations of `style` on the border box `box` (`scale` device px per CSS px), or nil
    /// when a plain fill and strokes draw it (square corners, no shadow). `border` holds the used
    /// widths; `background` is false where a caller paints no background (the canvas root).
    init?(_ style: ComputedStyle, box: Rect, border: Edges<Double>, scale: Double, background: Bool = true) {
        guard !style.borderRadius.isSquare || !style.boxShadows.isEmpty, box.width > 0, box.height > 0 else { return nil }
        self.box = box
        radii = Self.usedRadii(style.borderRadius, box: box, scale: scale)
        self.background = background ? style.backgroundColor : .transparent
        borderWidths = border
        func color(_ value: Color?) -> Color { value ?? style.color }
        borderColors = Edges(
            top: color(style.borderColor.top), right: color(style.borderColor.right), bottom: color(style.borderColor.bottom),
            left: color(style.borderColor.left))
        borderStyle = style.borderStyle.top != .none ? style.borderStyle.top : [style.borderStyle.right, style.borderStyle.bottom, style.borderStyle.left].first { $0 != .none } ?? .none
        shadows = style.boxShadows.map {
            Shadow(x: $0.x * scale, y: $0.y * scale, blur: $0.blur * scale, spread: $0.spread * scale, color: $0.color ?? style.color, inset: $0.inset)
        }
        area = box
        for shadow in shadows where !shadow.inset {
            let reach = shadow.blur + max(shadow.spread, 0)
            let cast = Rect(x: box.x + shadow.x - reach, y: box.y + shadow.y - reach, width: box.width + 2 * reach, height: box.height + 2 * reach)
            area = area.union(cast)
        }
    }

    init(
        area: Rect, box: Rect, radii: [Double], background: Color, borderWidths: Edges<Double>, borderColors: Edges<Color>,
        borderStyle: BorderStyle, shadows: [Shadow]
    ) {
        self.area = area
        self.box = box
        self.radii = radii
        self.background = background
        self.borderWidths = borderWidths
        self.borderColors = borderColors
        self.borderStyle = borderStyle
        self.shadows = shadows
    }

    /// Radii resolved against the box and reduced by one factor for all corners when two that
    /// share a side would overlap (CSS Backgrounds 3, section 5.5).
    static func usedRadii(_ corners: CornerRadii, box: Rect, scale: Double) -> [Double] {
        var radii: [Double] = []
        for corner in [corners.topLeft, corners.topRight, corners.bottomRight, corners.bottomLeft] {
            let horizontal = corner.horizontal.resolve(against: box.width / scale) * scale
            let vertical = corner.vertical.resolve(against: box.height / scale) * scale
            // A corner with either radius zero is square.
            radii += horizontal > 0 && vertical > 0 ? [horizontal, vertical] : [0, 0]
        }
        var factor = 1.0
        for (sum, side) in [(radii[0] + radii[2], box.width), (radii[4] + radii[6], box.width), (radii[3] + radii[5], box.height), (radii[7] + radii[1], box.height)]
        where sum > side {
            factor = min(factor, side / sum)
        }
        return factor < 1 ? radii.map { $0 * factor } : radii
    }

    func translated(dx: Double, dy: Double) -> DecoratedBox {
        var moved = self
        moved.area.x += dx
        moved.area.y += dy
        moved.box.x += dx
        moved.box.y += dy
        return moved
    }
}

/// One `background-image` layer in a box: the image, and what the painter needs to size, place
/// and repeat it once it knows the image's own size (layout does not need it: a background
/// changes no box).
public struct BackgroundImageFill: Sendable, Hashable {
    /// What this layer may paint: the border box, or the part of it on this page.
    public var area: Rect
    /// The border box it is clipped to, with `radii` (see `DecoratedBox.radii`; empty when square).
    public var clip: Rect
    public var radii: [Double]
    /// The positioning area: the padding box.
    public var box: Rect
    /// An archive path, or nil with `inlineData` (a `data:` URL's bytes).
    public var resource: String?
    public var inlineData: [UInt8]?
    /// A gradient layer instead of an image (no size of its own: the padding box when auto).
    public var gradient: Gradient? = nil
    public var repeatMode: BackgroundRepeat
    /// In CSS px (or percentages); `scale` device px per CSS px, and one image pixel is one CSS px.
    public var position: BackgroundPosition
    public var size: BackgroundSize
    public var scale: Double
    /// `opacity` (with the ancestors'), as for images.
    public var opacity = 1.0

    func translated(dx: Double, dy: Double) -> BackgroundImageFill {
        var moved = self
        for keyPath in [\BackgroundImageFill.area, \.clip, \.box] {
            moved[keyPath: keyPath].x += dx
            moved[keyPath: keyPath].y += dy
        }
        return moved
    }

    /// The layers of `style` in the border box `rect`, bottom layer first (the order they are
    /// painted in). URLs resolve against `documentPath` (style sheets have made theirs root-relative).
    static func layers(_ style: ComputedStyle, rect: Rect, border: Edges<Double>, radii: [Double], documentPath: String, scale: Double) -> [BackgroundImageFill] {
        let layers = style.backgroundImages
        // One auto-sized gradient is drawn as a fill over the border box (`boxDecorations`).
        guard !layers.isEmpty, rect.width > 0, rect.height > 0, style.backgroundGradient == nil else { return [] }
        let paddingBox = rect.inset(by: border)
        var fills: [BackgroundImageFill] = []
        for (index, layer) in layers.enumerated().reversed() {
            var resource: String? = nil
            var inlineData: [UInt8]? = nil
            var gradient: Gradient? = nil
            guard let layer else { continue }
            guard case .url(let url) = layer else {
                if case .gradient(let value) = layer { gradient = value }
                fills.append(BackgroundImageFill(
                    area: rect, clip: rect, radii: radii.allSatisfy { $0 == 0 } ? [] : radii, box: paddingBox, resource: nil, inlineData: nil,
                    gradient: gradient, repeatMode: style.backgroundRepeats[index % style.backgroundRepeats.count],
                    position: style.backgroundPositions[index % style.backgroundPositions.count],
                    size: style.backgroundSizes[index % style.backgroundSizes.count], scale: scale, opacity: style.opacity))
                continue
            }
            if let data = DataURL(url) {
                inlineData = data.bytes
            } else if let resolved = Href.resolve(url, relativeTo: documentPath) {
                resource = resolved.path
            } else {
                continue
            }
            fills.append(BackgroundImageFill(
                area: rect, clip: rect, radii: radii.allSatisfy { $0 == 0 } ? [] : radii, box: paddingBox, resource: resource, inlineData: inlineData,
                repeatMode: style.backgroundRepeats[index % style.backgroundRepeats.count],
                position: style.backgroundPositions[index % style.backgroundPositions.count],
                size: style.backgroundSizes[index % style.backgroundSizes.count], scale: scale, opacity: style.opacity))
        }
        return fills
    }
}

/// A box's background colour, gradient, image layers, border, corners and shadow at `rect` (its
/// border box), in paint order, each with the part of the flow it covers (what a page's cut
/// selects it by). `background: false` leaves the background to the page (the canvas's box).
/// `leftEdge`/`rightEdge` false: an inline box broken across lines, with no edge or rounding on
/// that side of this line's piece. One painter for blocks, tables, images and inline boxes.
func boxDecorations(
    _ style: ComputedStyle, rect: Rect, border: Edges<Double>, scale: Double, documentPath: String, background: Bool = true,
    leftEdge: Bool = true, rightEdge: Bool = true
) -> [(top: Double, bottom: Double, item: DisplayItem)] {
    var items: [(top: Double, bottom: Double, item: DisplayItem)] = []
    func add(_ item: DisplayItem) { items.append((rect.y, rect.maxY, item)) }
    guard rect.height > 0 else { return borderStrokes(style, border: border, rect: rect, leftEdge: leftEdge, rightEdge: rightEdge) }
    let gradient = background && rect.width > 0 ? style.backgroundGradient.map { GradientFill($0, box: rect, scale: scale) } : nil
    func images(radii: [Double]) {
        guard background else { return }
        for layer in BackgroundImageFill.layers(style, rect: rect, border: border, radii: radii, documentPath: documentPath, scale: scale) {
            add(.backgroundImage(layer))
        }
    }
    if var decorated = DecoratedBox(style, box: rect, border: border, scale: scale, background: background) {
        if !leftEdge {
            decorated.borderWidths.left = 0
            for index in [0, 1, 6, 7] { decorated.radii[index] = 0 }
        }
        if !rightEdge {
            decorated.borderWidths.right = 0
            for index in [2, 3, 4, 5] { decorated.radii[index] = 0 }
        }
        // Colour and shadow under the gradient and images, the border over them.
        var under = decorated
        under.borderWidths = Edges(all: 0)
        if !under.background.isTransparent || !under.shadows.isEmpty { add(.box(under)) }
        if let gradient { add(.gradient(gradient.clipped(radii: decorated.radii))) }
        images(radii: decorated.radii)
        if decorated.hasBorder {
            var over = decorated
            over.background = .transparent
            over.shadows = []
            over.area = rect
            add(.box(over))
        }
        return items
    }
    if background, !style.backgroundColor.isTransparent { add(.fill(rect, style.backgroundColor)) }
    if let gradient { add(.gradient(gradient)) }
    images(radii: [])
    return items + borderStrokes(style, border: border, rect: rect, leftEdge: leftEdge, rightEdge: rightEdge)
}

/// A square box's borders as strokes down the middle of each side, each with the part of the
/// flow it covers.
func borderStrokes(_ style: ComputedStyle, border: Edges<Double>, rect: Rect, leftEdge: Bool = true, rightEdge: Bool = true) -> [(top: Double, bottom: Double, item: DisplayItem)] {
    func color(_ value: Color?) -> Color { value ?? style.color }
    var strokes: [(top: Double, bottom: Double, item: DisplayItem)] = []
    if border.top > 0 {
        let y = rect.y + border.top / 2
        strokes.append((rect.y, rect.y + border.top, .stroke(from: Point(x: rect.x, y: y), to: Point(x: rect.maxX, y: y), width: border.top, color: color(style.borderColor.top), style: style.borderStyle.top)))
    }
    if border.bottom > 0 {
        let y = rect.maxY - border.bottom / 2
        strokes.append((rect.maxY - border.bottom, rect.maxY, .stroke(from: Point(x: rect.x, y: y), to: Point(x: rect.maxX, y: y), width: border.bottom, color: color(style.borderColor.bottom), style: style.borderStyle.bottom)))
    }
    if leftEdge, border.left > 0 {
        let x = rect.x + border.left / 2
        strokes.append((rect.y, rect.maxY, .stroke(from: Point(x: x, y: rect.y), to: Point(x: x, y: rect.maxY), width: border.left, color: color(style.borderColor.left), style: style.borderStyle.left)))
    }
    if rightEdge, border.right > 0 {
        let x = rect.maxX - border.right / 2
        strokes.append((rect.y, rect.maxY, .stroke(from: Point(x: x, y: rect.y), to: Point(x: x, y: rect.maxY), width: border.right, color: color(style.borderColor.right), style: style.borderStyle.right)))
    }
    return strokes
}
