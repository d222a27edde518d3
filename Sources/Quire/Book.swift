import QuireContainer
import QuireCore
import QuireDocument
import QuireImages
import QuireLayout
import QuirePDF
import QuirePositions
import QuireStyle
import QuireText
import QuireXML

/// An opened book, EPUB or PDF: what it is and what it holds, before anything is laid out.
/// Open one with `Book.open`, then paginate it with `Pagination`.
public final class Book: Sendable {
    /// What kind of file the book is.
    public enum Format: String, Sendable {
        case epub, pdf
    }

    /// A table-of-contents, page-list or landmarks entry, as the book gives it.
    public struct NavigationEntry: Sendable, Hashable {
        public var title: String
        /// The target inside the book (`path#fragment`), or nil where the entry points nowhere.
        public var href: String?
        /// `epub:type` of the link (landmarks), or nil.
        public var type: String?
        /// For a PDF outline entry: the 1-based page it opens.
        public var pdfPage: Int?
        public var children: [NavigationEntry]
    }

    public let path: String
    public let format: Format
    public let title: String?
    /// The EPUB's unique identifier (nil for a PDF).
    public let identifier: String?
    public let languages: [String]
    public let authors: [String]
    /// `reflowable` or `pre-paginated` (a PDF is pre-paginated).
    public let layout: String
    /// `ltr`, `rtl` or `default`, as the spine says.
    public let pageProgression: String
    /// `ltr` or `rtl`: the direction pages follow each other (for `default`, the language's).
    public let readingProgression: String
    public let toc: [NavigationEntry]
    public let pageList: [NavigationEntry]
    public let landmarks: [NavigationEntry]
    /// Problems found while reading the book that did not stop it from opening.
    public let warnings: [Warning]

    let content: Content
    let limits: Limits
    /// SHA-256 and KOReader's partial MD5 of the file, read on a thread of its own from the moment
    /// the book is opened (a map needs them; most of the opening is single-threaded).
    private let identityJob: BackgroundJob<PositionMap.BookIdentity>

    enum Content: Sendable {
        case epub(EPUBContainer)
        case pdf(PDFInfo, password: String?)
    }

    var container: EPUBContainer? { if case .epub(let container) = content { return container } else { return nil } }

    /// Whether a file is a PDF or (any other zip, or anything else) to be opened as an EPUB.
    /// Throws for a file that is missing or unreadable.
    public static func format(ofFile path: String) throws -> Format {
        try InputFile.checkReadable(path)
        return try InputFile.sniff(path) == .pdf ? .pdf : .epub
    }

    /// Opens an EPUB (2 or 3) or a PDF. Throws `QuireError`; `BookFailure(error)` turns it into
    /// the reason a reader shows (missing, corrupt, DRM, unsupported, password).
    /// `preloadHyphenation` starts loading the book language's hyphenation dictionary (which takes
    /// milliseconds, and which layout would wait for) as soon as the metadata is read.
    public static func open(_ path: String, limits: Limits = .standard, password: String? = nil, preloadHyphenation: Bool = true) throws -> Book {
        let format = try format(ofFile: path)
        let identity = BackgroundJob { try PositionMap.BookIdentity.of(file: path) }
        if format == .pdf {
            try DelayLoad.requirePoppler()
            let info = try PDFDocument(path: path, password: password).info()
            return Book(path: path, content: .pdf(info, password: password), limits: limits, identity: identity)
        }
        let container = try EPUBContainer.open(path: path, limits: limits) { metadata in
            if preloadHyphenation, let language = metadata.languages.first { Hyphenator.preloadInBackground(language) }
        }
        return Book(path: path, content: .epub(container), limits: limits, identity: identity)
    }

    private init(path: String, content: Content, limits: Limits, identity: BackgroundJob<PositionMap.BookIdentity>) {
        self.path = path
        self.content = content
        self.limits = limits
        identityJob = identity
        switch content {
        case .epub(let container):
            let publication = container.publication
            let metadata = publication.metadata
            format = .epub
            title = metadata.title
            identifier = metadata.uniqueIdentifier
            languages = metadata.languages
            authors = metadata.creators.map(\.name)
            layout = metadata.layout.rawValue
            pageProgression = publication.pageProgression.rawValue
            readingProgression = publication.readingProgression.rawValue
            func entries(_ points: [NavPoint]) -> [NavigationEntry] {
                points.map { point in
                    let href = point.target.map { target in target.path + (target.fragment.map { "#" + $0 } ?? "") }
                    return NavigationEntry(title: point.title, href: href, type: point.type, pdfPage: nil, children: entries(point.children))
                }
            }
            toc = entries(publication.navigation.toc)
            pageList = entries(publication.navigation.pageList)
            landmarks = entries(publication.navigation.landmarks)
            warnings = publication.warnings
        case .pdf(let info, _):
            format = .pdf
            title = info.metadata.title
            identifier = nil
            languages = []
            authors = info.metadata.author.map { [$0] } ?? []
            layout = "pre-paginated"
            pageProgression = "default"
            readingProgression = "ltr"
            func entries(_ items: [PDFOutlineItem]) -> [NavigationEntry] {
                items.map { NavigationEntry(title: $0.title, href: nil, type: nil, pdfPage: $0.page, children: entries($0.children)) }
            }
            toc = entries(info.outline)
            pageList = []
            landmarks = []
            warnings = info.warnings
        }
    }

