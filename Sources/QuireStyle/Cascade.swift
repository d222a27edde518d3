import QuireCore
import QuireXML

// The cascade: rules bucketed by their rightmost id/class/tag, matched right to left, sorted by
// origin, importance, specificity and order, then computed against the parent. Elements with the
// same parent style, the same matched rules and the same attributes share one computed style
// through a cache, so a book's thousands of paragraphs cost one computation; a layout worker keeps
// that cache from chapter to chapter (`StyleMemo`), so each style is computed once per worker.
//
// Reader overrides (decided here, applied after the cascade so they always win):
// - fontSizePt becomes the size of `medium` and scales the book's absolute font sizes (px, pt,
//   keywords) by the same factor, so headings stay larger and the reader's size is the text size;
// - lineHeight applies to every element as a number;
// - textAlign replaces start/left/justify, leaving centred and right-aligned text alone;
// - fontFamily goes first in every family list except monospace ones (code stays monospace).

/// The computed record plus what layout never reads but children inherit or counters need.
struct FullStyle: Hashable {
    var style = ComputedStyle()
    var variantNumeric: [FontFeature] = []
    var variantLigatures: [FontFeature] = []
    var variantPosition: [FontFeature] = []
    var featureSettings: [FontFeature] = []
    var quotes: [String]? = nil  // nil = auto
    var emphasisStyle = "none"
    var emphasisColor: Color? = nil
    var emphasisPosition = "over right"
    var custom: [String: [CV]] = [:]
    /// The font size was given in absolute units here or by an ancestor (browsers then leave it
    /// alone when the family turns monospace).
    var fontSizeIsAbsolute = false
    /// The font size carries the monospace factor (13/16), as browsers size `font-family: monospace`.
    var fontSizeIsMonospaceScaled = false
    /// `color` before opacity: children inherit this and take their own ancestors' opacity.
    var unmultipliedColor = Color(red: 0, green: 0, blue: 0)
    /// The product of the ancestors' and this element's `opacity` (inherited as a product).
    var opacity = 1.0
    // Not inherited.
    var ownDecoration: TextDecoration = []
    var content: SpecifiedValue? = nil
    var counterReset: [CounterOp] = []
    var counterIncrement: [CounterOp] = []
    var counterSet: [CounterOp] = []

    /// The computed record's hash, plus whether generated content differs: equality compares the rest.
    func hash(into hasher: inout Hasher) {
        hasher.combine(style)
        hasher.combine(content == nil)
        hasher.combine(counterReset.count)
        hasher.combine(counterIncrement.count)
    }

    func inheritedForChild() -> FullStyle {
        var child = FullStyle()
        child.style = style.inheritedForChild()
        child.variantNumeric = variantNumeric
        child.variantLigatures = variantLigatures
        child.variantPosition = variantPosition
        child.featureSettings = featureSettings
        child.quotes = quotes
        child.emphasisStyle = emphasisStyle
        child.emphasisColor = emphasisColor
        child.emphasisPosition = emphasisPosition
        child.custom = custom
        child.fontSizeIsAbsolute = fontSizeIsAbsolute
        child.fontSizeIsMonospaceScaled = fontSizeIsMonospaceScaled
        child.unmultipliedColor = unmultipliedColor
        child.opacity = opacity
        return child
    }
}

/// Where a winning declaration was written: a block of the rule index (or a style attribute)
/// and the declaration's place in it.
struct WinnerSource: Hashable, Sendable {
    static let styleAttribute: Int32 = -1
    var block: Int32
    var declaration: Int32
    var styleAttribute: String? = nil
}

struct IndexedRule: Sendable {
    var selector: ComplexSelector
    var block: Int32
    var origin: Origin
    /// What the selector needs among the element's ancestors (see `AncestorFilter`).
    var ancestorKeys: [UInt32] = []
    /// The rightmost compound is a tag alone (`p` in `h2 + p`): the rule is reached only through
    /// that tag's bucket, so an HTML element that reaches it matches the compound already.
    var rightmostIsBareTag = false
}

/// What one element's cascade produced, shared by elements with the same key.
struct CascadeResult {
    var full: Int32
    var before: Int32 = -1
    var after: Int32 = -1
    var marker: Int32 = -1
    var firstLetter: Int32 = -1
    var firstLine: Int32 = -1
}

struct CascadeKey: Hashable {
    var parent: Int32
    /// What `rem` means here (the root's font size); styles kept between documents may meet another root.
    var rootFontSize: Double
    var rules: [Int32]
    var styleAttribute: String?
    var hints: [Decl]
    var language: String?
    var isRoot: Bool
}

/// A set of sheets' rules in cascade order, bucketed by their rightmost id, class, tag or
/// attribute: the same for every document that links the same sheets, so it is built once per set.
struct RuleIndex: Sendable {
    var rules: [IndexedRule] = []
    var blocks: [DeclarationBlock] = []
    var byID: [String: [Int32]] = [:]
    var byClass: [String: [Int32]] = [:]
    var byTag: [String: [Int32]] = [:]
    /// Rules whose rightmost compound has only attribute tests, by attribute name.
    var byAttribute: [String: [Int32]] = [:]
    var universal: [Int32] = []
    /// Attribute names whose values rules test on ancestors (see `AncestorFilter`).
    var ancestorAttributes: Set<String> = []

    /// Which of the sheets each block came from, where each sheet's blocks begin, and its origin.
    var blockSheets: [Int32] = []
    var sheetBlockBases: [Int32] = []
    var sheetOrigins: [Origin] = []

    init(sheets: [(StyleSheet, Origin)]) {
        // Global cascade order: origin, then specificity, then source order; rule ids follow it.
        var all: [(UInt64, IndexedRule)] = []
        var order: UInt64 = 0
        for (ordinal, (sheet, origin)) in sheets.enumerated() {
            let blockBase = Int32(blocks.count)
            blocks += sheet.blocks
            blockSheets += Array(repeating: Int32(ordinal), count: sheet.blocks.count)
            sheetBlockBases.append(blockBase)
            sheetOrigins.append(origin)
            for rule in sheet.rules {
                let key = UInt64(origin.rawValue) << 60 | UInt64(rule.selector.specificity) << 30 | order
                order += 1
                all.append((key, IndexedRule(selector: rule.selector, block: blockBase + rule.block, origin: origin)))
            }
        }
        all.sort { $0.0 < $1.0 }
        rules = all.map(\.1)
        for index in rules.indices {
            rules[index].ancestorKeys = AncestorFilter.requiredKeys(rules[index].selector, attributeNames: &ancestorAttributes)
            let rightmost = rules[index].selector.compounds[0]
            rules[index].rightmostIsBareTag =
                rightmost.tag != nil && rightmost.namespace == .any && rightmost.ids.isEmpty && rightmost.classes.isEmpty
                && rightmost.attributes.isEmpty && rightmost.pseudos.isEmpty
        }
        for (index, rule) in rules.enumerated() {
            let id = Int32(index)
            let rightmost = rule.selector.compounds[0]
            if let first = rightmost.ids.first {
                byID[first, default: []].append(id)
            } else if let first = rightmost.classes.first {
                byClass[first, default: []].append(id)
            } else if let tag = rightmost.tag {
                byTag[tag, default: []].append(id)
            } else if let tags = Self.alternativeTags(rightmost) {
                for tag in tags { byTag[tag, default: []].append(id) }
            } else if let attribute = rightmost.attributes.first {
                byAttribute[attribute.name, default: []].append(id)
            } else {
                universal.append(id)
            }
        }
    }
}

extension RuleIndex {
    /// The tags of a compound that can match only elements of one of them: `:is(ol, ul)` (the
    /// user-agent sheet's list rules), each alternative a bare tag. Such a rule waits in those tags'
    /// buckets instead of being tried on every element. Nil for any other compound.
    static func alternativeTags(_ compound: CompoundSelector) -> [String]? {
        guard compound.tag == nil, compound.ids.isEmpty, compound.classes.isEmpty else { return nil }
        for pseudo in compound.pseudos {
            guard case .isMatch(let alternatives) = pseudo, !alternatives.isEmpty else { continue }
            var tags: [String] = []
            for alternative in alternatives {
                guard alternative.compounds.count == 1, alternative.pseudoElement == nil, let tag = alternative.compounds[0].tag else {
                    return nil
                }
                if !tags.contains(tag) { tags.append(tag) }
            }
            return tags
        }
        return nil
    }
}

