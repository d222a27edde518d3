import QuireCore

/// `rendition:layout`, per book and per spine item.
public enum Layout: String, Sendable, Hashable {
    case reflowable
    case prePaginated = "pre-paginated"
}

public enum ReadingProgression: String, Sendable, Hashable {
    case ltr, rtl
    case auto = "default"
}

/// The base direction metadata text is displayed in (EPUB 3.3 §dir): the element's own `dir`, where
/// `auto` takes the first strong letter's direction, else the package element's; nil when neither says.
public enum MetadataDirection {
    public static func resolve(own: String?, package: String?, text: String) -> String? {
        switch own?.trimmingWhitespace().lowercased() {
        case "ltr"?: return "ltr"
        case "rtl"?: return "rtl"
        case "auto"?: return firstStrong(text)
        default:
            let inherited = package?.trimmingWhitespace().lowercased()
            return inherited == "ltr" || inherited == "rtl" ? inherited : nil
        }
    }

    /// The direction of the first letter of a strong direction (Hebrew, Arabic and the other
    /// right-to-left scripts; any other letter is left to right).
    static func firstStrong(_ text: String) -> String {
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: return "rtl"
            default: if scalar.properties.isAlphabetic { return "ltr" }
            }
        }
        return "ltr"
    }
}

public struct Title: Sendable, Hashable {
    public var value: String
    /// EPUB 3 `title-type` (main, subtitle, short, collection, edition, expanded).
    public var type: String?
    public var language: String?
    /// EPUB 3 `alternate-script` refinements: the same title in another script (language, text).
    public var alternateScripts: [AlternateScript] = []
    /// `ltr` or `rtl`, from `dir` (its own, `auto` by the first strong letter, else the package's); nil when none says.
    public var direction: String? = nil

    public init(value: String, type: String? = nil, language: String? = nil, alternateScripts: [AlternateScript] = []) {
        self.value = value
        self.type = type
        self.language = language
        self.alternateScripts = alternateScripts
    }
}

public struct AlternateScript: Sendable, Hashable {
    public var language: String?
    public var value: String

    public init(language: String?, value: String) {
        self.language = language
        self.value = value
    }
}

public struct Contributor: Sendable, Hashable {
    public var name: String
    /// MARC relator codes (`aut`, `ill`, `edt`, …), from `opf:role` or EPUB 3 `role` refinements.
    public var roles: [String]
    public var fileAs: String?
    public var alternateScripts: [AlternateScript] = []
    /// `ltr` or `rtl`, resolved as a title's is.
    public var direction: String? = nil

    public init(name: String, roles: [String] = [], fileAs: String? = nil, alternateScripts: [AlternateScript] = []) {
        self.name = name
        self.roles = roles
        self.fileAs = fileAs
        self.alternateScripts = alternateScripts
    }
}

public struct Identifier: Sendable, Hashable {
    public var id: String?
    public var value: String
    public var scheme: String?

    public init(id: String? = nil, value: String, scheme: String? = nil) {
        self.id = id
        self.value = value
        self.scheme = scheme
    }
}

public struct DateEntry: Sendable, Hashable {
    public var value: String
    /// EPUB 2 `opf:event` (publication, modification, …); nil for EPUB 3 `dc:date`.
    public var event: String?

    public init(value: String, event: String? = nil) {
        self.value = value
        self.event = event
    }
}

public struct Metadata: Sendable, Hashable {
    public var titles: [Title] = []
    public var creators: [Contributor] = []
    public var contributors: [Contributor] = []
    public var languages: [String] = []
    public var identifiers: [Identifier] = []
    /// The value of the identifier named by the package's `unique-identifier`.
    public var uniqueIdentifier: String?
    public var publishers: [String] = []
    public var dates: [DateEntry] = []
    public var modified: String?
    public var description: String?
    public var subjects: [String] = []
    public var rights: String?
    public var layout: Layout = .reflowable
    public var orientation: String?
    public var spread: String?
    public var flow: String?
    /// EPUB 2 `<meta name="cover" content="id">`.
    public var coverItemID: String?
    /// Every `<meta property="rendition:layout">` value in document order, refining or not, and the
    /// first `<meta name="fixed-layout">` content: the facts Readium and Komga each decide the
    /// book's layout by, their own way (PositionsList).
    public var layoutDeclarations: [LayoutDeclaration] = []
    public var fixedLayoutMeta: String?

