import QuireCore
import QuireXML

/// What the reader chose in the reading app. These beat the book's styles, the way reading apps do,
/// while keeping the book's structure (see `Cascade.swift` for exactly how).
public struct ReaderOverrides: Sendable, Hashable {
    public var fontFamily: String?
    /// The size of `medium` (the root's text) in pt; the book's sizes keep their proportions.
    public var fontSizePt: Double?
    /// A line-height multiplier applied to all text.
    public var lineHeight: Double?
    /// Replaces start/left/justify alignment; centred and right-aligned text keeps its alignment.
    public var textAlign: TextAlign?
    /// Drops the book's stylesheets, `<style>` blocks and `style` attributes.
    public var noPublisherStyles: Bool
    /// A user-origin stylesheet.
    public var userCSS: String?

    public init(
        fontFamily: String? = nil, fontSizePt: Double? = nil, lineHeight: Double? = nil, textAlign: TextAlign? = nil,
        noPublisherStyles: Bool = false, userCSS: String? = nil
    ) {
        self.fontFamily = fontFamily
        self.fontSizePt = fontSizePt
        self.lineHeight = lineHeight
        self.textAlign = textAlign
        self.noPublisherStyles = noPublisherStyles
        self.userCSS = userCSS
    }
}

public struct StyleEnvironment: Sendable, Hashable {
    /// The page box in CSS px: what vw/vh and @media width/height see.
    public var viewportWidth: Double
    public var viewportHeight: Double
    public var grayscale: Bool
    public var overrides: ReaderOverrides

    public init(
        viewportWidth: Double = 600, viewportHeight: Double = 800, grayscale: Bool = false,
        overrides: ReaderOverrides = ReaderOverrides()
    ) {
        self.viewportWidth = viewportWidth
        self.viewportHeight = viewportHeight
        self.grayscale = grayscale
        self.overrides = overrides
    }

    /// The book's CSS at a fixed page, for what must not vary with the reader's geometry or
    /// settings (the DOM crengine builds, which KOReader's XPointers count).
    public static let reference = StyleEnvironment()

    /// This environment's media answers with the reference's viewport and colour.
    var referenceMedia: StyleEnvironment {
        var environment = self
        environment.viewportWidth = StyleEnvironment.reference.viewportWidth
        environment.viewportHeight = StyleEnvironment.reference.viewportHeight
        environment.grayscale = StyleEnvironment.reference.grayscale
        return environment
    }
}

/// Generated boxes of one element, stored only for elements that have any.

/// The styles of every node of one document. Identical styles are stored once.
public struct DocumentStyles: Sendable {
    let computed: [ComputedStyle]
    /// Per node (text nodes carry their parent's style).
    let nodeStyle: [Int32]
    let extras: [Int32: Shared<PseudoStyles>]
    public let fontFaces: [FontFaceRule]
    public let warnings: [Warning]
    public let pageRule: PageRule?
    /// The styles are those of the reference environment (`StyleEnvironment.reference`): the
    /// book's CSS alone, and no media query whose answer the page size or colour changed.
    public internal(set) var matchesReference = false
    /// The document's author CSS as one text, for inline `<svg>` pictures: librsvg draws them
    /// apart from the document, so they get its rules in a `<style>` of their own (nil when the
    /// document has no inline SVG, or its CSS is over `maxSVGStyleSheet` bytes).
    public internal(set) var svgStyleSheet: String? = nil
    static let maxSVGStyleSheet = 64 << 10
    /// For the CSS report: per element, where the winners of the properties
    /// `UnhonouredFeature` covers were written (`StyleEngine.computeStylesForReport`).
    var writtenDeclarations: [Int32: [PropertyID: WrittenDeclaration]] = [:]

    /// The declarations, as written, that ask `node` for `feature` (none for what the
    /// user-agent sheet or presentational hints ask).
    public func declarations(asking feature: UnhonouredFeature, at node: NodeID) -> [WrittenDeclaration] {
        guard let written = writtenDeclarations[node.index] else { return [] }
        return feature.properties.compactMap { written[$0] }
    }