/// What one layout worker's cascades keep from one document to the next: the styles computed so
/// far, interned, and the result of each cascade key. The chapters of a book link the same sheets,
/// so their paragraphs, headings and emphasis are computed once per worker instead of once per
/// chapter. Kept per set of sheets and environment (what a key's result depends on besides the
/// key); a result is a pure function of those, so styles never depend on which documents a worker
/// saw before. Not thread-safe: one per worker.
public final class StyleMemo {
    struct Scope: Hashable {
        var sheets: [StyleEngine.IndexKey]
        var environment: StyleEnvironment
    }

    struct Kept {
        var fullStyles: [FullStyle]
        var fullIndex: [FullStyle: Int32]
        var cache: [CascadeKey: CascadeResult]
    }

    /// Past this many styles a scope starts again (a book whose every chapter styles itself apart).
    static let maxStyles = 16_384
    /// Scopes kept at once (a book's documents rarely link more than a few sets of sheets).
    static let maxScopes = 8
    private var kept: [Scope: Kept] = [:]

    public init() {}

    /// The scope's styles, handed over (a cascade owns them while it runs, so they are not copied).
    func take(_ scope: Scope) -> Kept? { kept.removeValue(forKey: scope) }

    func keep(_ styles: Kept, for scope: Scope) {
        guard styles.fullStyles.count <= Self.maxStyles else { return }
        if kept.count >= Self.maxScopes { kept.removeAll() }
        kept[scope] = styles
    }
}

final class Cascade {
    let tree: XMLTree
    let table: ElementTable
    let environment: StyleEnvironment
    let styleAttributes: Bool
    /// The rules of the document's sheets, shared with every document that links the same ones.
    let index: RuleIndex

    var fullStyles: [FullStyle] = []
    var fullIndex: [FullStyle: Int32] = [:]
    var cache: [CascadeKey: CascadeResult] = [:]
    /// Where the interned styles and results come from and go back to (see `StyleMemo`).
    private let memo: (memo: StyleMemo, scope: StyleMemo.Scope)?
    var styleAttributeBlocks: [String: DeclarationBlock] = [:]
    /// For the CSS report: where each longhand's winning declaration was written (nil when not
    /// recording), and per element the winners of the properties layout may leave unhonoured.
    var winnerSources: [WinnerSource?]? = nil
    var recordedSources: [Int32: [PropertyID: WinnerSource]] = [:]
    private var sourcesByKey: [CascadeKey: [PropertyID: WinnerSource]] = [:]
    var countsStyleAttributes = false
    /// The CSS report's key for each sheet of the index (nil for sheets it does not count).
    var sheetReportKeys: [String?] = []
    let fontScale: Double
    var rootFontSize: Double
    static let initialFull = FullStyle()

    init(tree: XMLTree, index: RuleIndex, environment: StyleEnvironment, styleAttributes: Bool, memo: (StyleMemo, StyleMemo.Scope)? = nil) {
        self.tree = tree
        self.memo = memo
        if let (memo, scope) = memo, let kept = memo.take(scope) {
            fullStyles = kept.fullStyles
            fullIndex = kept.fullIndex
            cache = kept.cache
        }
        self.environment = environment
        self.styleAttributes = styleAttributes
        table = ElementTable(tree: tree)
        fontScale = environment.overrides.fontSizePt.map { max(1, $0) * 96 / 72 / 16 } ?? 1
        rootFontSize = 16 * fontScale
        self.index = index
    }

    // MARK: Matching

    private var candidateBuffer: [Int32] = []
    /// The ancestors of the element being styled.
    private var ancestors = AncestorFilter()
    private var attributeKeyBuffer: [UInt32] = []

    /// Matched rule ids in cascade order (main element first, pseudo-element rules included).
    func matchedRules(_ element: Int32) -> [Int32] {
        let e = Int(element)
        var candidates = candidateBuffer
        candidates.removeAll(keepingCapacity: true)
        if let id = table.id[e], let list = index.byID[id] { candidates += list }
        for name in table.classes[e] { if let list = index.byClass[name] { candidates += list } }
        if let list = index.byTag[table.isHTML[e] ? table.localName[e] : table.localName[e].lowercased()] { candidates += list }
        if !index.byAttribute.isEmpty, let element = tree.element(NodeID(element)) {
            // Names seen are checked in a list while there are few, then in a set: an element may
            // carry thousands of attributes (a list alone was quadratic in them).
            var seenList: [String] = []
            var seen: Set<String> = []
            for attribute in element.attributes {
                let name = AncestorFilter.baseName(attribute.name.local)
                if seen.isEmpty && seenList.count < 8 {
                    guard !seenList.contains(name) else { continue }
                    seenList.append(name)
                } else {
                    if seen.isEmpty { seen = Set(seenList) }
                    guard seen.insert(name).inserted else { continue }
                }
                if let list = index.byAttribute[name] { candidates += list }
            }
        }
        candidates += index.universal
        let matcher = SelectorMatcher(table: table)
        var matched: [Int32] = []
        matched.reserveCapacity(8)  // an element matches a few rules: one allocation, not one per doubling
        // A bare tag rule reached by an HTML element came through the bucket of the element's own
        // name (compared as written, as the compound would compare it).
        let isHTML = table.isHTML[e]
        // Borrowed through the buffer: copying each rule's selector out would retain its arrays.
        index.rules.withUnsafeBufferPointer { rules in
            for id in candidates {
                let rule = rules.baseAddress! + Int(id)
                let mayMatch = rule.pointee.ancestorKeys.withUnsafeBufferPointer { ancestors.mayContain(all: $0) }
                guard mayMatch else { continue }
                let selector = UnsafePointer(rule).pointer(to: \.selector)!
                if matcher.matches(selector, element, rightmostMatched: isHTML && rule.pointee.rightmostIsBareTag) {
                    matched.append(id)
                }
            }
        }
        candidateBuffer = candidates
        if matched.count > 1 {
            matched.sort()
            // An element with two classes can reach one rule twice.
            var unique: [Int32] = []
            unique.reserveCapacity(matched.count)
            for id in matched where unique.last != id { unique.append(id) }
            matched = unique
        }
        return matched
    }

    // MARK: Presentational hints

    /// MathML Core's `text-transform: math-auto`, as a hint: an `<mi>` of one Latin or Greek letter
    /// is italic (`x`, `δ`), a longer one (`sin`) or a letter-like symbol (`ℂ`) stays upright;
    /// `mathvariant` italic, bold and normal say it outright.
    func mathHints(_ element: XMLElement, localName: String) -> [Decl] {
        guard localName == "mi" || localName == "mn" || localName == "mo" || localName == "mtext" else { return [] }
        var result: [Decl] = []
        func add(_ property: PropertyID, _ value: SpecifiedValue) {
            result.append(Decl(property: property, value: .value(value), important: false))
        }
        let variant = element.attribute("mathvariant")?.trimmingWhitespace().lowercased()
        switch variant {
        case "italic"?: add(.fontStyle, .keyword("italic"))
        case "bold"?: add(.fontWeight, .integer(700))
        case "bold-italic"?:
            add(.fontStyle, .keyword("italic"))
            add(.fontWeight, .integer(700))
        case nil where localName == "mi":
            let scalars = Array(element.textContent.unicodeScalars.filter { !$0.properties.isWhitespace })
            if scalars.count == 1, Self.isMathItalicLetter(scalars[0]) { add(.fontStyle, .keyword("italic")) }
        default: break
        }
        return result
    }

