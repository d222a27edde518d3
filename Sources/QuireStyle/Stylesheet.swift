import QuireCore

/// Bounds on hostile stylesheets. Anything beyond is skipped with a warning, never an error.
public enum CSSLimits {
    /// Nested @media/@supports blocks deeper than this are skipped (`--max-css-nesting`).
    public static let maxConditionalNesting = Limits.defaultMaxCSSNesting
    /// Selectors with more compounds are invalid (their rule drops).
    public static let maxSelectorCompounds = SelectorParser.maxCompounds
    /// Declarations past this count in one block are dropped.
    public static let maxDeclarationsPerRule = 10_000
    /// Larger stylesheets are ignored (`--max-css-size`).
    public static let maxStylesheetBytes = Limits.defaultMaxCSSSize
    /// @import chains deeper than this stop.
    public static let maxImportDepth = 8
    /// @imports compiled for one stylesheet in all, however they nest.
    public static let maxImportsPerSheet = 256
    /// Blocks and functions nested deeper than this in the token stream are skipped whole.
    public static let maxComponentNesting = ComponentParser.maxNestingDepth
    /// Rules kept from one stylesheet (with its imports) (`--max-css-rules`).
    public static let maxRulesPerSheet = Limits.defaultMaxCSSRules
}

public struct FontSource: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// An archive path, resolved against the stylesheet.
        case url(String)
        /// A `local()` font name.
        case local(String)
    }
    public var kind: Kind
    public var format: String?

    public init(kind: Kind, format: String? = nil) {
        self.kind = kind
        self.format = format
    }
}

public struct FontFaceRule: Sendable, Hashable {
    public var family: String
    public var weight: ClosedRange<Int>
    public var style: FontStyle
    public var sources: [FontSource]
    public var unicodeRanges: [ClosedRange<UInt32>]

    public init(
        family: String, weight: ClosedRange<Int> = 400...400, style: FontStyle = .normal, sources: [FontSource] = [],
        unicodeRanges: [ClosedRange<UInt32>] = []
    ) {
        self.family = family
        self.weight = weight
        self.style = style
        self.sources = sources
        self.unicodeRanges = unicodeRanges
    }
}

/// The book's `@page` rule (unqualified `@page` only), in CSS px.
public struct PageRule: Sendable, Hashable {
    public var width: Double?
    public var height: Double?
    /// nil sides were not given (or `auto`).
    public var margin: Edges<Length?>

    public init(width: Double? = nil, height: Double? = nil, margin: Edges<Length?> = Edges(all: nil)) {
        self.width = width
        self.height = height
        self.margin = margin
    }
}

enum Origin: Int, Hashable, Sendable, Comparable {
    case userAgent = 0, user = 1, author = 2
    static func < (a: Origin, b: Origin) -> Bool { a.rawValue < b.rawValue }
}

struct CompiledRule: Sendable {
    var selector: ComplexSelector
    var block: Int32
}

/// A parsed stylesheet with its imports flattened in place, media and supports already evaluated.
struct StyleSheet: Sendable {
    var rules: [CompiledRule] = []
    var blocks: [DeclarationBlock] = []
    var fontFaces: [FontFaceRule] = []
    var pageRule: PageRule? = nil
    var warnings: [Warning] = []
    /// A media query here answered differently at the reference page (StyleEnvironment.reference).
    var mediaDiffersFromReference = false
}

/// Counts for the CSS report, per property name.
struct DeclarationCounts: Sendable {
    var byProperty: [String: (applied: Int, unsupported: Int, invalid: Int)] = [:]

    mutating func add(_ name: String, _ status: DeclarationStatus) {
        var entry = byProperty[name] ?? (0, 0, 0)
        switch status {
        case .applied: entry.applied += 1
        case .unsupported: entry.unsupported += 1
        case .invalid: entry.invalid += 1
        }
        byProperty[name] = entry
    }
}

struct SheetCompiler {
    let environment: StyleEnvironment
    let loadResource: (String) -> [UInt8]?
    let limits: Limits
    var sheet = StyleSheet()
    /// When set, every declaration is counted, including those in non-matching @media blocks.
    var counts: DeclarationCounts? = nil
    private var importStack: [String] = []
    /// Sheets compiled through @import so far: a few sheets that all import each other reach
    /// n!/(n−depth)! imports within the depth limit.
    private var importsCompiled = 0