    public func style(of element: NodeID) -> ElementStyle {
        let index = Int(element.index)
        guard index >= 0, index < nodeStyle.count, nodeStyle[index] >= 0 else { return ElementStyle(style: ComputedStyle()) }
        return ElementStyle(style: computed[Int(nodeStyle[index])], pseudo: extras[element.index])
    }

    /// Which of the document's distinct styles `node` has (nil for none): two nodes with the
    /// same index have equal styles, so a style table can be keyed by it instead of by value.
    public func computedIndex(of node: NodeID) -> Int? {
        let index = Int(node.index)
        guard index >= 0, index < nodeStyle.count, nodeStyle[index] >= 0 else { return nil }
        return Int(nodeStyle[index])
    }

    /// The computed style alone (no generated content), without copying the pseudo-element data.
    public func computedStyle(of node: NodeID) -> ComputedStyle {
        let index = Int(node.index)
        guard index >= 0, index < nodeStyle.count, nodeStyle[index] >= 0 else { return ComputedStyle() }
        return computed[Int(nodeStyle[index])]
    }

    /// An element's `display`, read in place (an `ElementStyle` is several computed styles long).
    public func display(of node: NodeID) -> Display {
        let index = Int(node.index)
        guard index >= 0, index < nodeStyle.count, nodeStyle[index] >= 0 else { return ComputedStyle().display }
        return computed[Int(nodeStyle[index])].display
    }

    /// An element's `::before` and `::after` content (nil for none), without its other styles
    /// (`generatedContent(of:)` says only whether they exist, copying nothing).
    public func generated(of element: NodeID) -> (before: GeneratedContent?, after: GeneratedContent?) {
        guard let extra = extras[element.index]?.value else { return (nil, nil) }
        return (extra.before, extra.after)
    }

    /// Whether an element has `::before` and `::after` boxes, without copying its styles.
    public func generatedContent(of element: NodeID) -> (before: Bool, after: Bool) {
        guard let extra = extras[element.index]?.value else { return (false, false) }
        return (extra.before != nil, extra.after != nil)
    }

    /// How many distinct computed styles the document uses.
    public var distinctStyleCount: Int { computed.count }
}

public final class StyleEngine: Sendable {
    struct SheetKey: Hashable {
        var path: String
        var hash: UInt64
        var count: Int
        var environment: StyleEnvironment
        /// Compiled for the CSS report, with each declaration's place kept.
        var forReport = false
    }

    /// One sheet of a rule index's list: its key (nil for the user-agent sheet) and origin.
    struct IndexKey: Hashable {
        var sheet: SheetKey?
        var origin: Origin
    }

    /// Parsed stylesheets shared by the documents of a book (War and Peace links one sheet 393 times).
    private let sheetCache = LockedValue<[SheetKey: StyleSheet]>([:])
    static let maxCachedSheets = 256
    /// Rule indexes by the sheets (and origins) they were built from: a book's chapters mostly link
    /// the same sheets, and building the index was a few percent of layout.
    private let indexCache = LockedValue<[[IndexKey]: RuleIndex]>([:])
    static let maxCachedIndexes = 64

    static let userAgentSheet: StyleSheet = {
        var compiler = SheetCompiler(environment: StyleEnvironment(), loadResource: { _ in nil })
        compiler.compile(text: UserAgentStyleSheet.css, path: "")
        return compiler.sheet
    }()

    /// The run's stylesheet limits (`--max-css-*`).
    let limits: Limits

    public init(limits: Limits = .standard) { self.limits = limits }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// A parsed stylesheet (from the book's cache when the same bytes were parsed before) and its
    /// cache key, which also names it in rule-index keys.
    func sheet(
        bytes: [UInt8], path: String, environment: StyleEnvironment, loadResource: (String) -> [UInt8]?, forReport: Bool = false
    ) -> (sheet: StyleSheet, key: SheetKey) {
        let key = SheetKey(path: path, hash: StyleEngine.fnv1a(bytes), count: bytes.count, environment: environment, forReport: forReport)
        if let cached = sheetCache.withLock({ $0[key] }) { return (cached, key) }
        let sheet = withoutActuallyEscaping(loadResource) { load in
            var compiler = SheetCompiler(environment: environment, loadResource: load, counting: forReport, limits: limits)
            compiler.compile(bytes: bytes, path: path)
            return compiler.sheet
        }
        sheetCache.withLock { cache in
            if cache.count >= StyleEngine.maxCachedSheets { cache.removeAll() }
            cache[key] = sheet
        }
        return (sheet, key)
    }