    /// Letters math-auto turns italic: Latin and Greek (not ℂ, ℝ or other letter-like symbols).
    static func isMathItalicLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0x0391...0x03A9, 0x03B1...0x03C9, 0x0131, 0x0237, 0x03D1, 0x03D5, 0x03D6, 0x03F0, 0x03F1, 0x03F5: return true
        default: return false
        }
    }

    /// The HTML attributes `hints` reads (lowercase).
    static let hintAttributes: Set<String> = ["dir", "align", "width", "height", "type", "valign", "color", "face", "nowrap"]

    func hints(_ element: XMLElement, isHTML: Bool, localName: String) -> [Decl] {
        if element.namespace == Namespace.mathml { return mathHints(element, localName: localName) }
        guard isHTML else { return [] }
        var result: [Decl] = []
        func add(_ property: PropertyID, _ value: SpecifiedValue) {
            result.append(Decl(property: property, value: .value(value), important: false))
        }
        for attribute in element.attributes where attribute.name.namespace.isEmpty {
            // Only these attributes are hints: the values of the others (class, id, title…) are
            // never trimmed and lowercased.
            let name = SelectorMatcher.lowerASCII(attribute.name.local)
            guard Self.hintAttributes.contains(name) else { continue }
            let value = attribute.value.trimmingWhitespace().lowercased()
            switch name {
            case "dir":
                if value == "ltr" || value == "rtl" {
                    add(.direction, .keyword(value))
                    add(.unicodeBidi, .keyword("isolate"))
                }
            case "align" where localName == "table":
                // HTML's rendering rules place a centred table by auto margins (and float one set
                // right, which is drawn here at the right without text beside it); its text stays.
                if value == "center" || value == "right" { add(.marginLeft, .keyword("auto")) }
                if value == "center" { add(.marginRight, .keyword("auto")) }
            case "align":
                guard ["p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "tr", "caption", "center", "section"].contains(localName)
                else { continue }
                switch value {
                case "left", "right", "center", "justify": add(.textAlign, .keyword(value))
                case "middle": add(.textAlign, .keyword("center"))
                default: break
                }
            case "width", "height":
                guard ["img", "svg", "video", "canvas", "iframe", "object", "embed", "table", "td", "th", "col"].contains(localName)
                else { continue }
                let property: PropertyID = name == "width" ? .width : .height
                if value.hasSuffix("%"), let n = Double(value.dropLast()), n >= 0 {
                    add(property, .length(.dimension(n, .percent)))
                } else if let n = Double(value.hasSuffix("px") ? String(value.dropLast(2)) : value), n >= 0 {
                    add(property, .length(.dimension(n, .px)))
                }
            case "type":
                guard localName == "ol" || localName == "li" || localName == "ul" else { continue }
                switch attribute.value.trimmingWhitespace() {
                case "1": add(.listStyleType, .listStyle(.decimal))
                case "a": add(.listStyleType, .listStyle(.lowerAlpha))
                case "A": add(.listStyleType, .listStyle(.upperAlpha))
                case "i": add(.listStyleType, .listStyle(.lowerRoman))
                case "I": add(.listStyleType, .listStyle(.upperRoman))
                case "disc", "circle", "square":
                    if let t = Properties.listStyleType(.token(.ident(value))) { add(.listStyleType, .listStyle(t)) }
                default: break
                }
            case "valign":
                if ["top", "middle", "bottom", "baseline"].contains(value) { add(.verticalAlign, .keyword(value)) }
            case "color":
                if localName == "font", let c = ColorParser.parse(.token(.hash(String(value.drop { $0 == "#" }), isID: false))) ?? ColorParser.parse(.token(.ident(value))) {
                    add(.color, .color(c))
                }
            case "face":
                if localName == "font", let families = Properties.families(ComponentParser.parse(attribute.value).0.significant) {
                    add(.fontFamily, .families(families))
                }
            case "nowrap":
                if localName == "td" || localName == "th" { add(.whiteSpace, .keyword("nowrap")) }
            default: break
            }
        }
        return result
    }

    // MARK: Cascade and computation

    /// Applies matched declarations in cascade order into `winners` (one slot per longhand).
    private func cascade(
        rules matched: [Int32], pseudo: PseudoElement?, hints: [Decl], styleBlock: DeclarationBlock?,
        winners: inout [DeclValue?], custom: inout [String: [CV]]
    ) -> Bool {
        var any = false
        let recording = winnerSources != nil
        func applyBlock(_ block: DeclarationBlock, important: Bool, id: Int32) {
            for (index, decl) in block.declarations.enumerated() where decl.important == important {
                winners[decl.property.rawValue] = decl.value
                if recording { winnerSources![decl.property.rawValue] = WinnerSource(block: id, declaration: Int32(index)) }
                any = true
            }
            for decl in block.custom where decl.important == important {
                custom[decl.name] = decl.value
                any = true
            }
        }
        let relevant = matched.filter { self.index.rules[Int($0)].selector.pseudoElement == pseudo }
        // Normal declarations: UA, user, hints, author, style attribute.
        var hintsDone = false
        for id in relevant {
            let rule = self.index.rules[Int(id)]
            if rule.origin == .author && !hintsDone {
                applyHints()
                hintsDone = true
            }
            let block = self.index.blocks[Int(rule.block)]
            if block.hasNormal { applyBlock(block, important: false, id: rule.block) }
        }
        func applyHints() {
            for decl in hints {
                winners[decl.property.rawValue] = decl.value
                if recording { winnerSources![decl.property.rawValue] = nil }
            }
        }
        if !hintsDone { applyHints() }
        if let styleBlock, styleBlock.hasNormal { applyBlock(styleBlock, important: false, id: WinnerSource.styleAttribute) }
        // Important declarations: author (style attribute last), then user, then UA.
        for origin in [Origin.author, .user, .userAgent] {
            for id in relevant where self.index.rules[Int(id)].origin == origin {
                let rule = self.index.rules[Int(id)]
                let block = self.index.blocks[Int(rule.block)]
                if block.hasImportant { applyBlock(block, important: true, id: rule.block) }
            }
            if origin == .author, let styleBlock, styleBlock.hasImportant { applyBlock(styleBlock, important: true, id: WinnerSource.styleAttribute) }
        }
        return any || !relevant.isEmpty
    }

    func intern(_ full: FullStyle) -> Int32 {
        // One lookup (and one hash of the record) whether the style is new or known.
        let next = Int32(fullStyles.count)
        let index = Self.read(&fullIndex[full, default: next])
        if index == next { fullStyles.append(full) }
        return index
    }

    private static func read(_ value: inout Int32) -> Int32 { value }

    /// Computes one element (or pseudo-element) from its cascaded values and its parent.
    func compute(
        winners: [DeclValue?], custom declared: [String: [CV]], parent: FullStyle, isRoot: Bool, language: String?,
        pseudo: PseudoElement?
    ) -> FullStyle {
        var full = parent.inheritedForChild()
        if let language { full.style.language = language }
        if !declared.isEmpty { resolveCustom(declared, into: &full) }
        var values = winners
        // var() substitution happens now that custom properties are known.
        for index in values.indices {
            guard case .pending(let source, let raw)? = values[index] else { continue }
            values[index] = nil
            guard let substituted = VarSubstitution.substitute(raw, full.custom),
                let pairs = Properties.parse(source, substituted.significant)
            else { continue }  // invalid at computed-value time: behaves as unset
            for (id, value) in pairs where id.rawValue == index { values[index] = .value(value) }
        }
        let parentStyle = parent.style
        var context = LengthContext(
            fontSize: parentStyle.fontSize, rootFontSize: isRoot ? 16 * fontScale : rootFontSize,
            viewportWidth: environment.viewportWidth, viewportHeight: environment.viewportHeight)
        if isRoot && pseudo == nil { full.style.fontSize = 16 * fontScale }
        if let v = values[PropertyID.fontFamily.rawValue] { apply(.fontFamily, v, &full, parent, &context) }
        if let v = values[PropertyID.fontSize.rawValue] { apply(.fontSize, v, &full, parent, &context) }
        Self.scaleForMonospace(&full)
        context.fontSize = full.style.fontSize
        if let v = values[PropertyID.color.rawValue] {
            apply(.color, v, &full, parent, &context)
            full.unmultipliedColor = v == .wide(.inherit) || v == .value(.color(nil)) ? parent.unmultipliedColor : full.style.color
        }
        for (index, value) in values.enumerated() {
            guard let value, index != PropertyID.fontSize.rawValue, index != PropertyID.color.rawValue, index != PropertyID.fontFamily.rawValue
            else { continue }
            apply(PropertyID(rawValue: index)!, value, &full, parent, &context)
        }
        fixUp(&full, parent: parent, isRoot: isRoot, pseudo: pseudo)
        return full
    }

    /// Browsers' default monospace size is 13 px where the others' is 16: text whose family is
    /// just `monospace` is scaled by 13/16 unless its size is absolute (px, pt…), and scaled back
    /// when a descendant leaves monospace. `monospace, monospace` (the usual way out) is exempt.
    static func scaleForMonospace(_ full: inout FullStyle) {
        let wanted = full.style.fontFamilies == ["monospace"] && !full.fontSizeIsAbsolute
        guard wanted != full.fontSizeIsMonospaceScaled else { return }
        full.style.fontSize *= wanted ? 13.0 / 16.0 : 16.0 / 13.0
        full.fontSizeIsMonospaceScaled = wanted
    }

    /// Opacity (with no compositing groups) as the alpha of what the element and its descendants
    /// paint: text, background and borders. Overlapping parts of one element are not flattened first.
    static func applyOpacity(_ s: inout ComputedStyle, _ opacity: Double) {
        guard opacity < 1 else { return }
        func faded(_ color: Color) -> Color {
            var color = color
            color.alpha = UInt8((Double(color.alpha) * opacity).rounded())
            return color
        }
        for index in s.boxShadows.indices { s.boxShadows[index].color = faded(s.boxShadows[index].color ?? s.color) }
        s.color = faded(s.color)
        s.backgroundColor = faded(s.backgroundColor)
        for (layer, image) in s.backgroundImages.enumerated() {
            guard case .gradient(var gradient)? = image else { continue }
            for index in gradient.stops.indices { gradient.stops[index].color = faded(gradient.stops[index].color) }
            s.backgroundImages[layer] = .gradient(gradient)
        }
        s.borderColor = Edges(
            top: s.borderColor.top.map(faded), right: s.borderColor.right.map(faded), bottom: s.borderColor.bottom.map(faded),
            left: s.borderColor.left.map(faded))
    }

    private func resolveCustom(_ declared: [String: [CV]], into full: inout FullStyle) {
        var resolved = full.custom
        var state: [String: Bool] = [:]  // false = in progress, true = done
        func resolve(_ name: String) -> [CV]? {
            if state[name] == true { return resolved[name] }
            if state[name] == false { return nil }  // a cycle
            guard let raw = declared[name] else { return resolved[name] }
            state[name] = false
            var value: [CV]? = raw
            if raw.containsVar {
                value = VarSubstitution.substitute(raw, lookup: { resolve($0) })
            }
            state[name] = true
            if let value, !(value.count == 1 && value[0].lowerIdent.map { ["initial", "unset", "revert"].contains($0) } == true) {
                if value.count == 1, value[0].lowerIdent == "inherit" {
                    // keep the parent's
                } else {
                    resolved[name] = value
                }
            } else {
                resolved[name] = nil
            }
            return resolved[name]
        }
        for name in declared.keys { _ = resolve(name) }
        full.custom = resolved
    }

    private func copy(_ id: PropertyID, from source: FullStyle, to full: inout FullStyle) {
        let s = source.style
        switch id {
        case .display: full.style.display = s.display
        case .marginTop: full.style.margin.top = s.margin.top
        case .marginRight: full.style.margin.right = s.margin.right
        case .marginBottom: full.style.margin.bottom = s.margin.bottom
        case .marginLeft: full.style.margin.left = s.margin.left
        case .paddingTop: full.style.padding.top = s.padding.top
        case .borderTopLeftRadius: full.style.borderRadius.topLeft = s.borderRadius.topLeft
        case .borderTopRightRadius: full.style.borderRadius.topRight = s.borderRadius.topRight
        case .borderBottomRightRadius: full.style.borderRadius.bottomRight = s.borderRadius.bottomRight
        case .borderBottomLeftRadius: full.style.borderRadius.bottomLeft = s.borderRadius.bottomLeft
        case .boxShadow: full.style.boxShadows = s.boxShadows
        case .paddingRight: full.style.padding.right = s.padding.right
        case .paddingBottom: full.style.padding.bottom = s.padding.bottom
        case .paddingLeft: full.style.padding.left = s.padding.left
        case .borderTopWidth: full.style.borderWidth.top = s.borderWidth.top
        case .borderRightWidth: full.style.borderWidth.right = s.borderWidth.right
        case .borderBottomWidth: full.style.borderWidth.bottom = s.borderWidth.bottom
        case .borderLeftWidth: full.style.borderWidth.left = s.borderWidth.left
        case .borderTopStyle: full.style.borderStyle.top = s.borderStyle.top
        case .borderRightStyle: full.style.borderStyle.right = s.borderStyle.right
        case .borderBottomStyle: full.style.borderStyle.bottom = s.borderStyle.bottom
        case .borderLeftStyle: full.style.borderStyle.left = s.borderStyle.left
        case .borderTopColor: full.style.borderColor.top = s.borderColor.top
        case .borderRightColor: full.style.borderColor.right = s.borderColor.right
        case .borderBottomColor: full.style.borderColor.bottom = s.borderColor.bottom
        case .borderLeftColor: full.style.borderColor.left = s.borderColor.left
        case .width: full.style.width = s.width
        case .height: full.style.height = s.height
        case .minWidth: full.style.minWidth = s.minWidth
        case .minHeight: full.style.minHeight = s.minHeight
        case .maxWidth: full.style.maxWidth = s.maxWidth
        case .maxHeight: full.style.maxHeight = s.maxHeight
        case .float: full.style.float = s.float
        case .clear: full.style.clear = s.clear
        case .position: full.style.position = s.position
        case .top: full.style.offsets.top = s.offsets.top
        case .right: full.style.offsets.right = s.offsets.right
        case .bottom: full.style.offsets.bottom = s.offsets.bottom
        case .left: full.style.offsets.left = s.offsets.left
        case .zIndex: full.style.zIndex = s.zIndex
        case .backgroundColor: full.style.backgroundColor = s.backgroundColor
        case .breakBefore: full.style.breakBefore = s.breakBefore
        case .breakAfter: full.style.breakAfter = s.breakAfter
        case .breakInside: full.style.breakInside = s.breakInside
        case .verticalAlign: full.style.verticalAlign = s.verticalAlign
        case .textDecorationLine: full.ownDecoration = source.ownDecoration
        case .unicodeBidi: full.style.unicodeBidi = s.unicodeBidi
        case .objectFit: full.style.objectFit = s.objectFit
        case .opacity: break  // initial and inherit leave the ancestors' product as it is
        case .backgroundImage:
            full.style.backgroundImages = s.backgroundImages
        case .backgroundRepeat: full.style.backgroundRepeats = s.backgroundRepeats
        case .backgroundPosition: full.style.backgroundPositions = s.backgroundPositions
        case .backgroundSize: full.style.backgroundSizes = s.backgroundSizes
        case .columnCount: full.style.columnCount = s.columnCount
        case .columnWidth: full.style.columnWidth = s.columnWidth
        case .columnGap: full.style.columnGap = s.columnGap
        case .columnFill: full.style.columnBalance = s.columnBalance
        case .columnRuleWidth: full.style.columnRuleWidth = s.columnRuleWidth
        case .columnRuleStyle: full.style.columnRuleStyle = s.columnRuleStyle
        case .columnRuleColor: full.style.columnRuleColor = s.columnRuleColor
        case .overflow: full.style.overflowHidden = s.overflowHidden
        case .boxSizing: full.style.boxSizing = s.boxSizing
        case .flexDirection: full.style.flexDirection = s.flexDirection
        case .justifyContent: full.style.justifyContent = s.justifyContent
        case .alignItems: full.style.alignItems = s.alignItems
        case .content: full.content = source.content
        case .counterReset: full.counterReset = source.counterReset
        case .counterIncrement: full.counterIncrement = source.counterIncrement
        case .counterSet: full.counterSet = source.counterSet
        case .fontFamily: full.style.fontFamilies = s.fontFamilies
        case .fontSize: full.style.fontSize = s.fontSize
        case .fontWeight: full.style.fontWeight = s.fontWeight
        case .fontStyle: full.style.fontStyle = s.fontStyle
        case .fontVariantCaps: full.style.fontVariantCaps = s.fontVariantCaps
        case .fontVariantNumeric: full.variantNumeric = source.variantNumeric
        case .fontVariantLigatures: full.variantLigatures = source.variantLigatures
        case .fontVariantPosition: full.variantPosition = source.variantPosition
        case .fontFeatureSettings: full.featureSettings = source.featureSettings
        case .lineHeight: full.style.lineHeight = s.lineHeight
        case .color: full.style.color = s.color
        case .textAlign: full.style.textAlign = s.textAlign
        case .textAlignLast: full.style.textAlignLast = s.textAlignLast
        case .textIndent: full.style.textIndent = s.textIndent
        case .textTransform: full.style.textTransform = s.textTransform
        case .letterSpacing: full.style.letterSpacing = s.letterSpacing
        case .wordSpacing: full.style.wordSpacing = s.wordSpacing
        case .whiteSpace: full.style.whiteSpace = s.whiteSpace
        case .hyphens: full.style.hyphens = s.hyphens
        case .direction: full.style.direction = s.direction
        case .writingMode: full.style.writingMode = s.writingMode
        case .listStyleType: full.style.listStyleType = s.listStyleType
        case .listStylePosition: full.style.listStylePosition = s.listStylePosition
        case .widows: full.style.widows = s.widows
        case .orphans: full.style.orphans = s.orphans
        case .visibility: full.style.visibility = s.visibility
        case .quotes: full.quotes = source.quotes
        case .wordBreak: full.style.wordBreak = s.wordBreak
        case .borderCollapse: full.style.borderCollapse = s.borderCollapse
        case .borderSpacingHorizontal: full.style.borderSpacingHorizontal = s.borderSpacingHorizontal
        case .borderSpacingVertical: full.style.borderSpacingVertical = s.borderSpacingVertical
        case .overflowWrap: full.style.overflowWrap = s.overflowWrap
        case .lineBreak: full.style.lineBreak = s.lineBreak
        case .textOrientation: full.style.textOrientation = s.textOrientation
        case .textCombineUpright: full.style.textCombineUpright = s.textCombineUpright
        case .textEmphasisStyle: full.emphasisStyle = source.emphasisStyle
        case .textEmphasisColor: full.emphasisColor = source.emphasisColor
        case .textEmphasisPosition: full.emphasisPosition = source.emphasisPosition
        case .hangingPunctuation: full.style.hangingPunctuation = s.hangingPunctuation
        case .textUnderlinePosition:
            full.style.underlineUnder = source.style.underlineUnder
            full.style.underlineRight = source.style.underlineRight
        }
    }

    private func apply(_ id: PropertyID, _ value: DeclValue, _ full: inout FullStyle, _ parent: FullStyle, _ context: inout LengthContext) {
        switch value {
        case .pending: return
        case .wide(let wide):
            switch wide {
            case .inherit: copy(id, from: parent, to: &full)
            case .initial: copy(id, from: Cascade.initialFull, to: &full)
            case .unset: if !id.inherited { copy(id, from: Cascade.initialFull, to: &full) }
            }
            if id == .fontSize && wide == .initial { full.style.fontSize = 16 * fontScale }
            if id == .fontSize && wide == .initial {
                full.fontSizeIsAbsolute = false
                full.fontSizeIsMonospaceScaled = false
            }
            return
        case .value(let v):
            set(id, v, &full, parent, context)
        }
    }

    private func lengthValue(_ v: SpecifiedValue, _ context: LengthContext) -> Length? {
        if case .length(let l) = v { return l.resolve(context) }
        return nil
    }

    private func lengthOrAuto(_ v: SpecifiedValue, _ context: LengthContext) -> LengthOrAuto {
        if case .length(let l) = v { return .length(l.resolve(context)) }
        return .auto
    }

    private func px(_ v: SpecifiedValue, _ context: LengthContext) -> Double {
        if case .length(let l) = v { return l.resolvePx(context, percentBase: 0) }
        return 0
    }

    private func radius(_ v: SpecifiedValue, _ context: LengthContext) -> CornerRadius {
        guard case .radius(let horizontal, let vertical) = v else { return .zero }
        return CornerRadius(horizontal: horizontal.resolve(context), vertical: vertical.resolve(context))
    }

    private func keyword(_ v: SpecifiedValue) -> String {
        if case .keyword(let k) = v { return k }
        return ""
    }

    private func color(_ v: SpecifiedValue, current: Color) -> Color? {
        if case .color(let c) = v { return c ?? current }
        return nil
    }

    private func set(_ id: PropertyID, _ v: SpecifiedValue, _ full: inout FullStyle, _ parent: FullStyle, _ context: LengthContext) {
        switch id {
        case .display:
            let word = keyword(v)
            switch word {
            case "flow-root", "run-in", "flow": full.style.display = .block
            case "ruby-base", "ruby-base-container", "ruby-text-container", "inline-list-item", "math":
                full.style.display = .inline
            case "-webkit-box", "-webkit-flex", "-ms-flexbox": full.style.display = .flex
            case "-webkit-inline-box": full.style.display = .inlineFlex
            default: full.style.display = Display(rawValue: word) ?? .inline
            }
        case .marginTop: full.style.margin.top = lengthOrAuto(v, context)
        case .marginRight: full.style.margin.right = lengthOrAuto(v, context)
        case .marginBottom: full.style.margin.bottom = lengthOrAuto(v, context)
        case .marginLeft: full.style.margin.left = lengthOrAuto(v, context)
        case .paddingTop: full.style.padding.top = lengthValue(v, context) ?? .zero
        case .paddingRight: full.style.padding.right = lengthValue(v, context) ?? .zero
        case .paddingBottom: full.style.padding.bottom = lengthValue(v, context) ?? .zero
        case .paddingLeft: full.style.padding.left = lengthValue(v, context) ?? .zero
        case .borderTopWidth: full.style.borderWidth.top = px(v, context)
        case .borderRightWidth: full.style.borderWidth.right = px(v, context)
        case .borderBottomWidth: full.style.borderWidth.bottom = px(v, context)
        case .borderLeftWidth: full.style.borderWidth.left = px(v, context)
        case .borderTopStyle: full.style.borderStyle.top = BorderStyle(rawValue: keyword(v)) ?? .none
        case .borderRightStyle: full.style.borderStyle.right = BorderStyle(rawValue: keyword(v)) ?? .none
        case .borderBottomStyle: full.style.borderStyle.bottom = BorderStyle(rawValue: keyword(v)) ?? .none
        case .borderLeftStyle: full.style.borderStyle.left = BorderStyle(rawValue: keyword(v)) ?? .none
        case .borderTopColor: if case .color(let c) = v { full.style.borderColor.top = c }
        case .borderRightColor: if case .color(let c) = v { full.style.borderColor.right = c }
        case .borderBottomColor: if case .color(let c) = v { full.style.borderColor.bottom = c }
        case .borderLeftColor: if case .color(let c) = v { full.style.borderColor.left = c }
        case .width: full.style.width = lengthOrAuto(v, context)
        case .height: full.style.height = lengthOrAuto(v, context)
        case .minWidth: full.style.minWidth = lengthValue(v, context) ?? .zero
        case .minHeight: full.style.minHeight = lengthValue(v, context) ?? .zero
        case .maxWidth: full.style.maxWidth = lengthValue(v, context)
        case .maxHeight: full.style.maxHeight = lengthValue(v, context)
        case .float: full.style.float = FloatMode(rawValue: keyword(v)) ?? .none
        case .clear: full.style.clear = Clear(rawValue: keyword(v)) ?? .none
        case .position: full.style.position = PositioningScheme(rawValue: keyword(v)) ?? .static
        case .top: full.style.offsets.top = lengthOrAuto(v, context)
        case .right: full.style.offsets.right = lengthOrAuto(v, context)
        case .bottom: full.style.offsets.bottom = lengthOrAuto(v, context)
        case .left: full.style.offsets.left = lengthOrAuto(v, context)
        case .zIndex: if case .integer(let n) = v { full.style.zIndex = n } else { full.style.zIndex = nil }
        case .backgroundColor: full.style.backgroundColor = color(v, current: full.style.color) ?? .transparent
        case .breakBefore: full.style.breakBefore = BreakBetween(rawValue: keyword(v)) ?? .auto
        case .breakAfter: full.style.breakAfter = BreakBetween(rawValue: keyword(v)) ?? .auto
        case .breakInside: full.style.breakInside = BreakInside(rawValue: keyword(v)) ?? .auto
        case .verticalAlign:
            switch v {
            case .keyword(let word):
                switch word {
                case "sub": full.style.verticalAlign = .sub
                case "super": full.style.verticalAlign = .super
                case "top": full.style.verticalAlign = .top
                case "text-top": full.style.verticalAlign = .textTop
                case "middle": full.style.verticalAlign = .middle
                case "bottom": full.style.verticalAlign = .bottom
                case "text-bottom": full.style.verticalAlign = .textBottom
                default: full.style.verticalAlign = .baseline
                }
            case .length(let l): full.style.verticalAlign = .length(l.resolve(context))
            default: break
            }
        case .textDecorationLine:
            if case .decoration(let bits) = v { full.ownDecoration = TextDecoration(rawValue: bits) }
        case .unicodeBidi: full.style.unicodeBidi = UnicodeBidi(rawValue: keyword(v)) ?? .normal
        case .objectFit: full.style.objectFit = ObjectFit(rawValue: keyword(v)) ?? .fill
        case .borderTopLeftRadius: full.style.borderRadius.topLeft = radius(v, context)
        case .borderTopRightRadius: full.style.borderRadius.topRight = radius(v, context)
        case .borderBottomRightRadius: full.style.borderRadius.bottomRight = radius(v, context)
        case .borderBottomLeftRadius: full.style.borderRadius.bottomLeft = radius(v, context)
        case .boxShadow:
            guard case .shadows(let layers) = v else { break }
            full.style.boxShadows = layers.map { layer in
                BoxShadow(
                    x: layer.x.resolvePx(context, percentBase: 0), y: layer.y.resolvePx(context, percentBase: 0),
                    blur: max(0, layer.blur.resolvePx(context, percentBase: 0)), spread: layer.spread.resolvePx(context, percentBase: 0),
                    color: layer.color, inset: layer.inset)
            }
        case .opacity: if case .number(let n) = v { full.opacity = parent.opacity * n }
        case .backgroundImage:
            if case .backgroundImages(let layers) = v { full.style.backgroundImages = layers } else { full.style.backgroundImages = [] }
        case .backgroundRepeat: if case .backgroundRepeats(let repeats) = v { full.style.backgroundRepeats = repeats }
        case .backgroundPosition:
            if case .backgroundPositions(let positions) = v {
                full.style.backgroundPositions = positions.map {
                    BackgroundPosition(x: $0.x.resolve(context), xFromEnd: $0.xFromEnd, y: $0.y.resolve(context), yFromEnd: $0.yFromEnd)
                }
            }
        case .columnCount: if case .integer(let n) = v { full.style.columnCount = n } else { full.style.columnCount = nil }
        case .columnWidth: full.style.columnWidth = lengthValue(v, context).map { $0.resolve(against: 0) }
        case .columnGap: full.style.columnGap = lengthValue(v, context)
        case .columnFill: full.style.columnBalance = keyword(v) != "auto"
        case .columnRuleWidth: full.style.columnRuleWidth = px(v, context)
        case .columnRuleStyle: full.style.columnRuleStyle = BorderStyle(rawValue: keyword(v)) ?? .none
        case .columnRuleColor: if case .color(let c) = v { full.style.columnRuleColor = c }
        case .backgroundSize:
            if case .backgroundSizes(let sizes) = v {
                full.style.backgroundSizes = sizes.map {
                    switch $0 {
                    case .contain: return .contain
                    case .cover: return .cover
                    case .lengths(let width, let height): return .lengths(width?.resolve(context), height?.resolve(context))
                    }
                }
            }
        case .overflow: full.style.overflowHidden = ["hidden", "clip", "scroll", "auto"].contains(keyword(v))
        case .boxSizing: full.style.boxSizing = keyword(v) == "border-box" ? .borderBox : .contentBox
        case .flexDirection: full.style.flexDirection = FlexDirection(rawValue: keyword(v)) ?? .row
        case .justifyContent: full.style.justifyContent = BoxAlignment(rawValue: keyword(v)) ?? .normal
        case .alignItems: full.style.alignItems = BoxAlignment(rawValue: keyword(v)) ?? .normal
        case .content: full.content = v
        case .counterReset: if case .counters(let ops) = v { full.counterReset = ops }
        case .counterIncrement: if case .counters(let ops) = v { full.counterIncrement = ops }
        case .counterSet: if case .counters(let ops) = v { full.counterSet = ops }
        case .fontFamily: if case .families(let f) = v { full.style.fontFamilies = f }
        case .fontSize:
            let parentSize = parent.style.fontSize
            switch v {
            case .keyword(let word):
                if word == "smaller" {
                    full.style.fontSize = parentSize / 1.2
                } else if word == "larger" {
                    full.style.fontSize = parentSize * 1.2
                } else {
                    full.style.fontSize = (Properties.fontSizeKeywords[word] ?? 16) * fontScale
                    full.fontSizeIsAbsolute = false
                    full.fontSizeIsMonospaceScaled = false
                }
            case .length(let l):
                var ctx = context
                ctx.fontSize = parentSize
                if case .dimension(let n, let unit) = l, unit.isAbsolute {
                    full.style.fontSize = SpecifiedLength.px(n, unit, ctx) * fontScale
                    full.fontSizeIsAbsolute = true
                    full.fontSizeIsMonospaceScaled = false
                } else {
                    full.style.fontSize = l.resolvePx(ctx, percentBase: parentSize)
                }
            default: break
            }
            full.style.fontSize = min(max(full.style.fontSize, 0), 10_000)
        case .fontWeight:
            let p = parent.style.fontWeight
            switch v {
            case .integer(let n): full.style.fontWeight = n
            case .keyword("bold"): full.style.fontWeight = 700
            case .keyword("normal"): full.style.fontWeight = 400
            case .keyword("bolder"): full.style.fontWeight = p < 350 ? 400 : p < 550 ? 700 : 900
            case .keyword("lighter"): full.style.fontWeight = p < 550 ? 100 : p < 750 ? 400 : 700
            default: break
            }
        case .fontStyle: full.style.fontStyle = FontStyle(rawValue: keyword(v)) ?? .normal
        case .fontVariantCaps: full.style.fontVariantCaps = FontVariantCaps(rawValue: keyword(v)) ?? .normal
        case .fontVariantNumeric: if case .features(let f) = v { full.variantNumeric = f }
        case .fontVariantLigatures: if case .features(let f) = v { full.variantLigatures = f }
        case .fontVariantPosition: if case .features(let f) = v { full.variantPosition = f }
        case .fontFeatureSettings: if case .features(let f) = v { full.featureSettings = f }
        case .lineHeight:
            switch v {
            case .number(let n): full.style.lineHeight = .number(n)
            case .length(let l): full.style.lineHeight = .px(l.resolvePx(context, percentBase: full.style.fontSize))
            default: full.style.lineHeight = .normal
            }
        case .color:
            if case .color(let c) = v { full.style.color = c ?? parent.style.color }
        case .textAlign:
            if keyword(v) == "-internal-center" {
                // HTML's th rule: centred only where the inherited alignment is the initial one.
                full.style.textAlign = parent.style.textAlign == .start ? .center : parent.style.textAlign
            } else {
                full.style.textAlign = TextAlign(rawValue: keyword(v)) ?? .start
            }
        case .textAlignLast: full.style.textAlignLast = TextAlignLast(rawValue: keyword(v)) ?? .auto
        case .textIndent: full.style.textIndent = lengthValue(v, context) ?? .zero
        case .textTransform: full.style.textTransform = TextTransform(rawValue: keyword(v)) ?? .none
        case .letterSpacing: full.style.letterSpacing = px(v, context)
        case .wordSpacing:
            if case .length(let l) = v { full.style.wordSpacing = l.resolvePx(context, percentBase: full.style.fontSize * 0.25) }
        case .whiteSpace: full.style.whiteSpace = WhiteSpace(rawValue: keyword(v)) ?? .normal
        case .hyphens: full.style.hyphens = Hyphens(rawValue: keyword(v)) ?? .manual
        case .direction: full.style.direction = Direction(rawValue: keyword(v)) ?? .ltr
        case .writingMode: full.style.writingMode = WritingMode(rawValue: keyword(v)) ?? .horizontalTB
        case .listStyleType: if case .listStyle(let t) = v { full.style.listStyleType = t }
        case .listStylePosition: full.style.listStylePosition = ListStylePosition(rawValue: keyword(v)) ?? .outside
        case .widows: if case .integer(let n) = v { full.style.widows = n }
        case .orphans: if case .integer(let n) = v { full.style.orphans = n }
        case .visibility: full.style.visibility = Visibility(rawValue: keyword(v)) ?? .visible
        case .wordBreak: full.style.wordBreak = WordBreak(rawValue: keyword(v)) ?? .normal
        case .borderCollapse: full.style.borderCollapse = keyword(v) == "collapse"
        case .borderSpacingHorizontal: full.style.borderSpacingHorizontal = px(v, context)
        case .borderSpacingVertical: full.style.borderSpacingVertical = px(v, context)
        case .overflowWrap: full.style.overflowWrap = OverflowWrap(rawValue: keyword(v)) ?? .normal
        case .lineBreak: full.style.lineBreak = LineBreak(rawValue: keyword(v)) ?? .auto
        case .textOrientation: full.style.textOrientation = TextOrientation(rawValue: keyword(v)) ?? .mixed
        case .textCombineUpright: full.style.textCombineUpright = keyword(v) == "all" ? .all : .none
        case .textEmphasisStyle: full.emphasisStyle = keyword(v)
        case .textEmphasisColor: if case .color(let c) = v { full.emphasisColor = c }
        case .textEmphasisPosition: full.emphasisPosition = keyword(v)
        case .hangingPunctuation: full.style.hangingPunctuation = HangingPunctuation(keyword(v))
        case .textUnderlinePosition:
            full.style.underlineUnder = keyword(v).hasPrefix("under")
            full.style.underlineRight = keyword(v).hasSuffix("right")
        case .quotes:
            switch v {
            case .quotes(let q): full.quotes = q
            case .keyword("none"): full.quotes = []
            default: full.quotes = nil
            }
        }
    }

    private func fixUp(_ full: inout FullStyle, parent: FullStyle, isRoot: Bool, pseudo: PseudoElement?) {
        var s = full.style
        s.color = full.unmultipliedColor
        Self.applyOpacity(&s, full.opacity)
        s.opacity = full.opacity
        if s.writingMode != .horizontalTB { Self.turnToHorizontal(&s) }
        if s.borderStyle.top == .none || s.borderStyle.top == .hidden { s.borderWidth.top = 0 }
        if s.borderStyle.right == .none || s.borderStyle.right == .hidden { s.borderWidth.right = 0 }
        if s.borderStyle.bottom == .none || s.borderStyle.bottom == .hidden { s.borderWidth.bottom = 0 }
        if s.borderStyle.left == .none || s.borderStyle.left == .hidden { s.borderWidth.left = 0 }
        if s.position == .absolute || s.position == .fixed { s.float = .none }
        if isRoot || s.float != .none || s.position == .absolute || s.position == .fixed {
            switch s.display {
            case .inline, .inlineBlock, .ruby, .rubyText: s.display = .block
            case .inlineTable: s.display = .table
            case .inlineFlex: s.display = .flex
            case .inlineGrid: s.display = .grid
            case .contents where isRoot: s.display = .block
            default: break
            }
        }
        // Decorations propagate to descendants (they cannot be removed by them); atomic boxes stop it.
        let atomic = s.display == .inlineBlock || s.display == .inlineTable || s.float != .none
            || s.position == .absolute || s.position == .fixed
        s.textDecoration = atomic ? full.ownDecoration : parent.style.textDecoration.union(full.ownDecoration)
        var features = full.variantNumeric + full.variantLigatures + full.variantPosition
        for setting in full.featureSettings {
            features.removeAll { $0.tag == setting.tag }
            features.append(setting)
        }
        s.fontFeatures = features
        s.textEmphasis = Cascade.emphasis(full.emphasisStyle, color: full.emphasisColor, vertical: s.writingMode != .horizontalTB)
        // Under the text in a line; on the column's left in vertical text. (Read only where there
        // are marks: splitting the keywords for every element cost 0.7% of a book's layout.)
        if s.textEmphasis != nil {
            let position = full.emphasisPosition.split(separator: " ")
            s.textEmphasis?.under = s.writingMode == .horizontalTB ? position.first == "under" : position.last == "left"
        }
        let overrides = environment.overrides
        if let family = overrides.fontFamily, !s.fontFamilies.contains("monospace"), s.fontFamilies.first != family {
            s.fontFamilies = [family] + s.fontFamilies.filter { $0 != family }
        }
        if let lineHeight = overrides.lineHeight { s.lineHeight = .number(lineHeight) }
        if let align = overrides.textAlign, [.start, .left, .justify].contains(s.textAlign) { s.textAlign = align }
        full.style = s
    }

    /// Quire sets text horizontally. A vertical document's box properties were written for lines
    /// that run down the page: turn them with the text, so its line length (`max-height` becomes
    /// `max-width`) and its spacing before and after blocks keep their meaning.
    static func turnToHorizontal(_ s: inout ComputedStyle) {
        let rightToLeft = s.writingMode == .verticalRL
        s.margin = s.margin.turnedToHorizontal(rightToLeft: rightToLeft)
        s.padding = s.padding.turnedToHorizontal(rightToLeft: rightToLeft)
        s.borderWidth = s.borderWidth.turnedToHorizontal(rightToLeft: rightToLeft)
        s.borderStyle = s.borderStyle.turnedToHorizontal(rightToLeft: rightToLeft)
        s.borderColor = s.borderColor.turnedToHorizontal(rightToLeft: rightToLeft)
        (s.width, s.height) = (s.height, s.width)
        (s.minWidth, s.minHeight) = (s.minHeight, s.minWidth)
        (s.maxWidth, s.maxHeight) = (s.maxHeight, s.maxWidth)
    }

    static func emphasis(_ style: String, color: Color?, vertical: Bool) -> TextEmphasis? {
        if style == "none" { return nil }
        if style.hasPrefix("'") { return TextEmphasis(mark: String(style.dropFirst()), color: color) }
        let parts = style.split(separator: " ")
        let open = parts.first == "open"
        let shape = parts.count > 1 ? String(parts[1]) : (vertical ? "sesame" : "circle")
        let marks: [String: (String, String)] = [
            "dot": ("•", "◦"), "circle": ("●", "○"), "double-circle": ("◉", "◎"), "triangle": ("▲", "△"), "sesame": ("﹅", "﹆"),
        ]
        guard let pair = marks[shape] else { return nil }
        return TextEmphasis(mark: open ? pair.1 : pair.0, color: color)
    }

    // MARK: Declaration sources (the CSS report)

    /// Where the winners of `PropertyID.reportedPerElement` were written, from the cascade just
    /// run (`winnerSources`): author sheets and style attributes only.
    private func reportedSources(styleText: String?) -> [PropertyID: WinnerSource] {
        var found: [PropertyID: WinnerSource] = [:]
        for property in PropertyID.reportedPerElement {
            guard var source = winnerSources![property.rawValue] else { continue }
            if source.block == WinnerSource.styleAttribute {
                guard let styleText else { continue }
                source.styleAttribute = styleText
            } else if index.sheetOrigins[Int(index.blockSheets[Int(source.block)])] != .author {
                continue
            }
            found[property] = source
        }
        return found
    }

    /// The recorded winners as the declarations written in the book.
    func writtenDeclarations() -> [Int32: [PropertyID: WrittenDeclaration]] {
        var result: [Int32: [PropertyID: WrittenDeclaration]] = [:]
        for (element, sources) in recordedSources {
            var found: [PropertyID: WrittenDeclaration] = [:]
            for (property, source) in sources {
                let block: DeclarationBlock
                let key: String
                let local: Int
                if let text = source.styleAttribute {
                    guard let attributeBlock = styleAttributeBlocks[text] else { continue }
                    (block, key, local) = (attributeBlock, "style=" + text, 0)
                } else {
                    let sheet = Int(index.blockSheets[Int(source.block)])
                    guard sheet < sheetReportKeys.count, let sheetKey = sheetReportKeys[sheet] else { continue }
                    (block, key, local) = (index.blocks[Int(source.block)], sheetKey, Int(source.block - index.sheetBlockBases[sheet]))
                }
                let at = Int(source.declaration)
                guard at < block.writtenIndices.count, block.writtenIndices[at] >= 0 else { continue }
                found[property] = WrittenDeclaration(source: key, block: local, index: Int(block.writtenIndices[at]), property: block.writtenNames[at])
            }
            if !found.isEmpty { result[element] = found }
        }
        return result
    }

    // MARK: The document walk

    /// The ::marker, ::before, ::first-letter and ::first-line styles of an element that has any.
    /// Apart from `run`'s loop (never inlined), so that the other elements make no PseudoStyles (3 KB).
    @inline(never)
    private func addPseudoStyles(
        element e: Int32, result: CascadeResult, generated: inout GeneratedContentState, extras: inout [Int32: PseudoStyles]
    ) {
        var extra = PseudoStyles()
        generated.markerAndBefore(element: e, result: result, fullStyles: fullStyles, extra: &extra)
        if result.firstLetter >= 0 { extra.firstLetter = fullStyles[Int(result.firstLetter)].style }
        if result.firstLine >= 0 { extra.firstLine = fullStyles[Int(result.firstLine)].style }
        if extra.before != nil || extra.marker != nil || extra.firstLetter != nil || extra.firstLine != nil {
            extras[e] = extra
        }
    }

    func run(fontFaces: [FontFaceRule], warnings: [Warning], pageRule: PageRule?) -> DocumentStyles {
        let n = tree.nodeCount
        var nodeFull = [Int32](repeating: -1, count: n)
        var extras: [Int32: PseudoStyles] = [:]
        var generated = GeneratedContentState(table: table)
        var winners = [DeclValue?](repeating: nil, count: PropertyID.allCases.count)
        let rootFull = intern(FullStyle())
        _ = rootFull
        for index in 0..<n {
            let node = NodeID(Int32(index))
            guard let element = tree.element(node) else {
                // Text nodes carry their parent's style.
                if let parent = tree.parent(of: node) { nodeFull[index] = nodeFull[Int(parent.index)] }
                continue
            }
            let e = Int32(index)
            let parentIndex = table.parent[index]
            let isRoot = parentIndex < 0
            let parentFullIndex = isRoot ? Int32(-1) : nodeFull[Int(parentIndex)]
            ancestors.moveTo(parent: parentIndex)
            let matched = matchedRules(e)
            attributeKeyBuffer.removeAll(keepingCapacity: true)
            var hashable = true
            if !self.index.ancestorAttributes.isEmpty {
                for attribute in element.attributes {
                    let name = AncestorFilter.baseName(attribute.name.local)
                    if self.index.ancestorAttributes.contains(name) {
                        hashable = AncestorFilter.attributeKeys(name: name, value: attribute.value, into: &attributeKeyBuffer) && hashable
                    }
                }
            }
            ancestors.push(
                e, tag: table.isHTML[index] ? table.localName[index] : SelectorMatcher.lowerASCII(table.localName[index]), id: table.id[index],
                classes: table.classes[index], attributeKeys: hashable ? attributeKeyBuffer : nil)
            let styleText = styleAttributes ? element.attribute("style") : nil
            let hintList = hints(element, isHTML: table.isHTML[index], localName: table.localName[index])
            let language = element.attribute("lang", namespace: Namespace.xml) ?? element.attribute("lang")
            let key = CascadeKey(
                parent: parentFullIndex, rootFontSize: isRoot ? 0 : rootFontSize, rules: matched, styleAttribute: styleText, hints: hintList,
                language: language, isRoot: isRoot)
            let result: CascadeResult
            if let cached = cache[key] {
                result = cached
                if isRoot { rootFontSize = fullStyles[Int(cached.full)].style.fontSize }
            } else {
                let parent = parentFullIndex >= 0 ? fullStyles[Int(parentFullIndex)] : FullStyle()
                var styleBlock: DeclarationBlock? = nil
                if let styleText {
                    if let block = styleAttributeBlocks[styleText] {
                        styleBlock = block
                    } else {
                        var noCounts: DeclarationCounts? = countsStyleAttributes ? DeclarationCounts() : nil
                        let block = SheetCompiler.declarationBlock(ComponentParser.parse(styleText).0, counts: &noCounts)
                        styleAttributeBlocks[styleText] = block
                        styleBlock = block
                    }
                }
                for k in winners.indices { winners[k] = nil }
                if winnerSources != nil { for k in winnerSources!.indices { winnerSources![k] = nil } }
                var custom: [String: [CV]] = [:]
                _ = cascade(rules: matched, pseudo: nil, hints: hintList, styleBlock: styleBlock, winners: &winners, custom: &custom)
                // Elements with the same key have the same winners, so their sources are kept with it.
                if winnerSources != nil { sourcesByKey[key] = reportedSources(styleText: styleText) }
                let full = compute(winners: winners, custom: custom, parent: parent, isRoot: isRoot, language: language, pseudo: nil)
                if isRoot { rootFontSize = full.style.fontSize }
                var r = CascadeResult(full: intern(full))
                // Only list items have a marker (the user-agent sheet's `::marker` rule matches
                // every element): a `::marker` rule gives any other element no pseudo-element.
                let isListItem = full.style.display == .listItem
                let hasPseudo = matched.contains { id in
                    guard let pseudo = self.index.rules[Int(id)].selector.pseudoElement else { return false }
                    return pseudo != .marker || isListItem
                }
                if hasPseudo || isListItem {
                    for kind in [PseudoElement.before, .after, .marker, .firstLetter, .firstLine] {
                        if kind == .marker && !isListItem { continue }
                        for k in winners.indices { winners[k] = nil }
                        var pseudoCustom: [String: [CV]] = [:]
                        let any = cascade(rules: matched, pseudo: kind, hints: [], styleBlock: nil, winners: &winners, custom: &pseudoCustom)
                        guard any || kind == .marker else { continue }
                        let pseudoFull = compute(winners: winners, custom: pseudoCustom, parent: full, isRoot: false, language: nil, pseudo: kind)
                        let index = intern(pseudoFull)
                        switch kind {
                        case .before: r.before = index
                        case .after: r.after = index
                        case .marker: r.marker = index
                        case .firstLetter: r.firstLetter = index
                        case .firstLine: r.firstLine = index
                        case .other: break
                        }
                    }
                }
                cache[key] = r
                result = r
            }
            if winnerSources != nil, let sources = sourcesByKey[key], !sources.isEmpty { recordedSources[e] = sources }
            nodeFull[index] = result.full
            // Counters and generated content, in document order.
            generated.closeUntil(parent: parentIndex, fullStyles: fullStyles, extras: &extras)
            generated.enter(element: e, result: result, fullStyles: fullStyles)
            if result.marker >= 0 || result.before >= 0 || result.firstLetter >= 0 || result.firstLine >= 0 {
                addPseudoStyles(element: e, result: result, generated: &generated, extras: &extras)
            }
        }
        generated.closeUntil(parent: -1, fullStyles: fullStyles, extras: &extras)
        // Distinct public styles, shared by every node that has them.
        var computed: [ComputedStyle] = []
        var computedIndex: [ComputedStyle: Int32] = [:]
        // By the styles this document uses: `fullStyles` holds every document's the worker styled.
        var fullToComputed: [Int32: Int32] = [:]
        var nodeStyle = [Int32](repeating: -1, count: n)
        for index in 0..<n where nodeFull[index] >= 0 {
            let f = nodeFull[index]
            if let known = fullToComputed[f] {
                nodeStyle[index] = known
                continue
            }
            let style = fullStyles[Int(f)].style
            let computedIndexOfFull: Int32
            if let existing = computedIndex[style] {
                computedIndexOfFull = existing
            } else {
                computedIndexOfFull = Int32(computed.count)
                computedIndex[style] = computedIndexOfFull
                computed.append(style)
            }
            fullToComputed[f] = computedIndexOfFull
            nodeStyle[index] = computedIndexOfFull
        }
        var styles = DocumentStyles(
            computed: computed, nodeStyle: nodeStyle, extras: extras.mapValues { Shared($0) }, fontFaces: fontFaces, warnings: warnings,
            pageRule: pageRule)
        if let (memo, scope) = memo {
            memo.keep(StyleMemo.Kept(fullStyles: fullStyles, fullIndex: fullIndex, cache: cache), for: scope)
            fullStyles = []
            fullIndex = [:]
            cache = [:]
        }
        if winnerSources != nil { styles.writtenDeclarations = writtenDeclarations() }
        return styles
    }
}

