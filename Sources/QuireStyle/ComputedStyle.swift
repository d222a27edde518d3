import QuireCore

// The computed-style record: the one contract between the style engine (cascade, selectors,
// user-agent stylesheet) and layout. Layout reads only this; it never looks at tag names.
// Lengths are in CSS px (1/96 in); layout scales them to device pixels for the profile's dpi.

/// A CSS keyword held as an enum case, hashed by its case. `RawRepresentable`'s default hash
/// builds the raw value, a String, and hashes that: seven of them made a computed style's hash
/// 2,400 instructions, and styles are interned by the thousand in a book.
public protocol KeywordHashing: Hashable, RawRepresentable where RawValue == String {}

extension KeywordHashing {
    public func hash(into hasher: inout Hasher) {
        // A case without a payload is stored as its tag alone, one byte (none for a lone case):
        // the same for equal values.
        hasher.combine(withUnsafeBytes(of: self) { $0.first ?? 0 })
    }
}

public enum Display: String, Sendable, KeywordHashing {
    case block, inline, inlineBlock = "inline-block", listItem = "list-item", none
    case table, inlineTable = "inline-table", tableRow = "table-row", tableCell = "table-cell"
    case tableRowGroup = "table-row-group", tableHeaderGroup = "table-header-group"
    case tableFooterGroup = "table-footer-group", tableCaption = "table-caption"
    case tableColumn = "table-column", tableColumnGroup = "table-column-group"
    case flex, inlineFlex = "inline-flex", grid, inlineGrid = "inline-grid"
    case contents
    /// A ruby container and its annotation (`rt`): the annotation is set small above its base.
    case ruby, rubyText = "ruby-text"

    public var isBlockLevel: Bool {
        switch self {
        case .inline, .inlineBlock, .inlineTable, .inlineFlex, .inlineGrid, .none, .contents, .ruby, .rubyText: return false
        default: return true
        }
    }
}

/// A length that may be a percentage of the containing block's width (or height where CSS says so).
public enum Length: Sendable, Hashable {
    case px(Double)
    case percent(Double)

    public static let zero = Length.px(0)

    public func resolve(against base: Double) -> Double {
        switch self {
        case .px(let value): return value
        case .percent(let value): return base * value / 100
        }
    }
}

public enum LengthOrAuto: Sendable, Hashable {
    case auto
    case length(Length)

    public static func px(_ value: Double) -> LengthOrAuto { .length(.px(value)) }
    public static func percent(_ value: Double) -> LengthOrAuto { .length(.percent(value)) }

    public func resolve(against base: Double) -> Double? {
        if case .length(let length) = self { return length.resolve(against: base) }
        return nil
    }
}

public struct Edges<Value: Sendable & Hashable>: Sendable, Hashable {
    public var top: Value
    public var right: Value
    public var bottom: Value
    public var left: Value

    public init(top: Value, right: Value, bottom: Value, left: Value) {
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
    }

    public init(all: Value) { self.init(top: all, right: all, bottom: all, left: all) }

    /// The edges of a box written for vertical text, turned a quarter to lie in horizontal text:
    /// block-start (right in vertical-rl, left in vertical-lr) becomes top, inline-start (top)
    /// becomes left.
    public func turnedToHorizontal(rightToLeft: Bool) -> Edges {
        Edges(top: rightToLeft ? right : left, right: bottom, bottom: rightToLeft ? left : right, left: top)
    }
}

/// sRGB with alpha, 0…255 per channel.
public struct Color: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 255, green: 255, blue: 255)
    public static let transparent = Color(red: 0, green: 0, blue: 0, alpha: 0)
    public var isTransparent: Bool { alpha == 0 }
}

public enum BorderStyle: String, Sendable, KeywordHashing {
    case none, hidden, solid, dashed, dotted, double, groove, ridge, inset, outset
}

public enum FontStyle: String, Sendable, KeywordHashing { case normal, italic, oblique }
public enum FontVariantCaps: String, Sendable, KeywordHashing {
    case normal, smallCaps = "small-caps", allSmallCaps = "all-small-caps"
}