    public struct LayoutDeclaration: Sendable, Hashable {
        /// The element's text as written (untrimmed).
        public var value: String
        public var refines: Bool
    }

    /// The main title: the one refined as `main`, else the first.
    public var title: String? {
        (titles.first { $0.type == "main" } ?? titles.first)?.value
    }
}

public struct ManifestItem: Sendable, Hashable {
    public var id: String
    /// The href as written in the package document.
    public var href: String
    /// The archive path it resolves to (nil for a remote resource, an external URL).
    public var path: String?
    public var mediaType: String
    public var properties: [String]
    public var fallback: String?
    public var mediaOverlay: String?

    public func hasProperty(_ name: String) -> Bool { properties.contains(name) }
}

public struct SpineItem: Sendable, Hashable {
    public var index: Int
    public var idref: String
    public var id: String?
    public var linear: Bool
    /// The `linear` attribute as written (Readium compares it lowercased, crengine too).
    public var linearAttribute: String? = nil
    public var properties: [String]
    /// Per-item `rendition:layout-*` override, else the book's layout.
    public var layout: Layout
    /// `page-spread-left`, `page-spread-right`, `page-spread-center` (or nil).
    public var pageSpread: String?
}

/// One entry of a navigation tree (TOC, page-list, landmarks).
public struct NavPoint: Sendable, Hashable {
    public var title: String
    /// The href as written.
    public var href: String?
    /// The target in the archive, when it resolves inside the book.
    public var target: ResourceRef?
    /// `epub:type` of the link (landmarks: `toc`, `bodymatter`, `cover`, …).
    public var type: String?
    public var children: [NavPoint]

    public init(title: String, href: String?, target: ResourceRef?, type: String? = nil, children: [NavPoint] = []) {
        self.title = title
        self.href = href
        self.target = target
        self.type = type
        self.children = children
    }

    /// This entry and all its descendants.
    public var count: Int { 1 + children.reduce(0) { $0 + $1.count } }
    public var depth: Int { 1 + (children.map(\.depth).max() ?? 0) }
}

public struct Navigation: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable {
        case navDocument = "nav"
        case ncx
        case none
    }

    public var source: Source = .none
    public var toc: [NavPoint] = []
    public var pageList: [NavPoint] = []
    public var landmarks: [NavPoint] = []

    public static func total(_ points: [NavPoint]) -> Int { points.reduce(0) { $0 + $1.count } }
    public static func depth(_ points: [NavPoint]) -> Int { points.map(\.depth).max() ?? 0 }
}

/// How an encrypted resource is protected.
public enum EncryptionAlgorithm: Sendable, Hashable {
    /// IDPF font obfuscation (http://www.idpf.org/2008/embedding): first 1040 bytes XOR SHA-1 of the unique identifier.
    case idpfObfuscation
    /// Adobe font mangling (http://ns.adobe.com/pdf/enc#RC): first 1024 bytes XOR the 16-byte UUID.
    case adobeObfuscation
    /// Anything else: DRM. The book is refused.
    case other(String)
}

/// The parsed book: what `quire info` shows and every later stage reads.
public struct Publication: Sendable {
    public var packagePath: String
    public var version: String
    public var metadata: Metadata
    public var manifest: [ManifestItem]
    public var spine: [SpineItem]
    public var pageProgression: ReadingProgression
    /// The EPUB CFI step of the package's `<spine>` element (almost always 6).
    public var spineStep = 6
    public var navigation: Navigation
    /// Archive path → algorithm, for resources listed in META-INF/encryption.xml.
    public var encryption: [String: EncryptionAlgorithm]
    /// Every package document listed in container.xml (the first is the one used).
    public var rootfiles: [String]
    public var warnings: [Warning]
    /// Spine documents shown through a fallback: the archive path links name → the path shown,
    /// so a TOC entry or link to a foreign or missing item lands on its fallback.
    public var shownInPlaceOf: [String: String] = [:]

    let manifestIndexByID: [String: Int]
    let manifestIndexByPath: [String: Int]

    init(
        packagePath: String, version: String, metadata: Metadata, manifest: [ManifestItem], spine: [SpineItem],
        pageProgression: ReadingProgression, navigation: Navigation, encryption: [String: EncryptionAlgorithm],
        rootfiles: [String], warnings: [Warning]
    ) {
        self.packagePath = packagePath
        self.version = version
        self.metadata = metadata
        self.manifest = manifest
        self.spine = spine
        self.pageProgression = pageProgression
        self.navigation = navigation
        self.encryption = encryption
        self.rootfiles = rootfiles
        self.warnings = warnings
        var byID: [String: Int] = [:]
        var byPath: [String: Int] = [:]
        for (index, item) in manifest.enumerated() {
            if byID[item.id] == nil { byID[item.id] = index }
            if let path = item.path, byPath[path] == nil { byPath[path] = index }
        }
        manifestIndexByID = byID
        manifestIndexByPath = byPath
    }