    init(environment: StyleEnvironment, loadResource: @escaping (String) -> [UInt8]?, counting: Bool = false, limits: Limits = .standard) {
        self.environment = environment
        self.loadResource = loadResource
        self.limits = limits
        if counting { counts = DeclarationCounts() }
    }

    static func decode(_ bytes: [UInt8]) -> String {
        var slice = bytes[...]
        if slice.starts(with: [0xEF, 0xBB, 0xBF]) { slice = slice.dropFirst(3) }
        return String(decoding: slice, as: UTF8.self)
    }

    mutating func compile(bytes: [UInt8], path: String) {
        guard bytes.count <= limits.maxCSSSize else {
            sheet.warnings.append(Warning("css-too-large", "\(path): \(bytes.count) bytes, over the stylesheet limit; ignored"))
            return
        }
        compile(text: SheetCompiler.decode(bytes), path: path)
    }

    mutating func compile(text: String, path: String) {
        importStack.append(path)
        defer { importStack.removeLast() }
        let (values, problems) = ComponentParser.parse(text)
        if problems.skippedDeepBlocks > 0 {
            sheet.warnings.append(Warning("css-nesting", "\(path): blocks nested too deeply were skipped"))
        }
        var namespaces = NamespaceState()
        compileRules(RuleParser.rules(values, topLevel: true), path: path, namespaces: &namespaces, nesting: 0, active: true, topLevel: true)
    }

    struct NamespaceState {
        var prefixes: [String: String] = ["xml": "http://www.w3.org/XML/1998/namespace"]
        var defaultNamespace: String? = nil
        var selectorParser: SelectorParser { SelectorParser(namespaces: prefixes, defaultNamespace: defaultNamespace) }
    }

    private mutating func compileRules(
        _ rules: [RawRule], path: String, namespaces: inout NamespaceState, nesting: Int, active: Bool, topLevel: Bool
    ) {
        var parser = namespaces.selectorParser
        for rule in rules {
            switch rule {
            case .qualified(let prelude, let block):
                compileStyleRule(prelude: prelude, block: block, parser: parser, active: active, path: path)
            case .at(let name, let prelude, let block):
                switch name {
                case "import":
                    guard topLevel, active else { continue }
                    compileImport(prelude, path: path)
                case "namespace":
                    let items = prelude.significant
                    var prefix: String? = nil
                    var uriItem = items.first
                    if items.count == 2, let p = items[0].ident {
                        prefix = p
                        uriItem = items[1]
                    }
                    var uri: String? = nil
                    switch uriItem {
                    case .token(.string(let s))?, .token(.url(let s))?: uri = s
                    case .function(let f, let args)? where f.lowercased() == "url":
                        if case .token(.string(let s))? = args.significant.first { uri = s }
                    default: break
                    }
                    guard let uri else { continue }
                    if let prefix { namespaces.prefixes[prefix] = uri } else { namespaces.defaultNamespace = uri }
                    parser = namespaces.selectorParser
                case "media", "supports", "document", "-moz-document", "layer", "container", "scope":
                    guard let block else { continue }
                    if nesting + 1 > limits.maxCSSNesting {
                        if !sheet.warnings.contains(where: { $0.code == "css-nesting-limit" }) {
                            sheet.warnings.append(
                                Warning("css-nesting-limit", "\(path): conditional rules nested deeper than \(limits.maxCSSNesting) were skipped"))
                        }
                        continue
                    }
                    let matches: Bool
                    switch name {
                    case "media":
                        matches = MediaQueries.matches(prelude, environment)
                        if matches != MediaQueries.matches(prelude, environment.referenceMedia) { sheet.mediaDiffersFromReference = true }
                    case "supports": matches = SupportsCondition.matches(prelude)
                    case "layer": matches = true  // layers: treated as unlayered (order kept)
                    case "container", "scope": matches = false
                    default: matches = false
                    }
                    if !active && counts == nil { continue }
                    if !(active && matches) && counts == nil { continue }
                    var inner = namespaces
                    compileRules(
                        RuleParser.rules(block, topLevel: false), path: path, namespaces: &inner, nesting: nesting + 1,
                        active: active && matches, topLevel: false)
                case "font-face":
                    guard active, let block else { continue }
                    if let face = fontFace(block, path: path) { sheet.fontFaces.append(face) }
                case "page":
                    guard active, let block else { continue }
                    if prelude.significant.isEmpty { mergePage(block) }
                default:
                    continue  // unknown at-rules are skipped whole
                }
            }
        }
    }