    /// The file's SHA-256 and KOReader partial MD5 (waits for the read started at opening).
    public func identity() throws -> PositionMap.BookIdentity { try identityJob.value() }

    /// What `quire info --json` prints: a stable document (`"format": "quire-info"`).
    public func infoJSON() -> JSON {
        switch content {
        case .epub(let container): return PublicationInfo.json(container, file: path)
        case .pdf(let info, _): return PDFInfoReport.json(info, file: path)
        }
    }

    /// What `quire info` prints: a summary with the TOC tree.
    public func infoText() -> String {
        switch content {
        case .epub(let container): return PublicationInfo.text(container)
        case .pdf(let info, _): return PDFInfoReport.text(info)
        }
    }

    /// Every declaration of the book's CSS, counted once per distinct sheet, `<style>` block and
    /// `style` attribute, as applied, unsupported or invalid.
    public func cssReport() throws -> CSSReport {
        guard let container else { throw QuireError.unsupported("a PDF has no CSS") }
        let publication = container.publication
        var documents: [ContentDocument] = []
        for spineItem in publication.spine {
            guard let item = publication.item(for: spineItem), item.mediaType.contains("html") || item.mediaType.contains("xml"),
                let document = try? ContentDocument.read(item, from: container)
            else { continue }
            documents.append(document)
        }
        let load: (String) -> [UInt8]? = { try? container.read(path: $0) }
        var report = CSSReport.build(documents: documents.map { ($0.tree, $0.path) }, loadResource: load, limits: container.archive.limits)
        // A declaration counts as applied only where layout honours it on every element it
        // reaches: those reaching a box that does not draw what they ask move to unsupported.
        var undrawn: Set<WrittenDeclaration> = []
        let engine = StyleEngine(limits: container.archive.limits)
        for document in documents {
            let styles = engine.computeStylesForReport(document: document.tree, documentPath: document.path, environment: StyleEnvironment(), loadResource: load)
            for (node, feature) in UndrawnStyles.elements(document: document, styles: styles) {
                undrawn.formUnion(styles.declarations(asking: feature, at: node))
            }
        }
        report.reclassify(undrawn)
        return report
    }

    /// The text position an EPUB CFI names (for any geometry: positions don't depend on layout).
    public func position(cfi: String) throws -> Position {
        try withAnchors { try $0.position(cfi: cfi, spineStep: $0.container.publication.spineStep) }
    }

    /// The text position a KOReader XPointer names.
    public func position(xpointer: String) throws -> Position { try withAnchors { try $0.position(xpointer: xpointer) } }

    /// The text position of an element id (or a CFI given as a fragment) in a spine item.
    public func position(spineIndex: Int, fragment: String) throws -> Position {
        try withAnchors { try $0.position(spineIndex: spineIndex, id: fragment) }
    }

    /// The DOM lookups of an EPUB; parsed documents are cached, so one caller at a time.
    private let anchors = LockedValue<BookAnchors?>(nil)

    func withAnchors<T>(_ body: (BookAnchors) throws -> T) throws -> T {
        guard let container else { throw QuireError.unresolvable("a PDF has no text positions") }
        return try anchors.withLock { anchors in
            if anchors == nil { anchors = BookAnchors(container: container) }
            return try body(anchors!)
        }
    }
}

/// Why a book cannot be shown, in the words a reader needs (each maps to the CLI's exit code).
public enum BookFailure: Sendable, Equatable {
    /// No such file, or it cannot be read.
    case missing(String)
    /// Not an EPUB or PDF, a damaged archive or document, hostile content past a limit.
    case corrupt(String)
    /// DRM-protected: encrypted with anything other than font obfuscation.
    case drm(String)
    /// An encrypted PDF without its password, or with a wrong one.
    case passwordRequired(String)
    /// Well-formed, but something Quire cannot do (or a library it needs cannot be loaded).
    case unsupported(String)

    /// The kind of failure for any error `Book.open` or a pagination throws.
    public init(_ error: Error) {
        guard let error = error as? QuireError else {
            self = .unsupported("\(error)")
            return
        }
        switch error {
        case .notFound, .cannotOpen: self = .missing(error.description)
        case .drmProtected: self = .drm(error.description)
        case .passwordRequired: self = .passwordRequired(error.description)
        case .unsupported, .usage, .unresolvable, .cannotCreateOutput, .io: self = .unsupported(error.description)
        default: self = .corrupt(error.description)
        }
    }

    /// One line for a screen or a log.
    public var reason: String {
        switch self {
        case .missing(let text), .corrupt(let text), .drm(let text), .passwordRequired(let text), .unsupported(let text): return text
        }
    }
}

/// Work started on a thread of its own (never Dispatch's pool: see `startThread`), whose result
/// is waited for when it is needed.
final class BackgroundJob<Value: Sendable>: Sendable {
    private let result = LockedValue<Result<Value, Error>?>(nil)

    init(_ work: @escaping @Sendable () throws -> Value) {
        let result = self.result
        startThread {
            let value = Result(catching: work)
            result.withLock { $0 = value }
        }
    }

    func value() throws -> Value {
        try result.withLock(waitingUntil: { $0 != nil }) { $0! }.get()
    }
}