    public func manifestItem(id: String) -> ManifestItem? { manifestIndexByID[id].map { manifest[$0] } }
    public func manifestItem(path: String) -> ManifestItem? { manifestIndexByPath[path].map { manifest[$0] } }

    /// Whether a spine item is laid out as one fixed page: pre-paginated, or a picture (an SVG
    /// document or a bitmap) in the spine.
    public func isFixedPage(_ spineItem: SpineItem) -> Bool {
        spineItem.layout == .prePaginated || (item(for: spineItem)?.mediaType.hasPrefix("image/") ?? false)
    }

    /// The manifest item of a spine entry.
    public func item(for spineItem: SpineItem) -> ManifestItem? { manifestItem(id: spineItem.idref) }

    /// The item and its fallbacks, in order, stopping at a cycle.
    public func fallbackChain(of item: ManifestItem) -> [ManifestItem] {
        [item] + Self.fallbacks(of: item, lookup: manifestItem(id:))
    }

    /// The item's fallbacks (not the item), in order, stopping at a cycle; `lookup` finds an item by id.
    static func fallbacks(of item: ManifestItem, lookup: (String) -> ManifestItem?) -> [ManifestItem] {
        var chain: [ManifestItem] = []
        var seen: Set<String> = [item.id]
        var current = item
        while let next = current.fallback.flatMap(lookup), seen.insert(next.id).inserted {
            chain.append(next)
            current = next
        }
        return chain
    }

    /// The direction pages follow each other (never `.auto`): the spine's
    /// `page-progression-direction` when set, else right to left when the book's first language is
    /// written right to left (EPUB RS: the default progression follows the language).
    public var readingProgression: ReadingProgression {
        if pageProgression != .auto { return pageProgression }
        guard let language = metadata.languages.first?.lowercased() else { return .ltr }
        let subtags: [String] = language.split(whereSeparator: { (c: Character) in c == "-" || c == "_" }).map(String.init)
        let primary = subtags.first ?? language
        if let script = subtags.dropFirst().first(where: { $0.count == 4 }) {
            return ["arab", "hebr", "syrc", "thaa", "nkoo", "adlm", "rohg"].contains(script) ? .rtl : .ltr
        }
        let rightToLeft: Set<String> = ["ar", "he", "iw", "fa", "ur", "yi", "ji", "ps", "sd", "ug", "dv", "ckb", "syr", "arc"]
        return rightToLeft.contains(primary) ? .rtl : .ltr
    }

    /// Media types Quire shows as pictures: EPUB's core image types, and AVIF, JPEG XL and BMP,
    /// which it decodes as well.
    public static let pictureTypes: Set<String> = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/svg+xml", "image/avif", "image/jxl", "image/bmp",
    ]

    /// Media types a spine item is laid out as without a fallback: XHTML, HTML and SVG content
    /// documents, and pictures.
    public static func isContentType(_ mediaType: String) -> Bool {
        let type = mediaType.lowercased()
        return type == "application/xhtml+xml" || type == "text/html" || pictureTypes.contains(type)
    }

    /// What content that refers to the resource at `path` shows: the resource itself, or, for an
    /// image of a type Quire cannot draw (PSD, TIFF…), the first picture in its fallback chain.
    /// Nil when the manifest does not list the resource: EPUB forbids using unlisted resources.
    public func shownResource(_ path: String) -> String? {
        guard let item = manifestItem(path: path) else { return nil }
        guard !Self.pictureTypes.contains(item.mediaType.lowercased()) else { return path }
        let picture = fallbackChain(of: item).dropFirst().first { Self.pictureTypes.contains($0.mediaType.lowercased()) && $0.path != nil }
        return picture?.path ?? path
    }

    /// Index of the spine item whose document is at `path`.
    public func spineIndex(path: String) -> Int? {
        guard let item = manifestItem(path: shownInPlaceOf[path] ?? path) else { return nil }
        return spine.firstIndex { $0.idref == item.id }
    }

    public var isFixedLayout: Bool { metadata.layout == .prePaginated }
}