    private mutating func compileStyleRule(prelude: [CV], block: [CV], parser: SelectorParser, active: Bool, path: String) {
        let compiled = SheetCompiler.declarationBlock(block, counts: &counts, base: path)
        guard active, let selectors = parser.parseList(prelude) else { return }
        guard !compiled.declarations.isEmpty || !compiled.custom.isEmpty else { return }
        guard sheet.rules.count < limits.maxCSSRules else {
            if !sheet.warnings.contains(where: { $0.code == "css-rules-limit" }) {
                sheet.warnings.append(Warning("css-rules-limit", "\(path): rules past the first \(limits.maxCSSRules) were dropped"))
            }
            return
        }
        let blockIndex = Int32(sheet.blocks.count)
        sheet.blocks.append(compiled)
        for selector in selectors where selector.pseudoElement != .other {
            sheet.rules.append(CompiledRule(selector: selector, block: blockIndex))
        }
    }

    /// Parses a declaration list; counts statuses when a report is being built. With `base` (the
    /// style sheet's archive path), relative `url()`s become root-relative archive paths, since
    /// they are relative to the sheet and not to the document the rule styles.
    static func declarationBlock(_ values: [CV], counts: inout DeclarationCounts?, base: String? = nil) -> DeclarationBlock {
        let (raws, _) = RuleParser.declarations(values, limit: CSSLimits.maxDeclarationsPerRule)
        var block = DeclarationBlock()
        for (written, var raw) in raws.enumerated() {
            if let base, !base.isEmpty { raw.value = raw.value.map { resolvingURL($0, against: base) } }
            let (status, decls, custom) = Properties.compile(raw)
            counts?.add(raw.name, status)
            if let custom {
                block.custom.append(custom)
                if custom.important { block.hasImportant = true } else { block.hasNormal = true }
            }
            for decl in decls {
                block.declarations.append(decl)
                if decl.important { block.hasImportant = true } else { block.hasNormal = true }
                if counts != nil {
                    // Only what the report counts as applied can turn out unhonoured on an element.
                    block.writtenIndices.append(status == .applied ? Int32(written) : -1)
                    block.writtenNames.append(raw.name)
                }
            }
        }
        return block
    }

    private mutating func compileImport(_ prelude: [CV], path: String) {
        let items = prelude.significant
        var href: String? = nil
        switch items.first {
        case .token(.string(let s))?, .token(.url(let s))?: href = s
        case .function(let f, let args)? where f.lowercased() == "url":
            if case .token(.string(let s))? = args.significant.first { href = s }
        default: break
        }
        guard let href, let target = ArchivePath.resolve(href, against: path) else { return }
        // Media, layer() and supports() conditions after the URL.
        var rest = Array(items.dropFirst())
        if let first = rest.first {
            if first.lowerIdent == "layer" { rest.removeFirst() }
            if case .function(let f, _) = first, f.lowercased() == "layer" { rest.removeFirst() }
        }
        if case .function(let f, let args)? = rest.first, f.lowercased() == "supports" {
            rest.removeFirst()
            guard SupportsCondition.matches([.block("(", args)]) else { return }
        }
        if !rest.isEmpty, MediaQueries.matches(rest, environment) != MediaQueries.matches(rest, environment.referenceMedia) {
            sheet.mediaDiffersFromReference = true
        }
        if !rest.isEmpty, !MediaQueries.matches(rest, environment) { return }
        guard !importStack.contains(target) else {
            sheet.warnings.append(Warning("css-import-cycle", "\(path): @import of \(target) is a cycle; skipped"))
            return
        }
        guard importsCompiled < CSSLimits.maxImportsPerSheet else {
            if !sheet.warnings.contains(where: { $0.code == "css-import-limit" }) {
                sheet.warnings.append(Warning("css-import-limit", "\(path): more than \(CSSLimits.maxImportsPerSheet) @imports; the rest skipped"))
            }
            return
        }
        importsCompiled += 1
        guard importStack.count < CSSLimits.maxImportDepth else {
            sheet.warnings.append(Warning("css-import-depth", "\(path): @import deeper than \(CSSLimits.maxImportDepth); skipped"))
            return
        }
        guard let bytes = loadResource(target) else {
            sheet.warnings.append(Warning("css-missing", "\(path): imported stylesheet \(target) not found"))
            return
        }
        compile(bytes: bytes, path: target)
    }