/// An OpenType feature setting such as `smcp` = 1 or `liga` = 0.
public struct FontFeature: Sendable, Hashable {
    public var tag: String
    public var value: UInt32
    public init(_ tag: String, _ value: UInt32 = 1) {
        self.tag = tag
        self.value = value
    }
}

public enum LineHeight: Sendable, Hashable {
    case normal
    case number(Double)
    case px(Double)
}

/// `text-align`, and the reader's `--align` override.
public enum TextAlign: String, Sendable, KeywordHashing { case start, end, left, right, center, justify }
public enum TextAlignLast: String, Sendable, KeywordHashing { case auto, start, end, left, right, center, justify }
public enum TextTransform: String, Sendable, KeywordHashing {
    case none, uppercase, lowercase, capitalize, fullWidth = "full-width", fullSizeKana = "full-size-kana"
}
public enum WhiteSpace: String, Sendable, KeywordHashing {
    case normal, pre, nowrap, preWrap = "pre-wrap", preLine = "pre-line", breakSpaces = "break-spaces"
    public var collapsesSpaces: Bool { self == .normal || self == .nowrap || self == .preLine }
    public var preservesNewlines: Bool { self != .normal && self != .nowrap }
    public var wraps: Bool { self != .nowrap && self != .pre }
}

public struct TextDecoration: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let underline = TextDecoration(rawValue: 1)
    public static let overline = TextDecoration(rawValue: 2)
    public static let lineThrough = TextDecoration(rawValue: 4)
}

public enum VerticalAlign: Sendable, Hashable {
    case baseline, sub, `super`, top, textTop, middle, bottom, textBottom
    case length(Length)  // percent is of line-height
}

public enum Hyphens: String, Sendable, KeywordHashing { case none, manual, auto }
public enum Direction: String, Sendable, KeywordHashing { case ltr, rtl }
public enum UnicodeBidi: String, Sendable, KeywordHashing {
    case normal, embed, isolate, bidiOverride = "bidi-override", isolateOverride = "isolate-override", plaintext
}

public enum ListStyleType: Sendable, Hashable {
    case none, disc, circle, square, decimal, decimalLeadingZero, lowerRoman, upperRoman, lowerAlpha, upperAlpha
    case lowerGreek, cjkDecimal
    case string(String)
}

public enum ListStylePosition: String, Sendable, KeywordHashing { case outside, inside }

/// `break-before`/`break-after` (and the legacy `page-break-*` aliases, mapped onto these).
public enum BreakBetween: String, Sendable, KeywordHashing { case auto, avoid, always, page, left, right, recto, verso, column, avoidPage = "avoid-page" }
public enum BreakInside: String, Sendable, KeywordHashing { case auto, avoid, avoidPage = "avoid-page" }

public enum FloatMode: String, Sendable, KeywordHashing { case none, left, right }
public enum Clear: String, Sendable, KeywordHashing { case none, left, right, both }
public enum FlexDirection: String, Sendable, KeywordHashing { case row, rowReverse = "row-reverse", column, columnReverse = "column-reverse" }
/// `justify-content` and `align-items` (flex-start/flex-end/left/right are read as start/end).
public enum BoxAlignment: String, Sendable, KeywordHashing {
    case normal, start, end, center, stretch, baseline
    case spaceBetween = "space-between", spaceAround = "space-around", spaceEvenly = "space-evenly"
}
public enum PositioningScheme: String, Sendable, KeywordHashing { case `static`, relative, absolute, fixed, sticky }
public enum Visibility: String, Sendable, KeywordHashing { case visible, hidden, collapse }
public enum ObjectFit: String, Sendable, KeywordHashing { case fill, contain, cover, none, scaleDown = "scale-down" }
public enum WordBreak: String, Sendable, KeywordHashing { case normal, breakAll = "break-all", keepAll = "keep-all", breakWord = "break-word" }
public enum OverflowWrap: String, Sendable, KeywordHashing { case normal, breakWord = "break-word", anywhere }
public enum LineBreak: String, Sendable, KeywordHashing { case auto, loose, normal, strict, anywhere }
public enum TextOrientation: String, Sendable, KeywordHashing { case mixed, upright, sideways }
public enum TextCombineUpright: String, Sendable, KeywordHashing { case none, all }
/// `hanging-punctuation`, its end part: whether a stop or comma that ends a line may stand past
/// the line's end (`allow-end`: only when it would not fit otherwise; `force-end`: always).
public enum HangingPunctuation: Sendable, Hashable {
    case none, allowEnd, forceEnd

