import QuireCore
import QuireXML

// Interim engine: HTML defaults only, until the CSS engine (cascade, selectors, book sheets) lands.
// The API is the one the full engine keeps.

public struct ReaderOverrides: Sendable, Hashable {
    public var fontFamily: String?
    public var fontSizePt: Double?
    public var lineHeight: Double?
    public var textAlign: TextAlign?
    public var noPublisherStyles = false
    public var userCSS: String?
    public init() {}
}

public struct StyleEnvironment: Sendable, Hashable {
    public var viewportWidth: Double
    public var viewportHeight: Double
    public var grayscale: Bool
    public var bookLanguage: String?
    public var overrides: ReaderOverrides

    public init(viewportWidth: Double, viewportHeight: Double, grayscale: Bool = false, bookLanguage: String? = nil, overrides: ReaderOverrides = ReaderOverrides()) {
        self.viewportWidth = viewportWidth
        self.viewportHeight = viewportHeight
        self.grayscale = grayscale
        self.bookLanguage = bookLanguage
        self.overrides = overrides
    }
}

public struct FontSource: Sendable, Hashable {
    public var path: String?
    public var localName: String?
    public var format: String?
}

public struct FontFaceRule: Sendable, Hashable {
    public var family: String
    public var weight: ClosedRange<Int>
    public var style: FontStyle
    public var sources: [FontSource]
    public var unicodeRanges: [ClosedRange<UInt32>]
}

public struct PageRule: Sendable, Hashable {}

public struct DocumentStyles: Sendable {
    let styles: [ElementStyle]
    let indexByNode: [Int32]
    public let fontFaces: [FontFaceRule]
    public let warnings: [Warning]
    public let pageRule: PageRule?

    public func style(of element: NodeID) -> ElementStyle {
        let index = indexByNode[Int(element.index)]
        return styles[Int(max(index, 0))]
    }
}

public final class StyleEngine: Sendable {
    public init() {}

    public func computeStyles(
        document: XMLTree, documentPath: String, environment: StyleEnvironment, loadResource: (String) -> [UInt8]?
    ) -> DocumentStyles {
        var styles: [ElementStyle] = []
        var interned: [ElementStyle: Int32] = [:]
        var indexByNode = [Int32](repeating: -1, count: document.nodeCount)
        var computed = [ComputedStyle?](repeating: nil, count: document.nodeCount)
        var root = ComputedStyle()
        root.fontSize = (environment.overrides.fontSizePt ?? 12) * 96 / 72
        if let family = environment.overrides.fontFamily { root.fontFamilies = [family] }
        if let lineHeight = environment.overrides.lineHeight { root.lineHeight = .number(lineHeight) }
        root.language = environment.bookLanguage
        for index in 0..<Int32(document.nodeCount) {
            guard let element = document.element(NodeID(index)) else { continue }
            let parentStyle = document.parent(of: element.id).flatMap { computed[Int($0.index)] } ?? root
            var style = parentStyle.inheritedForChild()
            if document.parent(of: element.id) == nil { style = root }
            Self.applyDefaults(element, &style, parent: parentStyle, environment: environment)
            computed[Int(index)] = style
            var elementStyle = ElementStyle(style: style)
            if style.display == .listItem, style.listStyleType != .none {
                elementStyle.marker = GeneratedContent(text: "•", style: style)
            }
            if let existing = interned[elementStyle] {
                indexByNode[Int(index)] = existing
            } else {
                let position = Int32(styles.count)
                styles.append(elementStyle)
                interned[elementStyle] = position
                indexByNode[Int(index)] = position
            }
        }
        if styles.isEmpty { styles.append(ElementStyle(style: root)) }
        return DocumentStyles(styles: styles, indexByNode: indexByNode, fontFaces: [], warnings: [], pageRule: nil)
    }

    static func applyDefaults(_ element: XMLElement, _ style: inout ComputedStyle, parent: ComputedStyle, environment: StyleEnvironment) {
        let name = element.localName.lowercased()
        let em = parent.fontSize
        if let lang = element.attribute("lang", namespace: Namespace.xml) ?? element.attribute("lang") { style.language = lang }
        if let dir = element.attribute("dir") { style.direction = dir.lowercased() == "rtl" ? .rtl : .ltr }
        func margins(_ top: Double, _ bottom: Double) {
            style.margin.top = .px(top)
            style.margin.bottom = .px(bottom)
        }
        switch name {
        case "html", "body", "div", "section", "article", "aside", "nav", "header", "footer", "main", "address", "hgroup",
            "figcaption", "center", "dl", "dt", "details", "summary", "legend", "fieldset", "form":
            style.display = .block
        case "p":
            style.display = .block
            margins(em, em)
        case "blockquote", "figure":
            style.display = .block
            margins(em, em)
            style.margin.left = .px(40)
            style.margin.right = .px(40)
        case "dd":
            style.display = .block
            style.margin.left = .px(40)
        case "h1", "h2", "h3", "h4", "h5", "h6":
            let factors: [String: (Double, Double)] = [
                "h1": (2, 0.67), "h2": (1.5, 0.83), "h3": (1.17, 1), "h4": (1, 1.33), "h5": (0.83, 1.67), "h6": (0.67, 2.33),
            ]
            let (size, margin) = factors[name]!
            style.display = .block
            style.fontSize = em * size
            style.fontWeight = 700
            margins(style.fontSize * margin, style.fontSize * margin)
            style.breakAfter = .avoid
            style.breakInside = .avoid
            style.hyphens = .manual
        case "ul", "ol", "menu":
            style.display = .block
            margins(em, em)
            style.padding.left = .px(40)
            style.listStyleType = name == "ol" ? .decimal : .disc
        case "li":
            style.display = .listItem
        case "pre":
            style.display = .block
            style.whiteSpace = .pre
            style.fontFamilies = ["monospace"]
            margins(em, em)
        case "code", "kbd", "samp", "tt":
            style.fontFamilies = ["monospace"]
        case "hr":
            style.display = .block
            margins(em / 2, em / 2)
            style.borderWidth.top = 1
            style.borderStyle.top = .solid
        case "em", "i", "cite", "var", "dfn":
            style.fontStyle = .italic
        case "strong", "b", "th":
            style.fontWeight = 700
            if name == "th" { style.display = .tableCell }
        case "u", "ins":
            style.textDecoration.insert(.underline)
        case "s", "strike", "del":
            style.textDecoration.insert(.lineThrough)
        case "sup":
            style.verticalAlign = .super
            style.fontSize = em * 0.83
        case "sub":
            style.verticalAlign = .sub
            style.fontSize = em * 0.83
        case "small":
            style.fontSize = em * 0.83
        case "big":
            style.fontSize = em * 1.2
        case "table":
            style.display = .table
        case "tr":
            style.display = .tableRow
        case "td":
            style.display = .tableCell
        case "thead", "tbody", "tfoot":
            style.display = .tableRowGroup
        case "caption":
            style.display = .tableCaption
        case "head", "script", "style", "title", "meta", "link", "noscript", "template", "rt", "rp":
            style.display = .none
        default:
            break
        }
        if element.attribute("hidden") != nil { style.display = .none }
        if name == "body" {
            style.textAlign = environment.overrides.textAlign ?? .justify
            style.hyphens = .auto
        }
    }
}