    static func resolvingURL(_ v: CV, against base: String) -> CV {
        func resolved(_ href: String) -> String? {
            guard DataURL(href) == nil, let path = ArchivePath.resolve(href, against: base) else { return nil }
            return "/" + path
        }
        switch v {
        case .token(.url(let href)):
            return resolved(href).map { .token(.url($0)) } ?? v
        case .function(let name, let args) where name.lowercased() == "url":
            if case .token(.string(let href))? = args.significant.first, let path = resolved(href) { return .token(.url(path)) }
            return v
        default:
            return v
        }
    }

    private mutating func fontFace(_ block: [CV], path: String) -> FontFaceRule? {
        let (raws, _) = RuleParser.declarations(block, limit: 100)
        var face = FontFaceRule(family: "")
        for raw in raws {
            let values = raw.value.significant
            switch raw.name {
            case "font-family":
                face.family = Properties.families(values)?.first ?? ""
            case "src":
                for part in raw.value.splitCommas() {
                    var source: FontSource? = nil
                    for v in part.significant {
                        switch v {
                        case .token(.url(let href)):
                            source = ArchivePath.resolve(href, against: path).map { FontSource(kind: .url($0)) }
                        case .function(let f, let args):
                            let name = f.lowercased()
                            let argument: String? = {
                                let items = args.significant
                                if case .token(.string(let s))? = items.first { return s }
                                let words = items.compactMap(\.ident)
                                return words.isEmpty ? nil : words.joined(separator: " ")
                            }()
                            if name == "url", let href = argument {
                                source = ArchivePath.resolve(href, against: path).map { FontSource(kind: .url($0)) }
                            } else if name == "local", let local = argument {
                                source = FontSource(kind: .local(local))
                            } else if name == "format", let format = argument {
                                source?.format = format.lowercased()
                            }
                        default: break
                        }
                    }
                    if let source { face.sources.append(source) }
                }
            case "font-weight":
                var weights: [Int] = []
                for v in values {
                    switch v {
                    case .token(.number(let n, _)): weights.append(Int(max(1, min(1000, n))))
                    case .token(.ident(let s)) where s.lowercased() == "bold": weights.append(700)
                    case .token(.ident(let s)) where s.lowercased() == "normal": weights.append(400)
                    default: break
                    }
                }
                if let low = weights.first { face.weight = low...max(low, weights.last!) }
            case "font-style":
                switch values.first?.lowerIdent {
                case "italic": face.style = .italic
                case "oblique": face.style = .oblique
                default: face.style = .normal
                }
            case "unicode-range":
                for v in values {
                    if case .token(.unicodeRange(let a, let b)) = v, a <= b { face.unicodeRanges.append(a...b) }
                }
            default: break
            }
        }
        return face.family.isEmpty || face.sources.isEmpty ? nil : face
    }

    static let pageSizes: [String: (Double, Double)] = [
        "a5": (148, 210), "a4": (210, 297), "a3": (297, 420), "b5": (176, 250), "b4": (250, 353),
        "jis-b5": (182, 257), "jis-b4": (257, 364), "letter": (215.9, 279.4), "legal": (215.9, 355.6),
        "ledger": (279.4, 431.8),
    ]