    /// The rule index of a list of sheets, built once per distinct list (user and author sheets
    /// are keyed by path, content and environment).
    func ruleIndex(_ sheets: [(StyleSheet, Origin)], keys: [IndexKey]) -> RuleIndex {
        if let cached = indexCache.withLock({ $0[keys] }) { return cached }
        let index = RuleIndex(sheets: sheets)
        indexCache.withLock { cache in
            if cache.count >= StyleEngine.maxCachedIndexes { cache.removeAll() }
            cache[keys] = index
        }
        return index
    }

    /// Styles for every element of `document`. `loadResource(archivePath)` returns a stylesheet's
    /// bytes (for `<link rel=stylesheet>` and `@import`), nil if missing.
    /// `memo`: a layout worker's styles kept from the documents it styled before (the result is
    /// the same with or without it).
    public func computeStyles(
        document: XMLTree, documentPath: String, environment: StyleEnvironment, loadResource: (String) -> [UInt8]?, memo: StyleMemo? = nil
    ) -> DocumentStyles {
        computeStyles(
            document: document, documentPath: documentPath, environment: environment, loadResource: loadResource, forReport: false, memo: memo)
    }

    /// Styles as the CSS report sees them: sheets compiled with their declarations' places kept
    /// (cached apart from layout's), and for each element where the winners of `UnhonouredFeature`'s properties were
    /// written (`DocumentStyles.declarations(asking:at:)`).
    public func computeStylesForReport(
        document: XMLTree, documentPath: String, environment: StyleEnvironment, loadResource: (String) -> [UInt8]?
    ) -> DocumentStyles {
        computeStyles(document: document, documentPath: documentPath, environment: environment, loadResource: loadResource, forReport: true, memo: nil)
    }

    private func computeStyles(
        document: XMLTree, documentPath: String, environment: StyleEnvironment, loadResource: (String) -> [UInt8]?, forReport: Bool,
        memo: StyleMemo?
    ) -> DocumentStyles {
        var reportKeys: [String?] = [nil]
        var sheets: [(StyleSheet, Origin)] = [(StyleEngine.userAgentSheet, .userAgent)]
        var keys = [IndexKey(sheet: nil, origin: .userAgent)]
        var warnings: [Warning] = []
        var mediaDiffers = false
        if let userCSS = environment.overrides.userCSS {
            let user = sheet(bytes: Array(userCSS.utf8), path: "user.css", environment: environment, loadResource: { _ in nil })
            sheets.append((user.sheet, .user))
            keys.append(IndexKey(sheet: user.key, origin: .user))
            reportKeys.append(nil)
        }
        let publisher = !environment.overrides.noPublisherStyles
        let hasInlineSVG = document.hasElement(named: ["svg"])
        var svgSheet: [UInt8]? = hasInlineSVG && publisher ? [] : nil
        if publisher {
            for (bytes, path) in StyleEngine.authorSheets(
                document: document, documentPath: documentPath, environment: environment, loadResource: loadResource, warnings: &warnings,
                mediaDiffers: &mediaDiffers)
            {
                if svgSheet != nil { svgSheet! += bytes + [0x0A] }
                let author = sheet(bytes: bytes, path: path, environment: environment, loadResource: loadResource, forReport: forReport)
                sheets.append((author.sheet, .author))
                keys.append(IndexKey(sheet: author.key, origin: .author))
                reportKeys.append(Self.reportKey(bytes: bytes, path: path, documentPath: documentPath))
            }
        }
        var fontFaces: [FontFaceRule] = []
        var pageRule: PageRule? = nil
        for (sheet, origin) in sheets where origin == .author {
            fontFaces += sheet.fontFaces
            if let page = sheet.pageRule { pageRule = StyleEngine.merge(pageRule, page) }
        }
        for (sheet, _) in sheets { warnings += sheet.warnings }
        let cascade = Cascade(
            tree: document, index: ruleIndex(sheets, keys: keys), environment: environment, styleAttributes: publisher,
            memo: memo.map { ($0, StyleMemo.Scope(sheets: keys, environment: environment)) })
        if forReport {
            cascade.winnerSources = Array(repeating: nil, count: PropertyID.allCases.count)
            cascade.countsStyleAttributes = true
            cascade.sheetReportKeys = reportKeys
        }
        var styles = cascade.run(fontFaces: fontFaces, warnings: warnings, pageRule: pageRule)
        styles.matchesReference =
            publisher && environment.overrides.userCSS == nil && !mediaDiffers && !sheets.contains { $0.0.mediaDiffersFromReference }
        if let svgSheet, !svgSheet.isEmpty, svgSheet.count <= DocumentStyles.maxSVGStyleSheet {
            styles.svgStyleSheet = String(decoding: svgSheet, as: UTF8.self)
        }
        return styles
    }