    /// From the parsed value's words (`first` and `last` are not honoured).
    init(_ words: String) {
        let parts = words.split(separator: " ")
        self = parts.contains("force-end") ? .forceEnd : parts.contains("allow-end") ? .allowEnd : .none
    }
}
/// `text-emphasis`: the mark drawn beside each character (already resolved from the style keywords) and its colour.
/// One corner's radii: horizontal and vertical, percentages of the border box's width and height.
public struct CornerRadius: Sendable, Hashable {
    public var horizontal: Length
    public var vertical: Length
    public static let zero = CornerRadius(horizontal: .zero, vertical: .zero)
    public var isZero: Bool { horizontal.resolve(against: 1) <= 0 || vertical.resolve(against: 1) <= 0 }
}

/// `border-radius`: the four corners.
public struct CornerRadii: Sendable, Hashable {
    public var topLeft = CornerRadius.zero
    public var topRight = CornerRadius.zero
    public var bottomRight = CornerRadius.zero
    public var bottomLeft = CornerRadius.zero
    public static let square = CornerRadii()
    public var isSquare: Bool { topLeft.isZero && topRight.isZero && bottomRight.isZero && bottomLeft.isZero }
}

/// `background-repeat` of one layer.
public struct BackgroundRepeat: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable {
        case `repeat`, noRepeat = "no-repeat", space, round
    }
    public var x: Mode
    public var y: Mode
    public init(x: Mode, y: Mode) {
        self.x = x
        self.y = y
    }
}

/// `background-position` of one layer: each axis an offset from the start (left, top) or, with
/// `fromEnd`, from the end; a percentage aligns that point of the image with that of the box.
public struct BackgroundPosition: Sendable, Hashable {
    public var x: Length
    public var xFromEnd: Bool
    public var y: Length
    public var yFromEnd: Bool
    public static let origin = BackgroundPosition(x: .zero, xFromEnd: false, y: .zero, yFromEnd: false)
    public init(x: Length, xFromEnd: Bool, y: Length, yFromEnd: Bool) {
        self.x = x
        self.xFromEnd = xFromEnd
        self.y = y
        self.yFromEnd = yFromEnd
    }
}

/// `background-size` of one layer; nil lengths are auto.
/// One `background-image` layer.
public enum BackgroundImage: Sendable, Hashable {
    case url(String)
    /// A gradient: an image with no size of its own, sized by `background-size` (the padding box when auto).
    case gradient(Gradient)
}

extension ComputedStyle {
    /// A background that is one gradient at its auto size: drawn as one fill over the border box.
    /// Other gradient layers are tiled like images.
    public var backgroundGradient: Gradient? {
        guard backgroundImages.count == 1, case .gradient(let gradient)? = backgroundImages[0],
            backgroundSizes.first == .lengths(nil, nil)
        else { return nil }
        return gradient
    }
}

public enum BackgroundSize: Sendable, Hashable {
    case contain, cover
    case lengths(Length?, Length?)
}

/// One `box-shadow` layer, lengths in CSS px.
public struct BoxShadow: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var blur: Double
    public var spread: Double
    /// nil: the element's `color`.
    public var color: Color?
    public var inset: Bool
}

public struct TextEmphasis: Sendable, Hashable {
    public var mark: String
    public var color: Color?  // nil = currentColor
    /// The marks stand on the text's under side (`text-emphasis-position: under`, or `left` in
    /// vertical text), not on its over side.
    public var under = false
    public init(mark: String, color: Color? = nil) {
        self.mark = mark
        self.color = color
    }
}
public enum BoxSizing: String, Sendable, KeywordHashing { case contentBox = "content-box", borderBox = "border-box" }
public enum WritingMode: String, Sendable, KeywordHashing { case horizontalTB = "horizontal-tb", verticalRL = "vertical-rl", verticalLR = "vertical-lr" }