    private mutating func mergePage(_ block: [CV]) {
        var page = sheet.pageRule ?? PageRule()
        let context = LengthContext(fontSize: 16, rootFontSize: 16, viewportWidth: environment.viewportWidth, viewportHeight: environment.viewportHeight)
        let (raws, _) = RuleParser.declarations(block, limit: 100)
        for raw in raws {
            let values = raw.value.significant
            if raw.name == "size" {
                var lengths: [Double] = []
                var named: (Double, Double)? = nil
                var landscape = false
                for v in values {
                    if let word = v.lowerIdent {
                        if let size = SheetCompiler.pageSizes[word] { named = (size.0 * 96 / 25.4, size.1 * 96 / 25.4) }
                        if word == "landscape" { landscape = true }
                    } else if let l = Properties.length(v, negative: false, percent: false) {
                        lengths.append(l.resolve(context).resolve(against: 0))
                    }
                }
                if lengths.count >= 1 { named = (lengths[0], lengths.count > 1 ? lengths[1] : lengths[0]) }
                if var size = named {
                    if landscape && size.0 < size.1 { size = (size.1, size.0) }
                    page.width = size.0
                    page.height = size.1
                }
                continue
            }
            guard raw.name.hasPrefix("margin"), let pairs = Properties.parse(raw.name, values) else { continue }
            for (id, value) in pairs {
                var length: Length? = nil
                if case .length(let l) = value { length = l.resolve(context) }
                switch id {
                case .marginTop: page.margin.top = length
                case .marginRight: page.margin.right = length
                case .marginBottom: page.margin.bottom = length
                case .marginLeft: page.margin.left = length
                default: break
                }
            }
        }
        sheet.pageRule = page
    }
}

enum MediaQueries {
    /// A media query list (the prelude of @media, or a `media` attribute's text).
    static func matches(_ prelude: [CV], _ environment: StyleEnvironment) -> Bool {
        let parts = prelude.splitCommas().map { $0.significant }
        if parts.count == 1 && parts[0].isEmpty { return true }
        return parts.contains { query($0, environment) }
    }

    static func matches(text: String, _ environment: StyleEnvironment) -> Bool {
        matches(ComponentParser.parse(text).0, environment)
    }

    private static func query(_ items: [CV], _ environment: StyleEnvironment) -> Bool {
        guard !items.isEmpty else { return false }
        var i = 0
        var negate = false
        if let word = items[0].lowerIdent, word == "not" || word == "only" {
            // `not (feature)` is a condition; `not screen` negates a whole query.
            if items.count > 1, items[1].ident != nil {
                negate = word == "not"
                i = 1
            }
        }
        var result = true
        if let type = items[i].lowerIdent, type != "not" {
            result = ["all", "screen", "print"].contains(type)
            i += 1
            if i < items.count {
                guard items[i].lowerIdent == "and", i + 1 < items.count else { return false }
                guard let rest = condition(Array(items[(i + 1)...]), environment) else { return false }
                result = result && rest
            }
        } else {
            guard let value = condition(Array(items[i...]), environment) else { return false }
            result = value
        }
        return negate ? !result : result
    }

    /// `(a) and (b)`, `(a) or (b)`, `not (a)`; nil if malformed.
    static func condition(_ items: [CV], _ environment: StyleEnvironment) -> Bool? {
        if items.first?.lowerIdent == "not" {
            guard items.count == 2, let value = term(items[1], environment) else { return nil }
            return !value
        }
        guard let first = items.first, var result = term(first, environment) else { return nil }
        var i = 1
        var op: String? = nil
        while i < items.count {
            guard let word = items[i].lowerIdent, word == "and" || word == "or", op == nil || op == word,
                i + 1 < items.count, let value = term(items[i + 1], environment)
            else { return nil }
            op = word
            result = word == "and" ? (result && value) : (result || value)
            i += 2
        }
        return result
    }

    private static func term(_ v: CV, _ environment: StyleEnvironment) -> Bool? {
        guard case .block("(", let contents) = v else { return nil }
        let items = contents.significant
        if let first = items.first, case .block("(", _) = first { return condition(items, environment) }
        if items.first?.lowerIdent == "not" { return condition(items, environment) }
        return feature(items, environment)
    }