    /// How the CSS report names a sheet: its path, or for a `<style>` block its text's hash.
    static func reportKey(bytes: [UInt8], path: String, documentPath: String) -> String {
        path == documentPath ? "<style>#\(fnv1a(bytes))" : path
    }

    static func merge(_ base: PageRule?, _ next: PageRule) -> PageRule {
        guard var page = base else { return next }
        if next.width != nil { page.width = next.width }
        if next.height != nil { page.height = next.height }
        if let v = next.margin.top { page.margin.top = v }
        if let v = next.margin.right { page.margin.right = v }
        if let v = next.margin.bottom { page.margin.bottom = v }
        if let v = next.margin.left { page.margin.left = v }
        return page
    }

    /// `<link rel=stylesheet>` and `<style>` in document order, as (bytes, path) with media already checked.
    static func authorSheets(
        document: XMLTree, documentPath: String, environment: StyleEnvironment, loadResource: (String) -> [UInt8]?,
        warnings: inout [Warning], mediaDiffers: inout Bool
    ) -> [([UInt8], String)] {
        func matches(_ media: String) -> Bool {
            let answer = MediaQueries.matches(text: media, environment)
            if answer != MediaQueries.matches(text: media, environment.referenceMedia) { mediaDiffers = true }
            return answer
        }
        var result: [([UInt8], String)] = []
        for index in 0..<Int32(document.nodeCount) {
            guard let element = document.element(NodeID(index)), Self.mayBeLinkOrStyle(element.localName) else { continue }
            let name = element.localName.lowercased()
            guard element.namespace == Namespace.xhtml || element.namespace.isEmpty else {
                // SVG <style> also styles, but only SVG content; skip.
                continue
            }
            if name == "link" {
                let rel = (element.attribute("rel") ?? "").lowercased().whitespaceTokens()
                guard rel.contains("stylesheet"), !rel.contains("alternate"), let href = element.attribute("href") else { continue }
                if let type = element.attribute("type")?.lowercased(), !type.isEmpty, type != "text/css" { continue }
                if let media = element.attribute("media"), !matches(media) { continue }
                guard let path = ArchivePath.resolve(href, against: documentPath) else { continue }
                guard let bytes = loadResource(path) else {
                    warnings.append(Warning("css-missing", "\(documentPath): stylesheet \(path) not found"))
                    continue
                }
                result.append((bytes, path))
            } else if name == "style" {
                if let type = element.attribute("type")?.lowercased(), !type.isEmpty, type != "text/css" { continue }
                if let media = element.attribute("media"), !matches(media) { continue }
                // The path keeps relative URLs resolving against the document.
                result.append((Array(element.textContent.utf8), documentPath))
            }
        }
        return result
    }

    /// Whether a tag name could be `link` or `style` in any case: every element of a chapter is
    /// looked at, and lowercasing each name showed in the profile.
    private static func mayBeLinkOrStyle(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == 4 || utf8.count == 5, let first = utf8.first else { return false }
        return first | 0x20 == UInt8(ascii: "l") || first | 0x20 == UInt8(ascii: "s")
    }
}