/// An immutable value held by reference, compared by value (by identity first): what holds it
/// retains one object when copied, whatever the value holds.
final class Shared<Value: Hashable & Sendable>: Sendable, Hashable {
    let value: Value
    init(_ value: Value) { self.value = value }

    static func == (lhs: Shared, rhs: Shared) -> Bool { lhs === rhs || lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// `ComputedStyle`'s background layers and box shadows.
struct PaintLayers: Sendable, Hashable {
    var boxShadows: [BoxShadow] = []
    var backgroundImages: [BackgroundImage?] = []
    var backgroundRepeats = [BackgroundRepeat(x: .repeat, y: .repeat)]
    var backgroundPositions = [BackgroundPosition.origin]
    var backgroundSizes = [BackgroundSize.lengths(nil, nil)]

    static let initial = Shared(PaintLayers())
}

public struct ComputedStyle: Sendable, Hashable {
    // Box (not inherited).
    public var display: Display = .inline
    public var margin = Edges<LengthOrAuto>(all: .px(0))
    public var padding = Edges<Length>(all: .zero)
    public var borderWidth = Edges<Double>(all: 0)
    public var borderStyle = Edges<BorderStyle>(all: .none)
    public var borderRadius = CornerRadii.square
    /// The product of this element's and its ancestors' `opacity`: colours are faded by it
    /// already; images are painted with it.
    public var opacity = 1.0
    /// `box-shadow` layers, the first on top.
    public var boxShadows: [BoxShadow] {
        get { paintLayers.value.boxShadows }
        set { updatePaintLayers { $0.boxShadows = newValue } }
    }
    public var borderColor = Edges<Color?>(all: nil)  // nil = currentColor
    public var width: LengthOrAuto = .auto
    public var height: LengthOrAuto = .auto
    public var minWidth: Length = .zero
    public var minHeight: Length = .zero
    public var maxWidth: Length? = nil  // nil = none
    public var maxHeight: Length? = nil
    public var float: FloatMode = .none
    public var clear: Clear = .none
    public var position: PositioningScheme = .static
    public var offsets = Edges<LengthOrAuto>(all: .auto)  // top/right/bottom/left
    /// `z-index`; nil is `auto`.
    public var zIndex: Int? = nil
    public var backgroundColor: Color = .transparent
    public var breakBefore: BreakBetween = .auto
    public var breakAfter: BreakBetween = .auto
    public var breakInside: BreakInside = .auto
    public var verticalAlign: VerticalAlign = .baseline
    public var textDecoration: TextDecoration = []
    public var unicodeBidi: UnicodeBidi = .normal
    public var objectFit: ObjectFit = .fill
    public var overflowHidden = false
    /// Whether width/height include padding and border.
    public var boxSizing: BoxSizing = .contentBox
    /// Flex containers (the column subset books use: centred imprints, epigraphs, plates).
    public var flexDirection: FlexDirection = .row
    public var justifyContent: BoxAlignment = .normal
    public var alignItems: BoxAlignment = .normal
    /// Multi-column layout: `column-count` and `column-width` (nil is `auto`), `column-gap` (nil
    /// is `normal`, 1em), whether the last columns are balanced, and the rule between columns.
    public var columnCount: Int? = nil
    public var columnWidth: Double? = nil
    public var columnGap: Length? = nil
    public var columnBalance = true
    public var columnRuleWidth: Double = 3
    public var columnRuleStyle: BorderStyle = .none
    public var columnRuleColor: Color? = nil
    /// Whether the box lays its content out in columns.
    public var isMultiColumn: Bool { (columnCount ?? 1) > 1 || columnWidth != nil }

    // Text (inherited).
    public var fontFamilies: [String] = ["serif"]
    public var fontSize: Double = 16
    public var fontWeight: Int = 400
    public var fontStyle: FontStyle = .normal
    public var fontVariantCaps: FontVariantCaps = .normal
    public var fontFeatures: [FontFeature] = []
    public var lineHeight: LineHeight = .normal
    public var color: Color = .black
    public var textAlign: TextAlign = .start
    public var textAlignLast: TextAlignLast = .auto
    public var textIndent: Length = .zero
    public var textTransform: TextTransform = .none
    public var letterSpacing: Double = 0
    public var wordSpacing: Double = 0
    public var whiteSpace: WhiteSpace = .normal
    public var hyphens: Hyphens = .manual
    public var direction: Direction = .ltr
    public var writingMode: WritingMode = .horizontalTB
    /// BCP 47 language from `xml:lang`/`lang`, inherited; nil falls back to the book's language.
    public var language: String? = nil
    public var listStyleType: ListStyleType = .disc
    public var listStylePosition: ListStylePosition = .outside
    public var widows: Int = 2
    public var orphans: Int = 2
    public var visibility: Visibility = .visible
    public var wordBreak: WordBreak = .normal
    public var overflowWrap: OverflowWrap = .normal
    public var lineBreak: LineBreak = .auto
    public var textOrientation: TextOrientation = .mixed
    public var textCombineUpright: TextCombineUpright = .none
    public var textEmphasis: TextEmphasis? = nil
    /// `text-underline-position: under`: the underline below the descenders, not at the baseline's offset.
    public var underlineUnder = false
    /// `text-underline-position: right` (or `under right`): in vertical text the underline stands
    /// on the column's right, its over side, not on its left.
    public var underlineRight = false
    public var hangingPunctuation: HangingPunctuation = .none
    /// Tables: adjacent cell borders merge into one (`border-collapse: collapse`).
    public var borderCollapse = false
    /// Tables in the separated model: CSS px between cells, and between cells and the table's border.
    /// `background-image` layers, first on top (nil for a `none` layer), URLs as written in the
    /// style sheet; and the layers' repeat, position and size lists, which repeat to cover every layer.
    public var backgroundImages: [BackgroundImage?] {
        get { paintLayers.value.backgroundImages }
        set { updatePaintLayers { $0.backgroundImages = newValue } }
    }
    public var backgroundRepeats: [BackgroundRepeat] {
        get { paintLayers.value.backgroundRepeats }
        set { updatePaintLayers { $0.backgroundRepeats = newValue } }
    }
    public var backgroundPositions: [BackgroundPosition] {
        get { paintLayers.value.backgroundPositions }
        set { updatePaintLayers { $0.backgroundPositions = newValue } }
    }
    public var backgroundSizes: [BackgroundSize] {
        get { paintLayers.value.backgroundSizes }
        set { updatePaintLayers { $0.backgroundSizes = newValue } }
    }
    /// The background layers and box shadows, in one box shared by every style that has the same
    /// ones (nearly every style has none): styles are copied by the hundred thousand in a book's
    /// layout, and each of these arrays was a reference counted at every copy.
    private var paintLayers = PaintLayers.initial

    private mutating func updatePaintLayers(_ change: (inout PaintLayers) -> Void) {
        var layers = paintLayers.value
        change(&layers)
        if layers != paintLayers.value { paintLayers = Shared(layers) }
    }
    public var borderSpacingHorizontal = 0.0
    public var borderSpacingVertical = 0.0

    public init() {}

    /// A child's starting point: inherited properties copied, the rest at their initial values.
    public func inheritedForChild() -> ComputedStyle {
        var child = ComputedStyle()
        child.fontFamilies = fontFamilies
        child.fontSize = fontSize
        child.fontWeight = fontWeight
        child.fontStyle = fontStyle
        child.fontVariantCaps = fontVariantCaps
        child.fontFeatures = fontFeatures
        child.lineHeight = lineHeight
        child.color = color
        child.textAlign = textAlign
        child.textAlignLast = textAlignLast
        child.textIndent = textIndent
        child.textTransform = textTransform
        child.letterSpacing = letterSpacing
        child.wordSpacing = wordSpacing
        child.whiteSpace = whiteSpace
        child.hyphens = hyphens
        child.direction = direction
        child.writingMode = writingMode
        child.language = language
        child.listStyleType = listStyleType
        child.listStylePosition = listStylePosition
        child.widows = widows
        child.orphans = orphans
        child.visibility = visibility
        child.wordBreak = wordBreak
        child.overflowWrap = overflowWrap
        child.lineBreak = lineBreak
        child.textOrientation = textOrientation
        child.textCombineUpright = textCombineUpright
        child.textEmphasis = textEmphasis
        child.underlineUnder = underlineUnder
        child.underlineRight = underlineRight
        child.hangingPunctuation = hangingPunctuation
        child.borderCollapse = borderCollapse
        child.borderSpacingHorizontal = borderSpacingHorizontal
        child.borderSpacingVertical = borderSpacingVertical
        return child
    }

    /// Styles are interned by value many times per chapter, and hashing every field (strings,
    /// arrays, 80 of them) cost more than the lookups: the hash takes the fields that tell a book's
    /// styles apart; equality still compares all of them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(display)
        hasher.combine(fontSize)
        hasher.combine(fontWeight)
        hasher.combine(fontStyle)
        hasher.combine(fontVariantCaps)
        hasher.combine(textAlign)
        hasher.combine(textIndent)
        hasher.combine(margin)
        hasher.combine(color)
        hasher.combine(whiteSpace)
        hasher.combine(verticalAlign)
        hasher.combine(hyphens)
        hasher.combine(fontFamilies.first)
    }

    /// The used line height in CSS px for a font whose "normal" line spacing is `normalFactor` × size.
    public func lineHeightPx(normalFactor: Double = 1.2) -> Double {
        switch lineHeight {
        case .normal: return fontSize * normalFactor
        case .number(let factor): return fontSize * factor
        case .px(let value): return value
        }
    }
}

/// Generated content for `::before`/`::after`/`::marker`, already resolved to text (counters, quotes, attr()).
public struct GeneratedContent: Sendable, Hashable {
    public var text: String
    public var style: ComputedStyle

