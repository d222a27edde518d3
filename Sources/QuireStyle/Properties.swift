// Property names, value grammars and shorthand expansion. Everything here is pure parsing: a
// declaration becomes longhand specified values once per stylesheet, resolved later per element.

enum PropertyID: Int, CaseIterable, Hashable, Sendable {
    // Not inherited.
    case display, marginTop, marginRight, marginBottom, marginLeft
    case paddingTop, paddingRight, paddingBottom, paddingLeft
    case borderTopWidth, borderRightWidth, borderBottomWidth, borderLeftWidth
    case borderTopStyle, borderRightStyle, borderBottomStyle, borderLeftStyle
    case borderTopColor, borderRightColor, borderBottomColor, borderLeftColor
    case width, height, minWidth, minHeight, maxWidth, maxHeight
    case float, clear, position, top, right, bottom, left, zIndex
    case backgroundColor, breakBefore, breakAfter, breakInside, verticalAlign, textDecorationLine
    case unicodeBidi, objectFit, overflow, boxSizing, opacity, backgroundImage
    case flexDirection, justifyContent, alignItems
    case borderTopLeftRadius, borderTopRightRadius, borderBottomRightRadius, borderBottomLeftRadius, boxShadow
    case backgroundRepeat, backgroundPosition, backgroundSize
    case columnCount, columnWidth, columnGap, columnFill, columnRuleWidth, columnRuleStyle, columnRuleColor
    case content, counterReset, counterIncrement, counterSet
    // Inherited.
    case fontFamily, fontSize, fontWeight, fontStyle, fontVariantCaps, fontVariantNumeric, fontVariantLigatures
    case fontVariantPosition, fontFeatureSettings, lineHeight, color, textAlign, textAlignLast, textIndent
    case textTransform, letterSpacing, wordSpacing, whiteSpace, hyphens, direction, writingMode
    case listStyleType, listStylePosition, widows, orphans, visibility, quotes
    case wordBreak, overflowWrap, lineBreak, textOrientation, textCombineUpright, textEmphasisStyle, textEmphasisColor
    case borderCollapse, borderSpacingHorizontal, borderSpacingVertical, textUnderlinePosition, textEmphasisPosition
    case hangingPunctuation

    var inherited: Bool { rawValue >= PropertyID.fontFamily.rawValue }
}

enum CSSWide: Hashable, Sendable { case inherit, initial, unset }

enum ContentItem: Hashable, Sendable {
    case string(String)
    case attr(String)
    case counter(String, ListStyleType)
    case counters(String, String, ListStyleType)
    case openQuote, closeQuote, noOpenQuote, noCloseQuote
}

struct CounterOp: Hashable, Sendable {
    var name: String
    var value: Int
}

enum SpecifiedValue: Hashable, Sendable {
    case keyword(String)
    case length(SpecifiedLength)
    case number(Double)
    case integer(Int)
    case color(Color?)  // nil = currentColor
    case families([String])
    case features([FontFeature])
    case content([ContentItem])  // `normal`/`none` are keywords
    case counters([CounterOp])
    case quotes([String])  // open, close, open, close…
    case listStyle(ListStyleType)
    case decoration(UInt8)
    /// A corner's horizontal and vertical radius (`border-*-radius`).
    case radius(SpecifiedLength, SpecifiedLength)
    /// `box-shadow` layers, first on top; empty for none.
    case shadows([ShadowValue])
    /// `background-image` layers that are all image URLs (or none), first on top.
    case backgroundImages([BackgroundImage?])
    case backgroundRepeats([BackgroundRepeat])
    case backgroundPositions([SpecifiedBackgroundPosition])
    case backgroundSizes([SpecifiedBackgroundSize])
}

/// One layer's `background-position` as written: each axis an offset from its start or its end.
struct SpecifiedBackgroundPosition: Hashable, Sendable {
    var x: SpecifiedLength
    var xFromEnd: Bool
    var y: SpecifiedLength
    var yFromEnd: Bool
}

/// One layer's `background-size` as written; nil lengths are auto.
enum SpecifiedBackgroundSize: Hashable, Sendable {
    case contain, cover
    case lengths(SpecifiedLength?, SpecifiedLength?)
}

/// One `box-shadow` layer as written.
struct ShadowValue: Hashable, Sendable {
    var x: SpecifiedLength
    var y: SpecifiedLength
    var blur: SpecifiedLength
    var spread: SpecifiedLength
    var color: Color?  // nil = currentColor
    var inset: Bool
}

enum DeclValue: Hashable, Sendable {
    case value(SpecifiedValue)
    case wide(CSSWide)
    /// Contains var(): parsed after substitution, as the property (maybe a shorthand) `source`.
    case pending(source: String, [CV])
}

struct Decl: Hashable, Sendable {
    var property: PropertyID
    var value: DeclValue
    var important: Bool
}

/// A declaration block after parsing: longhands plus custom properties.
struct DeclarationBlock: Hashable, Sendable {
    var declarations: [Decl] = []
    var custom: [CustomDecl] = []
    var hasImportant = false
    var hasNormal = false
    /// For the CSS report only (empty otherwise): for each of `declarations`, the index of the
    /// written declaration it came from in its block (-1 when the report does not count that one
    /// applied), and that declaration's property name.
    var writtenIndices: [Int32] = []
    var writtenNames: [String] = []
}

struct CustomDecl: Hashable, Sendable {
    var name: String
    var value: [CV]
    var important: Bool
}

enum DeclarationStatus { case applied, unsupported, invalid }

enum Properties {
    static let longhandNames: [String: PropertyID] = [
        "display": .display, "margin-top": .marginTop, "margin-right": .marginRight, "margin-bottom": .marginBottom,
        "margin-left": .marginLeft, "padding-top": .paddingTop, "padding-right": .paddingRight,
        "padding-bottom": .paddingBottom, "padding-left": .paddingLeft,
        "border-top-width": .borderTopWidth, "border-right-width": .borderRightWidth,
        "border-bottom-width": .borderBottomWidth, "border-left-width": .borderLeftWidth,
        "border-top-style": .borderTopStyle, "border-right-style": .borderRightStyle,
        "border-bottom-style": .borderBottomStyle, "border-left-style": .borderLeftStyle,
        "border-top-color": .borderTopColor, "border-right-color": .borderRightColor,
        "border-bottom-color": .borderBottomColor, "border-left-color": .borderLeftColor,
        "width": .width, "height": .height, "min-width": .minWidth, "min-height": .minHeight,
        "max-width": .maxWidth, "max-height": .maxHeight, "float": .float, "clear": .clear, "position": .position, "z-index": .zIndex, "inset-block-start": .top, "inset-block-end": .bottom, "inset-inline-start": .left, "inset-inline-end": .right,
        "top": .top, "right": .right, "bottom": .bottom, "left": .left, "background-color": .backgroundColor,
        "break-before": .breakBefore, "break-after": .breakAfter, "break-inside": .breakInside,
        "vertical-align": .verticalAlign, "text-decoration-line": .textDecorationLine,
        "-webkit-text-decoration-line": .textDecorationLine, "unicode-bidi": .unicodeBidi,
        "object-fit": .objectFit, "border-top-left-radius": .borderTopLeftRadius,
        "border-top-right-radius": .borderTopRightRadius, "border-bottom-right-radius": .borderBottomRightRadius,
        "border-bottom-left-radius": .borderBottomLeftRadius, "box-shadow": .boxShadow,
        "background-repeat": .backgroundRepeat, "background-position": .backgroundPosition, "background-size": .backgroundSize, "-webkit-box-shadow": .boxShadow, "opacity": .opacity, "background-image": .backgroundImage, "box-sizing": .boxSizing, "-webkit-box-sizing": .boxSizing,
        "-moz-box-sizing": .boxSizing, "flex-direction": .flexDirection, "-webkit-flex-direction": .flexDirection,
        "justify-content": .justifyContent, "-webkit-justify-content": .justifyContent,
        "align-items": .alignItems, "-webkit-align-items": .alignItems, "content": .content, "counter-reset": .counterReset,
        "counter-increment": .counterIncrement, "counter-set": .counterSet, "font-family": .fontFamily,
        "font-size": .fontSize, "font-weight": .fontWeight, "font-style": .fontStyle,
        "font-variant-caps": .fontVariantCaps, "font-variant-numeric": .fontVariantNumeric,
        "font-variant-ligatures": .fontVariantLigatures, "-webkit-font-variant-ligatures": .fontVariantLigatures,
        "font-variant-position": .fontVariantPosition, "font-feature-settings": .fontFeatureSettings,
        "-webkit-font-feature-settings": .fontFeatureSettings, "-moz-font-feature-settings": .fontFeatureSettings,
        "line-height": .lineHeight, "color": .color, "text-align": .textAlign, "text-align-last": .textAlignLast,
        "-moz-text-align-last": .textAlignLast, "-epub-text-align-last": .textAlignLast, "text-indent": .textIndent, "text-transform": .textTransform,
        "letter-spacing": .letterSpacing, "word-spacing": .wordSpacing, "white-space": .whiteSpace,
        "hyphens": .hyphens, "-webkit-hyphens": .hyphens, "-epub-hyphens": .hyphens, "-moz-hyphens": .hyphens,
        "-ms-hyphens": .hyphens, "direction": .direction, "writing-mode": .writingMode,
        "-epub-writing-mode": .writingMode, "-webkit-writing-mode": .writingMode, "-ms-writing-mode": .writingMode,
        "list-style-type": .listStyleType, "list-style-position": .listStylePosition, "widows": .widows,
        "orphans": .orphans, "visibility": .visibility, "quotes": .quotes,
        "overflow-x": .overflow, "overflow-y": .overflow,
        "word-break": .wordBreak, "-epub-word-break": .wordBreak, "-webkit-word-break": .wordBreak,
        "overflow-wrap": .overflowWrap, "word-wrap": .overflowWrap, "line-break": .lineBreak,
        "-epub-line-break": .lineBreak, "-webkit-line-break": .lineBreak, "text-orientation": .textOrientation,
        "-epub-text-orientation": .textOrientation, "-webkit-text-orientation": .textOrientation,
        "text-combine-upright": .textCombineUpright, "-webkit-text-combine-upright": .textCombineUpright,
        "-epub-text-combine": .textCombineUpright, "-webkit-text-combine": .textCombineUpright,
        "-ms-text-combine-horizontal": .textCombineUpright, "-epub-text-combine-horizontal": .textCombineUpright,
        "text-combine-horizontal": .textCombineUpright,
        "text-emphasis-style": .textEmphasisStyle, "-epub-text-emphasis-style": .textEmphasisStyle,
        "-webkit-text-emphasis-style": .textEmphasisStyle, "text-emphasis-color": .textEmphasisColor,
        "-epub-text-emphasis-color": .textEmphasisColor, "-webkit-text-emphasis-color": .textEmphasisColor,
        "text-underline-position": .textUnderlinePosition, "-epub-text-underline-position": .textUnderlinePosition,
        "-webkit-text-underline-position": .textUnderlinePosition,
        "text-emphasis-position": .textEmphasisPosition, "-epub-text-emphasis-position": .textEmphasisPosition,
        "-webkit-text-emphasis-position": .textEmphasisPosition,
        "hanging-punctuation": .hangingPunctuation,
        // Logical properties, for horizontal left-to-right text.
        "margin-block-start": .marginTop, "margin-block-end": .marginBottom, "margin-inline-start": .marginLeft,
        "margin-inline-end": .marginRight, "padding-block-start": .paddingTop, "padding-block-end": .paddingBottom,
        "padding-inline-start": .paddingLeft, "padding-inline-end": .paddingRight,
        "inline-size": .width, "block-size": .height, "max-inline-size": .maxWidth, "max-block-size": .maxHeight,
        "min-inline-size": .minWidth, "min-block-size": .minHeight, "border-collapse": .borderCollapse,
        // Multi-column layout; EPUB 3 reads oeb-column-number as column-count.
        "column-count": .columnCount, "-webkit-column-count": .columnCount, "-moz-column-count": .columnCount,
        "-epub-column-count": .columnCount, "oeb-column-number": .columnCount,
        "column-width": .columnWidth, "-webkit-column-width": .columnWidth, "-moz-column-width": .columnWidth,
        "column-gap": .columnGap, "-webkit-column-gap": .columnGap, "-moz-column-gap": .columnGap,
        "column-fill": .columnFill, "-webkit-column-fill": .columnFill, "-moz-column-fill": .columnFill,
        "column-rule-width": .columnRuleWidth, "-webkit-column-rule-width": .columnRuleWidth,
        "column-rule-style": .columnRuleStyle, "-webkit-column-rule-style": .columnRuleStyle,
        "column-rule-color": .columnRuleColor, "-webkit-column-rule-color": .columnRuleColor,
    ]