enum VarSubstitution {
    /// Substituted values grow no larger than this (guards `--a: var(--b) var(--b)` chains).
    static let maxSubstitutedValues = 10_000

    static func substitute(_ values: [CV], _ custom: [String: [CV]]) -> [CV]? {
        substitute(values, lookup: { custom[$0] })
    }

    static func substitute(_ values: [CV], lookup: (String) -> [CV]?) -> [CV]? {
        var budget = maxSubstitutedValues
        return substitute(values, lookup: lookup, budget: &budget, depth: 0)
    }

    private static func substitute(_ values: [CV], lookup: (String) -> [CV]?, budget: inout Int, depth: Int) -> [CV]? {
        guard depth < 32 else { return nil }
        var result: [CV] = []
        for v in values {
            budget -= 1
            guard budget > 0 else { return nil }
            switch v {
            case .function(let name, let args) where name.lowercased() == "var":
                let parts = args.splitCommas()
                guard let nameValue = parts.first?.significant.first?.ident, nameValue.hasPrefix("--") else { return nil }
                if let value = lookup(nameValue), !value.isEmpty {
                    budget -= value.count
                    guard budget > 0 else { return nil }
                    result += value
                } else if parts.count > 1 {
                    // The fallback is everything after the first comma.
                    var fallback: [CV] = []
                    var seenComma = false
                    for a in args {
                        if !seenComma {
                            if case .token(.comma) = a { seenComma = true }
                            continue
                        }
                        fallback.append(a)
                    }
                    guard let substituted = substitute(fallback, lookup: lookup, budget: &budget, depth: depth + 1) else { return nil }
                    result += substituted
                } else {
                    return nil
                }
            case .function(let name, let args):
                guard let inner = substitute(args, lookup: lookup, budget: &budget, depth: depth + 1) else { return nil }
                result.append(.function(name, inner))
            case .block(let open, let contents):
                guard let inner = substitute(contents, lookup: lookup, budget: &budget, depth: depth + 1) else { return nil }
                result.append(.block(open, inner))
            default:
                result.append(v)
            }
        }
        return result
    }
}