    private static func length(_ v: CV, _ environment: StyleEnvironment) -> Double? {
        let context = LengthContext(fontSize: 16, rootFontSize: 16, viewportWidth: environment.viewportWidth, viewportHeight: environment.viewportHeight)
        guard let l = Properties.length(v, percent: false) else { return nil }
        return l.resolve(context).resolve(against: 0)
    }

    private static func featureValue(_ name: String, _ environment: StyleEnvironment) -> Double? {
        switch name {
        case "width", "device-width": return environment.viewportWidth
        case "height", "device-height": return environment.viewportHeight
        case "aspect-ratio", "device-aspect-ratio": return environment.viewportWidth / max(environment.viewportHeight, 1)
        case "color": return environment.grayscale ? 0 : 8
        case "monochrome": return environment.grayscale ? 8 : 0
        case "color-index", "grid": return 0
        case "resolution", "-webkit-device-pixel-ratio", "device-pixel-ratio": return 1
        default: return nil
        }
    }

    private static func value(_ items: [CV], for name: String, _ environment: StyleEnvironment) -> Double? {
        if name.hasSuffix("aspect-ratio") {
            let numbers = items.compactMap { v -> Double? in
                if case .token(.number(let n, _)) = v { return n }
                return nil
            }
            if numbers.count == 2, numbers[1] != 0 { return numbers[0] / numbers[1] }
            if numbers.count == 1 { return numbers[0] }
            return nil
        }
        guard items.count == 1 else { return nil }
        let v = items[0]
        if name.hasSuffix("resolution") || name.hasSuffix("pixel-ratio") {
            switch v {
            case .token(.number(let n, _)): return n
            case .token(.dimension(let n, let unit)):
                switch unit.lowercased() {
                case "dppx", "x": return n
                case "dpi": return n / 96
                case "dpcm": return n * 2.54 / 96
                default: return nil
                }
            default: return nil
            }
        }
        if case .token(.number(let n, _)) = v, name == "color" || name == "monochrome" || name == "color-index" || name == "grid" {
            return n
        }
        return length(v, environment)
    }

    private static func feature(_ items: [CV], _ environment: StyleEnvironment) -> Bool? {
        guard let first = items.first else { return nil }
        // Range syntax: `width >= 600px`, `400px < width < 800px`.
        if items.contains(where: { if case .token(.delim(let d)) = $0 { return d == "<" || d == ">" || d == "=" } else { return false } }),
            !items.contains(where: { if case .token(.colon) = $0 { return true } else { return false } })
        {
            return range(items, environment)
        }
        guard let rawName = first.lowerIdent else { return nil }
        var name = rawName
        if name.hasPrefix("-webkit-") && name.contains("device-pixel-ratio") { name = String(name.dropFirst(8)) }
        if items.count == 1 {
            switch name {
            case "color", "monochrome", "color-index", "grid":
                return (featureValue(name, environment) ?? 0) > 0
            case "width", "height", "device-width", "device-height", "orientation", "aspect-ratio", "resolution":
                return true
            case "hover", "pointer", "any-hover", "any-pointer", "scan", "update", "prefers-reduced-motion",
                "inverted-colors", "forced-colors", "prefers-contrast", "overflow-block", "overflow-inline":
                return false
            default:
                return false  // unknown features never match
            }
        }
        guard items.count >= 3, case .token(.colon) = items[1] else { return nil }
        let rest = Array(items[2...])
        var prefix = ""
        if name.hasPrefix("min-") || name.hasPrefix("max-") {
            prefix = String(name.prefix(4))
            name = String(name.dropFirst(4))
        }
        switch name {
        case "orientation":
            let portrait = environment.viewportHeight >= environment.viewportWidth
            return rest.first?.lowerIdent == (portrait ? "portrait" : "landscape")
        case "prefers-color-scheme": return rest.first?.lowerIdent == "light"
        case "hover", "any-hover", "pointer", "any-pointer": return rest.first?.lowerIdent == "none"
        case "update": return rest.first?.lowerIdent == "none"
        case "overflow-block": return rest.first?.lowerIdent == "paged"
        case "prefers-reduced-motion": return rest.first?.lowerIdent == "no-preference"
        case "scripting": return rest.first?.lowerIdent == "none"
        default: break
        }
        guard let actual = featureValue(name, environment), let wanted = value(rest, for: name, environment) else {
            return false
        }
        switch prefix {
        case "min-": return actual >= wanted - 1e-9
        case "max-": return actual <= wanted + 1e-9
        default: return abs(actual - wanted) < 1e-6
        }
    }