    static let shorthandNames: Set<String> = [
        "margin", "padding", "border", "border-top", "border-right", "border-bottom", "border-left", "border-width",
        "border-style", "border-color", "list-style", "background", "text-decoration", "-webkit-text-decoration",
        "font", "font-variant", "page-break-before", "page-break-after", "page-break-inside", "overflow",
        "adobe-hyphenate", "border-spacing", "text-emphasis", "-epub-text-emphasis", "-webkit-text-emphasis", "margin-block", "margin-inline", "padding-block", "padding-inline", "inset", "inset-block", "inset-inline",
        "border-radius", "-webkit-border-radius",
        "columns", "-webkit-columns", "-moz-columns", "column-rule", "-webkit-column-rule", "-moz-column-rule",
    ]

    /// Longhands a shorthand sets (for var() in shorthands and for `all`-style resets).
    static func longhands(of shorthand: String) -> [PropertyID] {
        switch shorthand {
        case "margin": return [.marginTop, .marginRight, .marginBottom, .marginLeft]
        case "padding": return [.paddingTop, .paddingRight, .paddingBottom, .paddingLeft]
        case "margin-block": return [.marginTop, .marginBottom]
        case "margin-inline": return [.marginLeft, .marginRight]
        case "padding-block": return [.paddingTop, .paddingBottom]
        case "padding-inline": return [.paddingLeft, .paddingRight]
        case "inset": return [.top, .right, .bottom, .left]
        case "inset-block": return [.top, .bottom]
        case "inset-inline": return [.left, .right]
        case "border-spacing": return [.borderSpacingHorizontal, .borderSpacingVertical]
        case "border-width": return [.borderTopWidth, .borderRightWidth, .borderBottomWidth, .borderLeftWidth]
        case "border-style": return [.borderTopStyle, .borderRightStyle, .borderBottomStyle, .borderLeftStyle]
        case "border-color": return [.borderTopColor, .borderRightColor, .borderBottomColor, .borderLeftColor]
        case "border": return longhands(of: "border-width") + longhands(of: "border-style") + longhands(of: "border-color")
        case "border-top": return [.borderTopWidth, .borderTopStyle, .borderTopColor]
        case "columns", "-webkit-columns", "-moz-columns": return [.columnWidth, .columnCount]
        case "column-rule", "-webkit-column-rule", "-moz-column-rule": return [.columnRuleWidth, .columnRuleStyle, .columnRuleColor]
        case "border-right": return [.borderRightWidth, .borderRightStyle, .borderRightColor]
        case "border-bottom": return [.borderBottomWidth, .borderBottomStyle, .borderBottomColor]
        case "border-left": return [.borderLeftWidth, .borderLeftStyle, .borderLeftColor]
        case "list-style": return [.listStyleType, .listStylePosition]
        case "background": return [.backgroundColor, .backgroundImage, .backgroundRepeat, .backgroundPosition, .backgroundSize]
        case "border-radius", "-webkit-border-radius":
            return [.borderTopLeftRadius, .borderTopRightRadius, .borderBottomRightRadius, .borderBottomLeftRadius]
        case "text-decoration", "-webkit-text-decoration": return [.textDecorationLine]
        case "font":
            return [.fontStyle, .fontVariantCaps, .fontWeight, .fontSize, .lineHeight, .fontFamily, .fontVariantNumeric,
                .fontVariantLigatures, .fontVariantPosition]
        case "font-variant": return [.fontVariantCaps, .fontVariantNumeric, .fontVariantLigatures, .fontVariantPosition]
        case "page-break-before": return [.breakBefore]
        case "page-break-after": return [.breakAfter]
        case "page-break-inside": return [.breakInside]
        case "overflow": return [.overflow]
        case "text-emphasis", "-epub-text-emphasis", "-webkit-text-emphasis": return [.textEmphasisStyle, .textEmphasisColor]
        case "adobe-hyphenate": return [.hyphens]
        default: return longhandNames[shorthand].map { [$0] } ?? []
        }
    }

    /// Standard properties we parse but do not apply (so reports call them unsupported, not invalid).
    static let knownUnsupported: Set<String> = [
        "align-content", "align-self", "all", "animation", "animation-delay", "animation-direction",
        "animation-duration", "animation-fill-mode", "animation-iteration-count", "animation-name",
        "animation-play-state", "animation-timing-function", "appearance", "aspect-ratio", "backface-visibility",
        "background-attachment", "background-blend-mode", "background-clip",
        "background-origin", "background-position-x", "background-position-y", "block-size", "border-image",
        "border-image-outset", "border-image-repeat", "border-image-slice", "border-image-source",
        "border-image-width", "box-decoration-break", "caption-side", "caret-color", "clip", "clip-path", "color-scheme", "column-span", "contain", "counter-style", "cursor", "empty-cells", "filter", "flex", "flex-basis",
        "flex-flow", "flex-grow", "flex-shrink", "flex-wrap", "font-kerning", "font-language-override",
        "font-optical-sizing", "font-size-adjust", "font-stretch", "font-synthesis", "font-variant-alternates",
        "font-variant-east-asian", "font-variation-settings", "gap", "grid", "grid-area", "grid-auto-columns",
        "grid-auto-flow", "grid-auto-rows", "grid-column", "grid-column-end", "grid-column-gap", "grid-column-start",
        "grid-gap", "grid-row", "grid-row-end", "grid-row-gap", "grid-row-start", "grid-template",
        "grid-template-areas", "grid-template-columns", "grid-template-rows",
        "hyphenate-character", "hyphenate-limit-chars", "hyphenate-limit-lines", "hyphenate-limit-zone",
        "image-orientation", "image-rendering", "image-resolution", "initial-letter", "isolation",
        "justify-items", "justify-self", "line-break", "line-clamp", "list-style-image",
        "margin-trim", "mask", "mix-blend-mode", "object-position", "order", "outline",
        "outline-color", "outline-offset", "outline-style", "outline-width", "overflow-wrap", "page",
        "pointer-events", "print-color-adjust", "resize", "rotate", "row-gap", "ruby-align", "ruby-position",
        "scale", "scroll-behavior", "shape-image-threshold", "shape-margin", "shape-outside", "speak", "speak-as",
        "tab-size", "table-layout", "text-combine-upright", "text-decoration-color", "text-decoration-skip",
        "text-decoration-skip-ink", "text-decoration-style", "text-decoration-thickness", "text-emphasis",
        "text-emphasis-color", "text-emphasis-style", "text-justify", "text-orientation",
        "text-overflow", "text-rendering", "text-shadow", "text-size-adjust", "text-underline-offset",
        "text-wrap", "touch-action", "transform", "transform-origin", "transform-style",
        "transition", "transition-delay", "transition-duration", "transition-property", "transition-timing-function",
        "translate", "user-select", "vertical-align", "will-change", "word-break", "word-wrap", "zoom",
        "size", "marks", "bleed", "src", "font-display", "unicode-range", "orientation", "fill", "stroke",
        "stroke-width", "font-smooth", "interpolation-mode", "prince-hyphenate-before", "mso-pagination",
        "text-align-all", "border-block", "border-inline", "border-block-start", "border-block-end",
        "border-inline-start", "border-inline-end", "hyphenate-limit-last", "widows-orphans", "float-reference",
        "fill-rule", "fill-opacity", "stroke-opacity", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit",
        "stroke-dasharray", "stroke-dashoffset", "text-spacing", "text-spacing-trim", "text-autospace", "clip-rule",
        "stop-color", "stop-opacity", "text-anchor", "dominant-baseline", "alignment-baseline", "baseline-shift",
        "shape-rendering", "paint-order", "vector-effect", "marker", "mask-type", "flood-color", "lighting-color",
        "string-set", "bookmark-level", "bookmark-label", "prince-bookmark-level",
    ]