    public init(text: String, style: ComputedStyle) {
        self.text = text
        self.style = style
    }
}

/// Everything the style engine says about one element.
public struct ElementStyle: Sendable, Hashable {
    public var style: ComputedStyle
    public var before: GeneratedContent? {
        get { pseudo?.value.before }
        set { updatePseudo { $0.before = newValue } }
    }
    public var after: GeneratedContent? {
        get { pseudo?.value.after }
        set { updatePseudo { $0.after = newValue } }
    }
    /// `::marker` for list items: the marker text (already resolved from list-style-type and counters) and its style.
    public var marker: GeneratedContent? {
        get { pseudo?.value.marker }
        set { updatePseudo { $0.marker = newValue } }
    }
    public var firstLetter: ComputedStyle? {
        get { pseudo?.value.firstLetter }
        set { updatePseudo { $0.firstLetter = newValue } }
    }
    public var firstLine: ComputedStyle? {
        get { pseudo?.value.firstLine }
        set { updatePseudo { $0.firstLine = newValue } }
    }
    /// The pseudo-elements, in a box shared with the document's styles: most elements have none,
    /// and an element's styles go by value through the building of the box tree (five optional
    /// styles inline made it six computed styles long, copied at every step).
    private var pseudo: Shared<PseudoStyles>?

    public init(style: ComputedStyle) { self.style = style }

    init(style: ComputedStyle, pseudo: Shared<PseudoStyles>?) {
        self.style = style
        self.pseudo = pseudo
    }

    private mutating func updatePseudo(_ change: (inout PseudoStyles) -> Void) {
        var values = pseudo?.value ?? PseudoStyles()
        change(&values)
        pseudo = values == PseudoStyles() ? nil : Shared(values)
    }
}

/// An element's pseudo-element content and styles (`::before`, `::after`, `::marker`,
/// `::first-letter`, `::first-line`).
struct PseudoStyles: Sendable, Hashable {
    var before: GeneratedContent?
    var after: GeneratedContent?
    var marker: GeneratedContent?
    var firstLetter: ComputedStyle?
    var firstLine: ComputedStyle?
}