    private static func range(_ items: [CV], _ environment: StyleEnvironment) -> Bool? {
        // Tokens: values and comparison operators (`<`, `<=`, `>`, `>=`, `=`).
        var operands: [[CV]] = [[]]
        var operators: [String] = []
        var i = 0
        while i < items.count {
            if case .token(.delim(let d)) = items[i], d == "<" || d == ">" || d == "=" {
                var op = String(d)
                if d != "=", i + 1 < items.count, case .token(.delim("=")) = items[i + 1] {
                    op += "="
                    i += 1
                }
                operators.append(op)
                operands.append([])
            } else {
                operands[operands.count - 1].append(items[i])
            }
            i += 1
        }
        guard operands.count == operators.count + 1, operands.count <= 3 else { return nil }
        var featureName: String? = nil
        var numbers: [Double?] = []
        for operand in operands {
            if operand.count == 1, let name = operand[0].lowerIdent, featureValue(name, environment) != nil {
                featureName = name
                numbers.append(featureValue(name, environment))
            } else {
                numbers.append(nil)
            }
        }
        guard let name = featureName else { return false }
        var values: [Double] = []
        for (k, operand) in operands.enumerated() {
            if let n = numbers[k] {
                values.append(n)
            } else {
                guard let v = value(operand, for: name, environment) else { return nil }
                values.append(v)
            }
        }
        for (k, op) in operators.enumerated() {
            let a = values[k], b = values[k + 1]
            let ok: Bool
            switch op {
            case "<": ok = a < b
            case "<=": ok = a <= b + 1e-9
            case ">": ok = a > b
            case ">=": ok = a >= b - 1e-9
            default: ok = abs(a - b) < 1e-6
            }
            if !ok { return false }
        }
        return true
    }
}

enum SupportsCondition {
    static func matches(_ prelude: [CV]) -> Bool {
        condition(prelude.significant, depth: 0) ?? false
    }

    private static func condition(_ items: [CV], depth: Int) -> Bool? {
        guard depth < 32, let first = items.first else { return nil }
        if first.lowerIdent == "not" {
            guard items.count == 2, let value = term(items[1], depth: depth) else { return nil }
            return !value
        }
        guard var result = term(first, depth: depth) else { return nil }
        var i = 1
        while i + 1 < items.count {
            guard let word = items[i].lowerIdent, word == "and" || word == "or",
                let value = term(items[i + 1], depth: depth)
            else { return nil }
            result = word == "and" ? (result && value) : (result || value)
            i += 2
        }
        return i == items.count ? result : nil
    }

    private static func term(_ v: CV, depth: Int) -> Bool? {
        switch v {
        case .block("(", let contents):
            let items = contents.significant
            if let first = items.first, first.lowerIdent == "not" || { if case .block = first { return true } else { return false } }() {
                return condition(items, depth: depth + 1)
            }
            // A declaration.
            guard let name = items.first?.ident, items.count >= 3, case .token(.colon) = items[1] else { return false }
            var trimmed = Array(contents.drop { $0.isWhitespace })
            trimmed.removeFirst()  // the name
            let value = Array(trimmed.drop { $0.isWhitespace }.dropFirst())
            let raw = RawDeclaration(name: name.lowercased(), value: value, important: false)
            let (status, _, _) = Properties.compile(raw)
            return status == .applied
        case .function(let name, let args):
            if name.lowercased() == "selector" {
                return SelectorParser(namespaces: [:], defaultNamespace: nil).parseList(args) != nil
            }
            return false
        default:
            return nil
        }
    }
}

extension SheetCompiler {
    /// The declarations of `{ … }` source text (tests and tools).
    static func declarationBlockForTesting(_ text: String) -> DeclarationBlock {
        var counts: DeclarationCounts? = nil
        let values = ComponentParser.parse(text).0
        if case .block("{", let contents)? = values.first { return declarationBlock(contents, counts: &counts) }
        return declarationBlock(values, counts: &counts)
    }
}