    /// Classification of a property name for the report.
    static func isSupported(_ name: String) -> Bool {
        longhandNames[name] != nil || shorthandNames.contains(name) || name.hasPrefix("--")
    }

    static func isKnownUnsupported(_ name: String) -> Bool {
        knownUnsupported.contains(name) || name.hasPrefix("-") || name.hasPrefix("mso-")
    }

    /// Parses one declaration into longhands. `.applied` with declarations, or why not.
    static func compile(_ raw: RawDeclaration) -> (DeclarationStatus, [Decl], CustomDecl?) {
        let name = raw.name
        if name.hasPrefix("--") {
            return (.applied, [], CustomDecl(name: name, value: raw.value, important: raw.important))
        }
        guard isSupported(name) else {
            return (isKnownUnsupported(name) ? .unsupported : .invalid, [], nil)
        }
        let values = raw.value.significant
        guard !values.isEmpty else { return (.invalid, [], nil) }
        if values.count == 1, let keyword = values[0].lowerIdent {
            let wide: CSSWide?
            switch keyword {
            case "inherit": wide = .inherit
            case "initial": wide = .initial
            case "unset", "revert", "revert-layer": wide = .unset
            default: wide = nil
            }
            if let wide {
                return (.applied, longhands(of: name).map { Decl(property: $0, value: .wide(wide), important: raw.important) }, nil)
            }
        }
        if raw.value.containsVar {
            return (.applied, longhands(of: name).map {
                Decl(property: $0, value: .pending(source: name, raw.value), important: raw.important)
            }, nil)
        }
        guard let pairs = parse(name, values) else { return (.invalid, [], nil) }
        // Valid but not honoured by layout or paint: unsupported (for css-report and @supports),
        // though the cascade still carries the value.
        let status: DeclarationStatus = pairs.allSatisfy { honoured($0.0, $0.1) } ? .applied : .unsupported
        return (status, pairs.map { Decl(property: $0.0, value: .value($0.1), important: raw.important) }, nil)
    }

    /// Whether layout and paint act on a longhand's value. Values that change nothing in Quire
    /// are unsupported, so that css-report counts what the pages show, and `@supports` lets a
    /// book's fallback apply. (Judged per declaration: what a value does on one element and not
    /// another, such as a background on an inline element, is not told apart.)
    static func honoured(_ property: PropertyID, _ value: SpecifiedValue) -> Bool {
        let word: String? = { if case .keyword(let word) = value { return word } else { return nil } }()
        switch property {
        case .writingMode: return ["horizontal-tb", "vertical-rl", "vertical-lr"].contains(word ?? "")  // sideways-* are not
        case .textOrientation: return true
        case .textUnderlinePosition: return true
        case .textEmphasisPosition: return true
        case .hangingPunctuation: return !(word ?? "").split(separator: " ").contains { $0 == "first" || $0 == "last" }  // stops and commas hang, brackets do not
        case .textCombineUpright: return word == "none" || word == "all"
        case .unicodeBidi: return word == "normal"  // embeddings and isolates come from direction alone
        case .objectFit: return word == "fill"
        case .overflow: return word == "visible"  // no clipping
        case .position: return word != "sticky"  // sticky only matters when scrolling
        case .display: return !["grid", "inline-grid"].contains(word ?? "")
        case .backgroundImage: return word != "url"  // gradients and image URLs are drawn, not a mix of them
        default: return true
        }
    }

    /// Parses a property (longhand or shorthand) into longhand values; nil when invalid.
    static func parse(_ name: String, _ values: [CV]) -> [(PropertyID, SpecifiedValue)]? {
        if let id = longhandNames[name] {
            return parseLonghand(id, values).map { [(id, $0)] }
        }
        return parseShorthand(name, values)
    }

    // MARK: Value grammars

    static func length(_ v: CV, negative: Bool = true, percent: Bool = true, unitless: Bool = false) -> SpecifiedLength? {
        switch v {
        case .token(.number(let n, _)):
            if n == 0 { return .zero }
            if unitless && (negative || n >= 0) { return .dimension(n, .px) }
            return nil
        case .token(.dimension(let n, let unitName)):
            guard let unit = Unit.parse(unitName), negative || n >= 0 else { return nil }
            return .dimension(n, unit)
        case .token(.percentage(let p)):
            guard percent, negative || p >= 0 else { return nil }
            return .dimension(p, .percent)
        case .function(let fname, let args):
            guard let node = CalcParser.parse(function: fname, args) else { return nil }
            if !percent, node.containsPercent { return nil }
            return .calc(node)
        default:
            return nil
        }
    }

    static func keyword(_ values: [CV], _ allowed: Set<String>) -> SpecifiedValue? {
        guard values.count == 1, let word = values[0].lowerIdent, allowed.contains(word) else { return nil }
        return .keyword(word)
    }

    static let displayKeywords: Set<String> = [
        "block", "inline", "inline-block", "list-item", "none", "table", "inline-table", "table-row", "table-cell",
        "table-row-group", "table-header-group", "table-footer-group", "table-caption", "table-column",
        "table-column-group", "flex", "inline-flex", "grid", "inline-grid", "contents", "flow-root", "run-in",
        "ruby", "ruby-base", "ruby-text", "ruby-base-container", "ruby-text-container", "-webkit-box",
        "-webkit-flex", "-webkit-inline-box", "-ms-flexbox", "flow", "inline-list-item", "math",
    ]
    static let borderStyles: Set<String> = [
        "none", "hidden", "solid", "dashed", "dotted", "double", "groove", "ridge", "inset", "outset",
    ]
    static let fontSizeKeywords: [String: Double] = [
        "xx-small": 9, "x-small": 10, "small": 13, "medium": 16, "large": 18, "x-large": 24, "xx-large": 32,
        "xxx-large": 48,
    ]
    static let genericFamilies: Set<String> = [
        "serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "ui-serif", "ui-sans-serif",
        "ui-monospace", "ui-rounded", "math", "emoji", "fangsong",
    ]

    /// The URL of `url(…)` (a token or the function with a string).
    static func imageURL(_ v: CV) -> String? {
        if case .token(.url(let url)) = v { return url }
        if case .function(let name, let args) = v, name.lowercased() == "url", case .token(.string(let url))? = args.significant.first { return url }
        return nil
    }

    /// A comma-separated list with one value per background layer; nil if any layer is invalid.
    static func layerList<T>(_ values: [CV], _ parse: ([CV]) -> T?) -> [T]? {
        var parsed: [T] = []
        for layer in values.splitCommas() {
            guard let value = parse(layer) else { return nil }
            parsed.append(value)
        }
        return parsed.isEmpty ? nil : parsed
    }

    static func backgroundRepeat(_ values: [CV]) -> BackgroundRepeat? {
        let words = values.compactMap(\.lowerIdent)
        guard words.count == values.count else { return nil }
        func mode(_ word: String) -> BackgroundRepeat.Mode? { BackgroundRepeat.Mode(rawValue: word) }
        switch words.count {
        case 1:
            if words[0] == "repeat-x" { return BackgroundRepeat(x: .repeat, y: .noRepeat) }
            if words[0] == "repeat-y" { return BackgroundRepeat(x: .noRepeat, y: .repeat) }
            return mode(words[0]).map { BackgroundRepeat(x: $0, y: $0) }
        case 2:
            guard let x = mode(words[0]), let y = mode(words[1]) else { return nil }
            return BackgroundRepeat(x: x, y: y)
        default: return nil
        }
    }

    /// `background-position`: one to four values (keywords, lengths, percentages, and offsets
    /// after a side keyword), as CSS Backgrounds 3 section 3.6 allows.
    static func backgroundPosition(_ values: [CV]) -> SpecifiedBackgroundPosition? {
        enum Part { case keyword(String), length(SpecifiedLength) }
        var parts: [Part] = []
        for v in values {
            if let word = v.lowerIdent, ["left", "right", "top", "bottom", "center"].contains(word) {
                parts.append(.keyword(word))
            } else if let l = length(v) {
                parts.append(.length(l))
            } else {
                return nil
            }
        }
        let half = SpecifiedLength.dimension(50, .percent)
        func horizontal(_ word: String) -> Bool? { word == "left" || word == "right" ? true : word == "top" || word == "bottom" ? false : nil }
        func axis(_ word: String) -> (SpecifiedLength, Bool) { word == "center" ? (half, false) : (.zero, word == "right" || word == "bottom") }
        switch parts.count {
        case 1:
            switch parts[0] {
            case .length(let l): return SpecifiedBackgroundPosition(x: l, xFromEnd: false, y: half, yFromEnd: false)
            case .keyword(let word):
                let (offset, fromEnd) = axis(word)
                if horizontal(word) == false { return SpecifiedBackgroundPosition(x: half, xFromEnd: false, y: offset, yFromEnd: fromEnd) }
                return SpecifiedBackgroundPosition(x: offset, xFromEnd: fromEnd, y: half, yFromEnd: false)
            }
        case 2:
            var x: (SpecifiedLength, Bool)? = nil, y: (SpecifiedLength, Bool)? = nil
            switch (parts[0], parts[1]) {
            case (.length(let a), .length(let b)): return SpecifiedBackgroundPosition(x: a, xFromEnd: false, y: b, yFromEnd: false)
            case (.length(let a), .keyword(let word)):
                guard horizontal(word) != true else { return nil }
                x = (a, false)
                y = axis(word)
            case (.keyword(let word), .length(let b)):
                guard horizontal(word) != false else { return nil }
                x = axis(word)
                y = (b, false)
            case (.keyword(let first), .keyword(let second)):
                // Either order: `top left` is `left top`.
                if horizontal(first) == false || horizontal(second) == true {
                    guard horizontal(first) != true, horizontal(second) != false else { return nil }
                    (x, y) = (axis(second), axis(first))
                } else {
                    (x, y) = (axis(first), axis(second))
                }
            }
            guard let x, let y else { return nil }
            return SpecifiedBackgroundPosition(x: x.0, xFromEnd: x.1, y: y.0, yFromEnd: y.1)
        case 3, 4:
            // Side keywords each followed by an optional offset: `right 10px bottom`, `left 5% top 2em`.
            var x: (SpecifiedLength, Bool)? = nil, y: (SpecifiedLength, Bool)? = nil
            var index = 0
            while index < parts.count {
                guard case .keyword(let word) = parts[index] else { return nil }
                var value = axis(word)
                if index + 1 < parts.count, case .length(let offset) = parts[index + 1] {
                    guard word != "center" else { return nil }
                    value.0 = offset
                    index += 1
                }
                index += 1
                if horizontal(word) == true || (word == "center" && x == nil && y != nil) || (word == "center" && x == nil && index < parts.count) {
                    guard x == nil else { return nil }
                    x = value
                } else {
                    guard y == nil else { return nil }
                    y = value
                }
            }
            guard let x, let y else { return nil }
            return SpecifiedBackgroundPosition(x: x.0, xFromEnd: x.1, y: y.0, yFromEnd: y.1)
        default: return nil
        }
    }

    static func backgroundSize(_ values: [CV]) -> SpecifiedBackgroundSize? {
        if values.count == 1, let word = values[0].lowerIdent {
            switch word {
            case "contain": return .contain
            case "cover": return .cover
            case "auto": return .lengths(nil, nil)
            default: return nil
            }
        }
        guard (1...2).contains(values.count) else { return nil }
        var lengths: [SpecifiedLength?] = []
        for v in values {
            if v.lowerIdent == "auto" {
                lengths.append(nil)
            } else if let l = length(v, negative: false) {
                lengths.append(l)
            } else {
                return nil
            }
        }
        return .lengths(lengths[0], lengths.count == 2 ? lengths[1] : nil)
    }

    /// One `box-shadow` layer: two to four lengths (blur never negative), a colour and `inset`,
    /// the lengths together, the others before or after them.
    static func shadow(_ values: [CV]) -> ShadowValue? {
        var lengths: [SpecifiedLength] = []
        var colour: Color?? = nil
        var inset = false
        var lengthsDone = false
        for v in values {
            if v.lowerIdent == "inset", !inset {
                inset = true
                if !lengths.isEmpty { lengthsDone = true }
            } else if colour == nil, case .color(let c)? = color(v) {
                colour = .some(c)
                if !lengths.isEmpty { lengthsDone = true }
            } else if !lengthsDone, lengths.count < 4, let l = length(v, percent: false) {
                lengths.append(l)
            } else {
                return nil
            }
        }
        guard lengths.count >= 2 else { return nil }
        if lengths.count > 2, case .dimension(let blur, _) = lengths[2], blur < 0 { return nil }
        return ShadowValue(
            x: lengths[0], y: lengths[1], blur: lengths.count > 2 ? lengths[2] : .zero, spread: lengths.count > 3 ? lengths[3] : .zero,
            color: colour ?? nil, inset: inset)
    }

    static func borderWidth(_ v: CV) -> SpecifiedValue? {
        if let word = v.lowerIdent {
            switch word {
            case "thin": return .length(.dimension(1, .px))
            case "medium": return .length(.dimension(3, .px))
            case "thick": return .length(.dimension(5, .px))
            default: return nil
            }
        }
        return length(v, negative: false, percent: false).map { .length($0) }
    }

    static func color(_ v: CV) -> SpecifiedValue? {
        ColorParser.parse(v).map { .color($0) }
    }

    static func listStyleType(_ v: CV) -> ListStyleType? {
        if case .token(.string(let s)) = v { return .string(s) }
        guard let word = v.lowerIdent else { return nil }
        switch word {
        case "none": return ListStyleType.none
        case "disc": return .disc
        case "circle": return .circle
        case "square": return .square
        case "decimal": return .decimal
        case "decimal-leading-zero": return .decimalLeadingZero
        case "lower-roman": return .lowerRoman
        case "upper-roman": return .upperRoman
        case "lower-alpha", "lower-latin": return .lowerAlpha
        case "upper-alpha", "upper-latin": return .upperAlpha
        case "lower-greek": return .lowerGreek
        case "cjk-decimal": return .cjkDecimal
        case "inherit", "initial", "unset", "inside", "outside", "default": return nil
        default: return .decimal  // unknown counter styles fall back to decimal, as CSS says
        }
    }

    static func families(_ values: [CV]) -> [String]? {
        var result: [String] = []
        for part in values.splitCommas() {
            let items = part.filter { !$0.isWhitespace }
            if items.count == 1, case .token(.string(let s)) = items[0] {
                result.append(s)
                continue
            }
            var words: [String] = []
            for item in items {
                guard let word = item.ident else { return nil }
                words.append(word)
            }
            guard !words.isEmpty else { return nil }
            if words.count == 1, genericFamilies.contains(words[0].lowercased()) {
                result.append(words[0].lowercased())
            } else {
                if words.count == 1, ["inherit", "initial", "unset", "default"].contains(words[0].lowercased()) { return nil }
                result.append(words.joined(separator: " "))
            }
        }
        return result.isEmpty ? nil : result
    }

    static func numericFeatures(_ values: [CV]) -> [FontFeature]? {
        if values.count == 1, values[0].lowerIdent == "normal" { return [] }
        var result: [FontFeature] = []
        for v in values {
            guard let word = v.lowerIdent else { return nil }
            let tag: String
            switch word {
            case "lining-nums": tag = "lnum"
            case "oldstyle-nums": tag = "onum"
            case "proportional-nums": tag = "pnum"
            case "tabular-nums": tag = "tnum"
            case "diagonal-fractions": tag = "frac"
            case "stacked-fractions": tag = "afrc"
            case "ordinal": tag = "ordn"
            case "slashed-zero": tag = "zero"
            default: return nil
            }
            result.append(FontFeature(tag))
        }
        return result
    }

    static func ligatureFeatures(_ values: [CV]) -> [FontFeature]? {
        if values.count == 1, values[0].lowerIdent == "normal" { return [] }
        if values.count == 1, values[0].lowerIdent == "none" {
            return ["liga", "clig", "dlig", "hlig", "calt"].map { FontFeature($0, 0) }
        }
        var result: [FontFeature] = []
        for v in values {
            switch v.lowerIdent {
            case "common-ligatures": result += [FontFeature("liga"), FontFeature("clig")]
            case "no-common-ligatures": result += [FontFeature("liga", 0), FontFeature("clig", 0)]
            case "discretionary-ligatures": result.append(FontFeature("dlig"))
            case "no-discretionary-ligatures": result.append(FontFeature("dlig", 0))
            case "historical-ligatures": result.append(FontFeature("hlig"))
            case "no-historical-ligatures": result.append(FontFeature("hlig", 0))
            case "contextual": result.append(FontFeature("calt"))
            case "no-contextual": result.append(FontFeature("calt", 0))
            default: return nil
            }
        }
        return result
    }

    static func featureSettings(_ values: [CV]) -> [FontFeature]? {
        if values.count == 1, values[0].lowerIdent == "normal" { return [] }
        var result: [FontFeature] = []
        for part in values.splitCommas() {
            let items = part.filter { !$0.isWhitespace }
            guard let first = items.first, case .token(.string(let tag)) = first, tag.unicodeScalars.count == 4,
                tag.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value <= 0x7E })
            else { return nil }
            var value: UInt32 = 1
            if items.count == 2 {
                switch items[1] {
                case .token(.number(let n, true)) where n >= 0: value = UInt32(min(n, 65535))
                case .token(.ident(let s)) where s.lowercased() == "on": value = 1
                case .token(.ident(let s)) where s.lowercased() == "off": value = 0
                default: return nil
                }
            } else if items.count > 2 {
                return nil
            }
            result.append(FontFeature(tag, value))
        }
        return result
    }

    static func content(_ values: [CV]) -> SpecifiedValue? {
        if values.count == 1, let word = values[0].lowerIdent, word == "normal" || word == "none" {
            return .keyword(word)
        }
        var items: [ContentItem] = []
        var sawSlash = false
        for v in values {
            if sawSlash { continue }  // alternative text after `/`
            switch v {
            case .token(.string(let s)): items.append(.string(s))
            case .token(.url), .function("image", _), .function("url", _): continue
            case .token(.delim("/")): sawSlash = true
            case .token(.ident(let word)):
                switch word.lowercased() {
                case "open-quote": items.append(.openQuote)
                case "close-quote": items.append(.closeQuote)
                case "no-open-quote": items.append(.noOpenQuote)
                case "no-close-quote": items.append(.noCloseQuote)
                default: return nil
                }
            case .function(let fname, let args):
                let parts = args.splitCommas().map { $0.significant }
                switch fname.lowercased() {
                case "attr":
                    guard let first = parts.first, let name = first.first?.ident else { return nil }
                    items.append(.attr(name))
                case "counter":
                    guard parts.count >= 1, parts.count <= 2, parts[0].count == 1, let name = parts[0][0].ident else { return nil }
                    var style = ListStyleType.decimal
                    if parts.count == 2 {
                        guard parts[1].count == 1, let s = listStyleType(parts[1][0]) else { return nil }
                        style = s
                    }
                    items.append(.counter(name, style))
                case "counters":
                    guard parts.count >= 2, parts.count <= 3, parts[0].count == 1, let name = parts[0][0].ident,
                        parts[1].count == 1, case .token(.string(let separator)) = parts[1][0]
                    else { return nil }
                    var style = ListStyleType.decimal
                    if parts.count == 3 {
                        guard parts[2].count == 1, let s = listStyleType(parts[2][0]) else { return nil }
                        style = s
                    }
                    items.append(.counters(name, separator, style))
                case "leader", "target-counter", "target-counters", "target-text", "string", "element", "content",
                    "linear-gradient", "radial-gradient":
                    continue
                default: return nil
                }
            default: return nil
            }
        }
        return .content(items)
    }

    static func counterOps(_ values: [CV], defaultValue: Int) -> SpecifiedValue? {
        if values.count == 1, values[0].lowerIdent == "none" { return .counters([]) }
        var ops: [CounterOp] = []
        var i = 0
        while i < values.count {
            guard let name = values[i].ident, !["none", "inherit", "initial", "unset"].contains(name.lowercased()) else {
                return nil
            }
            var value = defaultValue
            if i + 1 < values.count, case .token(.number(let n, true)) = values[i + 1] {
                value = Int(max(-1e9, min(1e9, n)))
                i += 1
            }
            ops.append(CounterOp(name: name, value: value))
            i += 1
        }
        return ops.isEmpty ? nil : .counters(ops)
    }

    static func parseLonghand(_ id: PropertyID, _ values: [CV]) -> SpecifiedValue? {
        let single = values.count == 1 ? values[0] : nil
        switch id {
        case .display:
            if values.count == 2, let a = values[0].lowerIdent, let b = values[1].lowerIdent {
                // Two-value syntax: outer + inner.
                if b == "flow" || b == "flow-root" { return .keyword(a == "inline" ? "inline" : "block") }
                if a == "block" || a == "inline" { return .keyword(a == "inline" ? "inline-" + b : b) }
                if a == "list-item" || b == "list-item" { return .keyword("list-item") }
                return nil
            }
            return keyword(values, displayKeywords)
        case .marginTop, .marginRight, .marginBottom, .marginLeft, .top, .right, .bottom, .left:
            guard let v = single else { return nil }
            if v.lowerIdent == "auto" { return .keyword("auto") }
            return length(v).map { .length($0) }
        case .paddingTop, .paddingRight, .paddingBottom, .paddingLeft:
            return single.flatMap { length($0, negative: false) }.map { .length($0) }
        case .borderTopWidth, .borderRightWidth, .borderBottomWidth, .borderLeftWidth, .columnRuleWidth:
            return single.flatMap(borderWidth)
        case .columnCount:
            if single?.lowerIdent == "auto" { return .keyword("auto") }
            if case .token(.number(let n, true))? = single, n >= 1 { return .integer(Int(min(n, 1000))) }
            return nil
        case .columnWidth, .columnGap:
            guard let v = single else { return nil }
            if v.lowerIdent == (id == .columnWidth ? "auto" : "normal") { return .keyword(v.lowerIdent!) }
            return length(v, negative: false, percent: id == .columnGap).map { .length($0) }
        case .columnFill:
            return keyword(values, ["balance", "balance-all", "auto"])
        case .columnRuleStyle:
            return keyword(values, borderStyles)
        case .columnRuleColor:
            return single.flatMap(color)
        case .borderTopStyle, .borderRightStyle, .borderBottomStyle, .borderLeftStyle:
            return keyword(values, borderStyles)
        case .borderTopColor, .borderRightColor, .borderBottomColor, .borderLeftColor, .backgroundColor, .color:
            return single.flatMap(color)
        case .width, .height:
            guard let v = single else { return nil }
            if let word = v.lowerIdent {
                return ["auto", "min-content", "max-content", "fit-content", "-webkit-fill-available", "-moz-available",
                    "stretch", "-webkit-fit-content", "-moz-fit-content"].contains(word) ? .keyword("auto") : nil
            }
            if case .function(let f, _) = v, f.lowercased() == "fit-content" { return .keyword("auto") }
            return length(v, negative: false).map { .length($0) }
        case .minWidth, .minHeight:
            guard let v = single else { return nil }
            if let word = v.lowerIdent {
                return ["auto", "min-content", "max-content", "fit-content"].contains(word) ? .keyword("auto") : nil
            }
            return length(v, negative: false).map { .length($0) }
        case .maxWidth, .maxHeight:
            guard let v = single else { return nil }
            if let word = v.lowerIdent {
                return ["none", "min-content", "max-content", "fit-content", "-webkit-fill-available"].contains(word)
                    ? .keyword("none") : nil
            }
            return length(v, negative: false).map { .length($0) }
        case .float:
            if single?.lowerIdent == "inline-start" { return .keyword("left") }
            if single?.lowerIdent == "inline-end" { return .keyword("right") }
            return keyword(values, ["none", "left", "right", "footnote"]).map { $0 == .keyword("footnote") ? .keyword("none") : $0 }
        case .clear:
            if single?.lowerIdent == "inline-start" { return .keyword("left") }
            if single?.lowerIdent == "inline-end" { return .keyword("right") }
            return keyword(values, ["none", "left", "right", "both", "all"]).map { $0 == .keyword("all") ? .keyword("both") : $0 }
        case .position:
            if single?.lowerIdent == "-webkit-sticky" { return .keyword("sticky") }
            return keyword(values, ["static", "relative", "absolute", "fixed", "sticky"])
        case .zIndex:
            if single?.lowerIdent == "auto" { return .keyword("auto") }
            if case .token(.number(let n, true))? = single { return .integer(Int(max(-1_000_000, min(n, 1_000_000)))) }
            return nil
        case .breakBefore, .breakAfter:
            guard let word = single?.lowerIdent else { return nil }
            switch word {
            case "auto", "avoid", "always", "page", "left", "right", "recto", "verso", "column", "avoid-page":
                return .keyword(word)
            case "avoid-column", "avoid-region": return .keyword("avoid")
            case "region", "all": return .keyword("auto")
            default: return nil
            }
        case .breakInside:
            guard let word = single?.lowerIdent else { return nil }
            switch word {
            case "auto", "avoid", "avoid-page": return .keyword(word)
            case "avoid-column", "avoid-region": return .keyword("avoid")
            default: return nil
            }
        case .verticalAlign:
            guard let v = single else { return nil }
            if let word = v.lowerIdent {
                return ["baseline", "sub", "super", "top", "text-top", "middle", "bottom", "text-bottom"].contains(word)
                    ? .keyword(word) : nil
            }
            return length(v).map { .length($0) }
        case .textDecorationLine:
            if single?.lowerIdent == "none" { return .decoration(0) }
            var bits: UInt8 = 0
            for v in values {
                switch v.lowerIdent {
                case "underline": bits |= TextDecoration.underline.rawValue
                case "overline": bits |= TextDecoration.overline.rawValue
                case "line-through": bits |= TextDecoration.lineThrough.rawValue
                case "blink": break
                default: return nil
                }
            }
            return values.isEmpty ? nil : .decoration(bits)
        case .unicodeBidi:
            if single?.lowerIdent == "-webkit-isolate" { return .keyword("isolate") }
            if single?.lowerIdent == "-webkit-plaintext" { return .keyword("plaintext") }
            return keyword(values, ["normal", "embed", "isolate", "bidi-override", "isolate-override", "plaintext"])
        case .objectFit:
            return keyword(values, ["fill", "contain", "cover", "none", "scale-down"])
        case .overflow:
            return keyword(values, ["visible", "hidden", "scroll", "auto", "clip", "overlay"])
        case .boxSizing:
            return keyword(values, ["content-box", "border-box", "padding-box"])
        case .backgroundImage:
            // Layers of none, images and gradients are drawn; other image functions (image-set(),
            // the old -webkit-gradient()) are valid but not drawn.
            var layers: [BackgroundImage?] = []
            var drawn = true
            for layer in values.splitCommas() {
                guard layer.count == 1 else { return nil }
                let v = layer[0]
                if v.lowerIdent == "none" {
                    layers.append(nil)
                } else if let url = imageURL(v) {
                    layers.append(.url(url))
                } else if let gradient = GradientParser.parse(v) {
                    layers.append(.gradient(gradient))
                } else if case .function = v {
                    drawn = false
                } else {
                    return nil
                }
            }
            if !drawn { return .keyword("url") }
            return layers.allSatisfy({ $0 == nil }) ? .keyword("none") : .backgroundImages(layers)
        case .backgroundRepeat:
            return layerList(values, backgroundRepeat).map { .backgroundRepeats($0) }
        case .backgroundPosition:
            return layerList(values, backgroundPosition).map { .backgroundPositions($0) }
        case .backgroundSize:
            return layerList(values, backgroundSize).map { .backgroundSizes($0) }
        case .borderTopLeftRadius, .borderTopRightRadius, .borderBottomRightRadius, .borderBottomLeftRadius:
            // One radius for both directions, or horizontal then vertical; never negative.
            guard (1...2).contains(values.count) else { return nil }
            let radii = values.compactMap { length($0, negative: false) }
            guard radii.count == values.count else { return nil }
            return .radius(radii[0], radii.last!)
        case .boxShadow:
            if single?.lowerIdent == "none" { return .shadows([]) }
            var layers: [ShadowValue] = []
            for layer in values.splitCommas() {
                guard let shadow = shadow(layer) else { return nil }
                layers.append(shadow)
            }
            return layers.isEmpty ? nil : .shadows(layers)
        case .opacity:
            // A number or a percentage, clamped to 0…1.
            switch single {
            case .token(.number(let n, _))?: return .number(min(max(n, 0), 1))
            case .token(.percentage(let p))?: return .number(min(max(p / 100, 0), 1))
            default: return nil
            }
        case .flexDirection:
            return keyword(values, ["row", "row-reverse", "column", "column-reverse"])
        case .justifyContent, .alignItems:
            // Box alignment keywords, with the flex- forms and an overflow position (`safe center`).
            var words = values.compactMap(\.lowerIdent)
            guard words.count == values.count, !words.isEmpty else { return nil }
            if words.count == 2, ["safe", "unsafe"].contains(words[0]) { words.removeFirst() }
            guard words.count == 1 else { return nil }
            switch words[0] {
            case "flex-start", "start", "self-start", "left": return .keyword("start")
            case "flex-end", "end", "self-end", "right": return .keyword("end")
            case "normal", "center", "stretch", "baseline", "space-between", "space-around", "space-evenly": return .keyword(words[0])
            default: return nil
            }
        case .content:
            return content(values)
        case .counterReset, .counterSet:
            return counterOps(values, defaultValue: 0)
        case .counterIncrement:
            return counterOps(values, defaultValue: 1)
        case .fontFamily:
            return families(values).map { .families($0) }
        case .fontSize:
            guard let v = single else { return nil }
            if let word = v.lowerIdent {
                return fontSizeKeywords[word] != nil || word == "smaller" || word == "larger" || word == "math"
                    ? .keyword(word == "math" ? "medium" : word) : nil
            }
            return length(v, negative: false).map { .length($0) }
        case .fontWeight:
            guard let v = single else { return nil }
            if let word = v.lowerIdent {
                return ["normal", "bold", "bolder", "lighter"].contains(word) ? .keyword(word) : nil
            }
            if case .token(.number(let n, _)) = v, n >= 1, n <= 1000 { return .integer(Int(n)) }
            return nil
        case .fontStyle:
            guard let word = values.first?.lowerIdent, ["normal", "italic", "oblique"].contains(word) else { return nil }
            if values.count > 1 {
                guard word == "oblique", values.count == 2, case .token(.dimension) = values[1] else { return nil }
            }
            return .keyword(word)
        case .fontVariantCaps:
            guard let word = single?.lowerIdent else { return nil }
            switch word {
            case "normal", "small-caps", "all-small-caps": return .keyword(word)
            case "petite-caps": return .keyword("small-caps")
            case "all-petite-caps": return .keyword("all-small-caps")
            case "unicase", "titling-caps": return .keyword("normal")
            default: return nil
            }
        case .fontVariantNumeric:
            return numericFeatures(values).map { .features($0) }
        case .fontVariantLigatures:
            return ligatureFeatures(values).map { .features($0) }
        case .fontVariantPosition:
            switch single?.lowerIdent {
            case "normal": return .features([])
            case "sub": return .features([FontFeature("subs")])
            case "super": return .features([FontFeature("sups")])
            default: return nil
            }
        case .fontFeatureSettings:
            return featureSettings(values).map { .features($0) }
        case .lineHeight:
            guard let v = single else { return nil }
            if v.lowerIdent == "normal" { return .keyword("normal") }
            if case .token(.number(let n, _)) = v { return n >= 0 ? .number(n) : nil }
            return length(v, negative: false).map { .length($0) }
        case .textAlign:
            guard let word = single?.lowerIdent else { return nil }
            switch word {
            case "start", "end", "left", "right", "center", "justify": return .keyword(word)
            case "-webkit-center", "-moz-center", "-khtml-center": return .keyword("center")
            case "-webkit-left", "-moz-left": return .keyword("left")
            case "-webkit-right", "-moz-right": return .keyword("right")
            case "justify-all": return .keyword("justify")
            case "-internal-center": return .keyword(word)  // the UA's th: see Cascade
            case "match-parent", "-webkit-match-parent", "auto": return .keyword("start")
            default: return nil
            }
        case .textAlignLast:
            return keyword(values, ["auto", "start", "end", "left", "right", "center", "justify"])
        case .textIndent:
            guard let first = values.first, let l = length(first) else { return nil }
            for extra in values.dropFirst() where !["hanging", "each-line"].contains(extra.lowerIdent ?? "") { return nil }
            return .length(l)
        case .textTransform:
            guard let word = single?.lowerIdent else { return nil }
            if ["none", "uppercase", "lowercase", "capitalize", "full-width", "full-size-kana"].contains(word) { return .keyword(word) }
            return word == "-epub-fullwidth" ? .keyword("full-width") : nil
        case .letterSpacing, .wordSpacing:
            guard let v = single else { return nil }
            if v.lowerIdent == "normal" { return .length(.zero) }
            return length(v, percent: id == .wordSpacing).map { .length($0) }
        case .whiteSpace:
            if single?.lowerIdent == "-pre-wrap" || single?.lowerIdent == "-o-pre-wrap" || single?.lowerIdent == "-moz-pre-wrap" {
                return .keyword("pre-wrap")
            }
            return keyword(values, ["normal", "pre", "nowrap", "pre-wrap", "pre-line", "break-spaces"])
        case .hyphens:
            return keyword(values, ["none", "manual", "auto"])
        case .direction:
            return keyword(values, ["ltr", "rtl"])
        case .writingMode:
            guard let word = single?.lowerIdent else { return nil }
            switch word {
            case "horizontal-tb", "lr", "lr-tb", "rl", "rl-tb": return .keyword("horizontal-tb")
            case "vertical-rl", "tb", "tb-rl", "sideways-rl": return .keyword("vertical-rl")
            case "vertical-lr", "tb-lr", "sideways-lr": return .keyword("vertical-lr")
            default: return nil
            }
        case .listStyleType:
            return single.flatMap(listStyleType).map { .listStyle($0) }
        case .listStylePosition:
            return keyword(values, ["inside", "outside"])
        case .widows, .orphans:
            if case .token(.number(let n, true))? = single, n >= 1 { return .integer(Int(min(n, 1000))) }
            return nil
        case .visibility:
            return keyword(values, ["visible", "hidden", "collapse"])
        case .borderCollapse:
            return keyword(values, ["separate", "collapse"])
        case .borderSpacingHorizontal, .borderSpacingVertical:
            guard values.count == 1, let l = length(values[0], negative: false, percent: false) else { return nil }
            return .length(l)
        case .wordBreak:
            return keyword(values, ["normal", "break-all", "keep-all", "break-word", "auto-phrase"]).map {
                $0 == .keyword("auto-phrase") ? .keyword("normal") : $0
            }
        case .overflowWrap:
            return keyword(values, ["normal", "break-word", "anywhere"])
        case .lineBreak:
            return keyword(values, ["auto", "loose", "normal", "strict", "anywhere"])
        case .textOrientation:
            guard let word = single?.lowerIdent else { return nil }
            switch word {
            case "mixed", "vertical-right": return .keyword("mixed")
            case "upright": return .keyword("upright")
            case "sideways", "sideways-right", "sideways-left", "use-glyph-orientation": return .keyword("sideways")
            default: return nil
            }
        case .textCombineUpright:
            guard let word = values.first?.lowerIdent else { return nil }
            switch word {
            case "none": return values.count == 1 ? .keyword("none") : nil
            case "all", "horizontal": return values.count == 1 ? .keyword("all") : nil
            case "digits": return values.count <= 2 ? .keyword("all") : nil
            default: return nil
            }
        case .textEmphasisStyle:
            if case .token(.string(let s))? = single { return .keyword("'" + s) }
            if single?.lowerIdent == "none" { return .keyword("none") }
            var fill = "", shape = ""
            for v in values {
                guard let word = v.lowerIdent else { return nil }
                if (word == "filled" || word == "open") && fill.isEmpty {
                    fill = word
                } else if ["dot", "circle", "double-circle", "triangle", "sesame"].contains(word) && shape.isEmpty {
                    shape = word
                } else {
                    return nil
                }
            }
            return values.isEmpty || values.count > 2 ? nil : .keyword((fill.isEmpty ? "filled" : fill) + " " + shape)
        case .textEmphasisColor:
            return single.flatMap(color)
        case .textEmphasisPosition:
            // [over | under] && [right | left]?  (over or under: horizontal text; right or left: vertical)
            let words = values.compactMap(\.lowerIdent)
            guard words.count == values.count, (1...2).contains(words.count), Set(words).count == words.count else { return nil }
            let sides = words.filter { ["over", "under"].contains($0) }, columns = words.filter { ["right", "left"].contains($0) }
            guard sides.count == 1, sides.count + columns.count == words.count else { return nil }
            return .keyword(sides[0] + " " + (columns.first ?? "right"))
        case .hangingPunctuation:
            // none | [first || [force-end | allow-end] || last]
            let words = values.compactMap(\.lowerIdent)
            guard words.count == values.count, (1...3).contains(words.count), Set(words).count == words.count else { return nil }
            if words == ["none"] { return .keyword("none") }
            guard words.allSatisfy({ ["first", "force-end", "allow-end", "last"].contains($0) }),
                words.filter({ $0.hasSuffix("-end") }).count <= 1
            else { return nil }
            return .keyword(words.joined(separator: " "))
        case .textUnderlinePosition:
            // auto | from-font | [under || [left | right]]
            let words = values.compactMap(\.lowerIdent)
            guard words.count == values.count, (1...2).contains(words.count), Set(words).count == words.count else { return nil }
            if words.count == 1, ["auto", "from-font", "under", "left", "right"].contains(words[0]) { return .keyword(words[0]) }
            guard words.contains("under"), words.contains("left") || words.contains("right") else { return nil }
            return .keyword("under " + (words.contains("left") ? "left" : "right"))
        case .quotes:
            if let word = single?.lowerIdent, word == "none" || word == "auto" { return .keyword(word) }
            var strings: [String] = []
            for v in values {
                guard case .token(.string(let s)) = v else { return nil }
                strings.append(s)
            }
            return strings.isEmpty || strings.count % 2 != 0 ? nil : .quotes(strings)
        }
    }

    /// 1–4 values → top, right, bottom, left.
    static func boxEdges<T>(_ values: [CV], _ parse: (CV) -> T?) -> [T]? {
        guard (1...4).contains(values.count) else { return nil }
        var parsed: [T] = []
        for v in values {
            guard let p = parse(v) else { return nil }
            parsed.append(p)
        }
        switch parsed.count {
        case 1: return [parsed[0], parsed[0], parsed[0], parsed[0]]
        case 2: return [parsed[0], parsed[1], parsed[0], parsed[1]]
        case 3: return [parsed[0], parsed[1], parsed[2], parsed[1]]
        default: return parsed
        }
    }

    static func parseShorthand(_ name: String, _ values: [CV]) -> [(PropertyID, SpecifiedValue)]? {
        switch name {
        case "border-radius", "-webkit-border-radius":
            // Up to four horizontal radii, then optionally `/` and up to four vertical ones.
            let halves = values.split(whereSeparator: { if case .token(.delim("/")) = $0 { return true } else { return false } }).map(Array.init)
            guard (1...2).contains(halves.count), values.filter({ if case .token(.delim("/")) = $0 { return true } else { return false } }).count == halves.count - 1 else { return nil }
            guard let horizontal = boxEdges(halves[0], { length($0, negative: false) }) else { return nil }
            let vertical = halves.count == 2 ? boxEdges(halves[1], { length($0, negative: false) }) : horizontal
            guard let vertical else { return nil }
            return zip(longhands(of: name), zip(horizontal, vertical)).map { ($0, .radius($1.0, $1.1)) }
        case "border-spacing":
            // One length for both directions, or horizontal then vertical.
            guard (1...2).contains(values.count) else { return nil }
            let parsed = values.compactMap { parseLonghand(.borderSpacingHorizontal, [$0]) }
            guard parsed.count == values.count else { return nil }
            return [(.borderSpacingHorizontal, parsed[0]), (.borderSpacingVertical, parsed.last!)]
        case "margin", "padding", "inset", "margin-block", "margin-inline", "padding-block", "padding-inline", "inset-block", "inset-inline":
            let ids = longhands(of: name)
            let first = ids[0]
            if ids.count == 2 {
                guard (1...2).contains(values.count) else { return nil }
                let parsed = values.compactMap { parseLonghand(first, [$0]) }
                guard parsed.count == values.count else { return nil }
                return [(ids[0], parsed[0]), (ids[1], parsed.count == 2 ? parsed[1] : parsed[0])]
            }
            guard let edges = boxEdges(values, { parseLonghand(first, [$0]) }) else { return nil }
            return Array(zip(ids, edges))
        case "border-width":
            guard let edges = boxEdges(values, borderWidth) else { return nil }
            return Array(zip(longhands(of: name), edges))
        case "border-style":
            guard let edges = boxEdges(values, { keyword([$0], borderStyles) }) else { return nil }
            return Array(zip(longhands(of: name), edges))
        case "border-color":
            guard let edges = boxEdges(values, color) else { return nil }
            return Array(zip(longhands(of: name), edges))
        case "columns", "-webkit-columns", "-moz-columns":
            // A count is a bare integer, a width a length; `auto` fills whichever is left.
            guard (1...2).contains(values.count) else { return nil }
            var width: SpecifiedValue? = nil, count: SpecifiedValue? = nil
            for v in values {
                if v.lowerIdent == "auto" { continue }
                if count == nil, let c = parseLonghand(.columnCount, [v]) { count = c } else if width == nil, let w = parseLonghand(.columnWidth, [v]) { width = w } else { return nil }
            }
            return [(.columnWidth, width ?? .keyword("auto")), (.columnCount, count ?? .keyword("auto"))]
        case "border", "border-top", "border-right", "border-bottom", "border-left", "column-rule", "-webkit-column-rule", "-moz-column-rule":
            var width: SpecifiedValue? = nil, style: SpecifiedValue? = nil, colour: SpecifiedValue? = nil
            guard (1...3).contains(values.count) else { return nil }
            for v in values {
                if width == nil, let w = borderWidth(v) {
                    width = w
                } else if style == nil, let s = keyword([v], borderStyles) {
                    style = s
                } else if colour == nil, let c = color(v) {
                    colour = c
                } else {
                    return nil
                }
            }
            let w = width ?? .length(.dimension(3, .px)), s = style ?? .keyword("none"), c = colour ?? .color(nil)
            let ids = longhands(of: name)
            let sides = ids.count / 3
            var result: [(PropertyID, SpecifiedValue)] = []
            for k in 0..<sides {
                result.append((ids[k], w))
                result.append((ids[sides + k], s))
                result.append((ids[2 * sides + k], c))
            }
            if sides == 1 { return [(ids[0], w), (ids[1], s), (ids[2], c)] }
            return result
        case "list-style":
            var type: ListStyleType? = nil, position: SpecifiedValue? = nil
            var noneCount = 0
            for v in values {
                if v.lowerIdent == "none" {
                    noneCount += 1
                } else if position == nil, let p = keyword([v], ["inside", "outside"]) {
                    position = p
                } else if case .token(.url) = v {
                    continue
                } else if case .function(let f, _) = v, f.lowercased() == "url" {
                    continue
                } else if type == nil, let t = listStyleType(v) {
                    type = t
                } else {
                    return nil
                }
            }
            if noneCount > 2 || (noneCount > 0 && type != nil && noneCount > 1) { return nil }
            if type == nil && noneCount > 0 { type = ListStyleType.none }
            return [(.listStyleType, .listStyle(type ?? .disc)), (.listStylePosition, position ?? .keyword("outside"))]
        case "background":
            // Per layer: an image, a repeat, a position with an optional `/ size`, and boxes and
            // attachment (not drawn); the colour in the last layer only.
            var colour: SpecifiedValue? = nil
            var images: [CV] = []
            var repeats: [BackgroundRepeat] = []
            var positions: [SpecifiedBackgroundPosition] = []
            var sizes: [SpecifiedBackgroundSize] = []
            let layers = values.splitCommas()
            let repeatWords: Set<String> = ["repeat", "repeat-x", "repeat-y", "no-repeat", "space", "round"]
            let positionWords: Set<String> = ["left", "right", "top", "bottom", "center"]
            let ignoredWords: Set<String> = ["scroll", "fixed", "local", "border-box", "padding-box", "content-box", "text"]
            for (index, layer) in layers.enumerated() {
                var image: CV? = nil
                var repeatTokens: [CV] = [], positionTokens: [CV] = [], sizeTokens: [CV] = []
                var afterSlash = false
                for v in layer {
                    if case .token(.delim("/")) = v {
                        guard !positionTokens.isEmpty, !afterSlash else { return nil }
                        afterSlash = true
                    } else if afterSlash, sizeTokens.count < 2, v.lowerIdent.map({ ["auto", "cover", "contain"].contains($0) }) ?? (length(v, negative: false) != nil) {
                        sizeTokens.append(v)
                    } else if let word = v.lowerIdent, repeatWords.contains(word) {
                        repeatTokens.append(v)
                    } else if let word = v.lowerIdent, positionWords.contains(word) {
                        positionTokens.append(v)
                    } else if length(v) != nil {
                        positionTokens.append(v)
                    } else if let word = v.lowerIdent, ignoredWords.contains(word) {
                        continue
                    } else if image == nil, v.lowerIdent == "none" || imageURL(v) != nil || GradientParser.parse(v) != nil {
                        image = v
                    } else if index == layers.count - 1, colour == nil, let c = color(v) {
                        colour = c
                    } else if image == nil, case .function = v {
                        // An image function not drawn (`image-set()`, `cross-fade()`): unsupported, not
                        // invalid. Colour functions (`rgb()`) were taken just above.
                        image = v
                    } else {
                        return nil
                    }
                }
                if afterSlash && sizeTokens.isEmpty { return nil }
                images.append(image ?? .token(.ident("none")))
                guard let repeatValue = repeatTokens.isEmpty ? BackgroundRepeat(x: .repeat, y: .repeat) : backgroundRepeat(repeatTokens) else { return nil }
                repeats.append(repeatValue)
                let origin = SpecifiedBackgroundPosition(x: .zero, xFromEnd: false, y: .zero, yFromEnd: false)
                guard let positionValue = positionTokens.isEmpty ? origin : backgroundPosition(positionTokens) else { return nil }
                positions.append(positionValue)
                guard let sizeValue = sizeTokens.isEmpty ? .lengths(nil, nil) : backgroundSize(sizeTokens) else { return nil }
                sizes.append(sizeValue)
            }
            var imageValue: SpecifiedValue = .keyword("none")
            if images.count == 1, case .token(.ident) = images[0] {
                imageValue = .keyword("none")
            } else {
                var withCommas: [CV] = []
                for (index, image) in images.enumerated() {
                    if index > 0 { withCommas.append(.token(.comma)) }
                    withCommas.append(image)
                }
                guard let parsed = parseLonghand(.backgroundImage, withCommas) else { return nil }
                imageValue = parsed
            }
            return [
                (.backgroundColor, colour ?? .color(.transparent)), (.backgroundImage, imageValue), (.backgroundRepeat, .backgroundRepeats(repeats)),
                (.backgroundPosition, .backgroundPositions(positions)), (.backgroundSize, .backgroundSizes(sizes)),
            ]
        case "text-decoration", "-webkit-text-decoration":
            var bits: UInt8 = 0
            for v in values {
                switch v.lowerIdent {
                case "underline": bits |= TextDecoration.underline.rawValue
                case "overline": bits |= TextDecoration.overline.rawValue
                case "line-through": bits |= TextDecoration.lineThrough.rawValue
                case "none", "blink", "solid", "double", "dotted", "dashed", "wavy", "auto", "from-font": break
                default:
                    if color(v) != nil || length(v) != nil { break }
                    return nil
                }
            }
            return [(.textDecorationLine, .decoration(bits))]
        case "font-variant":
            if values.count == 1, let word = values[0].lowerIdent, word == "normal" || word == "none" {
                return [
                    (.fontVariantCaps, .keyword("normal")), (.fontVariantNumeric, .features([])),
                    (.fontVariantLigatures, word == "none" ? .features(ligatureFeatures(values) ?? []) : .features([])),
                    (.fontVariantPosition, .features([])),
                ]
            }
            var caps: SpecifiedValue = .keyword("normal")
            var numeric: [FontFeature] = [], ligatures: [FontFeature] = [], position: [FontFeature] = []
            for v in values {
                if let c = parseLonghand(.fontVariantCaps, [v]) {
                    caps = c
                } else if let n = numericFeatures([v]) {
                    numeric += n
                } else if let l = ligatureFeatures([v]) {
                    ligatures += l
                } else if case .features(let p)? = parseLonghand(.fontVariantPosition, [v]) {
                    position += p
                } else if let word = v.lowerIdent,
                    ["jis78", "jis83", "jis90", "jis04", "simplified", "traditional", "full-width", "proportional-width",
                        "ruby", "historical-forms"].contains(word)
                {
                    continue
                } else {
                    return nil
                }
            }
            return [
                (.fontVariantCaps, caps), (.fontVariantNumeric, .features(numeric)),
                (.fontVariantLigatures, .features(ligatures)), (.fontVariantPosition, .features(position)),
            ]
        case "font":
            return parseFont(values)
        case "page-break-before", "page-break-after":
            guard let word = values.count == 1 ? values[0].lowerIdent : nil else { return nil }
            let id: PropertyID = name == "page-break-before" ? .breakBefore : .breakAfter
            switch word {
            case "always": return [(id, .keyword("page"))]
            case "auto", "avoid", "left", "right", "recto", "verso": return [(id, .keyword(word))]
            default: return nil
            }
        case "page-break-inside":
            guard let word = values.count == 1 ? values[0].lowerIdent : nil, word == "auto" || word == "avoid" else { return nil }
            return [(.breakInside, .keyword(word))]
        case "overflow":
            guard (1...2).contains(values.count), let v = parseLonghand(.overflow, [values[0]]) else { return nil }
            if values.count == 2, parseLonghand(.overflow, [values[1]]) == nil { return nil }
            return [(.overflow, v)]
        case "text-emphasis", "-epub-text-emphasis", "-webkit-text-emphasis":
            var colour: SpecifiedValue = .color(nil)
            var styleItems: [CV] = []
            for v in values {
                if let c = color(v), v.lowerIdent != "none" { colour = c } else { styleItems.append(v) }
            }
            if styleItems.isEmpty { styleItems = [.token(.ident("none"))] }
            guard let style = parseLonghand(.textEmphasisStyle, styleItems) else { return nil }
            return [(.textEmphasisStyle, style), (.textEmphasisColor, colour)]
        case "adobe-hyphenate":
            switch values.count == 1 ? values[0].lowerIdent : nil {
            case "none": return [(.hyphens, .keyword("none"))]
            case "auto", "explicit": return [(.hyphens, .keyword("auto"))]
            default: return nil
            }
        default:
            return nil
        }
    }

    static func parseFont(_ values: [CV]) -> [(PropertyID, SpecifiedValue)]? {
        if values.count == 1, let word = values[0].lowerIdent,
            ["caption", "icon", "menu", "message-box", "small-caption", "status-bar"].contains(word)
        {
            return [(.fontFamily, .families(["sans-serif"]))]
        }
        var style: SpecifiedValue = .keyword("normal"), caps: SpecifiedValue = .keyword("normal")
        var weight: SpecifiedValue = .keyword("normal")
        var i = 0
        var prefixCount = 0
        while i < values.count, prefixCount < 4 {
            let v = values[i]
            if let word = v.lowerIdent {
                if word == "normal" {
                } else if word == "italic" || word == "oblique" {
                    style = .keyword(word)
                } else if word == "small-caps" {
                    caps = .keyword(word)
                } else if ["bold", "bolder", "lighter"].contains(word) {
                    weight = .keyword(word)
                } else if ["ultra-condensed", "extra-condensed", "condensed", "semi-condensed", "semi-expanded",
                    "expanded", "extra-expanded", "ultra-expanded"].contains(word)
                {
                } else {
                    break
                }
            } else if case .token(.number(let n, _)) = v, n >= 1, n <= 1000 {
                weight = .integer(Int(n))
            } else {
                break
            }
            i += 1
            prefixCount += 1
        }
        guard i < values.count, let size = parseLonghand(.fontSize, [values[i]]) else { return nil }
        i += 1
        var lineHeight: SpecifiedValue = .keyword("normal")
        if i < values.count, case .token(.delim("/")) = values[i] {
            guard i + 1 < values.count, let lh = parseLonghand(.lineHeight, [values[i + 1]]) else { return nil }
            lineHeight = lh
            i += 2
        }
        guard i < values.count, let families = families(Array(values[i...])) else { return nil }
        return [
            (.fontStyle, style), (.fontVariantCaps, caps), (.fontWeight, weight), (.fontSize, size),
            (.lineHeight, lineHeight), (.fontFamily, .families(families)), (.fontVariantNumeric, .features([])),
            (.fontVariantLigatures, .features([])), (.fontVariantPosition, .features([])),
        ]
    }
}

extension CalcNode {
    var containsPercent: Bool {
        switch self {
        case .dimension(_, .percent): return true
        case .dimension, .number: return false
        case .sum(let a, let b), .difference(let a, let b), .product(let a, let b), .quotient(let a, let b):
            return a.containsPercent || b.containsPercent
        case .minimum(let items), .maximum(let items): return items.contains { $0.containsPercent }
        case .clamp(let a, let b, let c): return a.containsPercent || b.containsPercent || c.containsPercent
        }
    }
}
