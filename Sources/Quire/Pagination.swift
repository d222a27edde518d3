import QuireContainer
import QuireCore
import QuireLayout
import QuirePaint
import QuirePDF
import QuirePositions
import QuirePreparation

/// Where a page is: its spine item (0 for a PDF) and its index within that item.
public struct PageAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var spineIndex: Int
    /// 0-based within the spine item (for a PDF: the 0-based output page).
    public var index: Int

    public init(spineIndex: Int, index: Int) {
        self.spineIndex = spineIndex
        self.index = index
    }

    public static func < (lhs: PageAddress, rhs: PageAddress) -> Bool {
        (lhs.spineIndex, lhs.index) < (rhs.spineIndex, rhs.index)
    }

    public var description: String { "\(spineIndex):\(index)" }
}

/// A place in the book to go to.
public enum Target: Sendable, Hashable {
    /// A 1-based page number of this pagination.
    case page(Int)
    case lastPage
    /// A Readium/Komga Locator: href with fragments, cssSelector, partialCfi, progression or
    /// position, or totalProgression alone.
    case locator(Locator)
    case cfi(String)
    case xpointer(String)
    /// A progression (0…1) within the resource `href`.
    case progression(href: String, Double)
    /// A progression (0…1) over the book's text.
    case totalProgression(Double)
    /// A 1-based position of the Readium or Komga positions list.
    case position(Int, PositionsConvention)
    /// A print page label (page-list or pagebreak markers).
    case label(String)
    /// A table-of-contents entry, by title (exact, then ignoring case).
    case tocTitle(String)
}

/// What a pagination is made for: the page geometry and reading settings, and how many laid-out
/// chapters it keeps.
public struct PaginationSettings: Sendable {
    public var layout: LayoutSettings
    /// The device profile's name, recorded in the map (nil for a custom size).
    public var profileName: String?
    /// Chapters kept laid out with their display lists: the current one and its neighbours.
    public var window = 3
    public var settleLimits = SettleLimits()
    /// Image sizes given up front (as if every image had width and height attributes).
    public var knownImageSizes: ImageSizes = [:]
    /// Measures images between layout passes (tests replace it to slow or block measuring).
    public var imageMeasurer: ImageMeasurer? = nil
    /// PDF only: how pages are scaled (nil fits them to `layout.profile`) and prepared.
    public var pdfScale: PDFScale? = nil
    public var pdfPreparation = PagePreparation()
    /// Synthetic spreads and the book's orientation (EPUB; `quire render --spreads`). nil keeps the
    /// page box as given: one page at a time, never turned.
    public var spreads: SpreadMode? = nil
    /// Paginated or scrolled reflowable items (EPUB; `quire render --flow`). nil paginates.
    public var flow: FlowMode? = nil
    /// Settled chapters kept on disk (EPUB): a chapter found there is not laid out again, and
    /// one laid out is stored. Not used with a custom `imageMeasurer`, whose answers it can't key.
    public var layoutCache: LayoutCache? = nil

    public init(layout: LayoutSettings, profileName: String? = nil) {
        self.layout = layout
        self.profileName = profileName
    }

    /// A named device profile (`quire profiles`) with the default reading settings.
    public init(profile name: String) throws {
        guard let profile = PageProfile.named(name) else { throw QuireError.usage("unknown profile '\(name)' (see quire profiles)") }
        self.init(layout: LayoutSettings(profile: profile), profileName: name)
    }
}

/// A book laid out for one page geometry, on demand.
///
/// - The first page of any chapter is available at once (`firstPage`).
/// - Everything whose answer depends on a chapter's full extent (its page count, its last page,
///   a position past its first page, the map) waits for that chapter to settle: its images
///   measured, or given a fallback box within `SettleLimits`.
/// - At most `settings.window` chapters are kept laid out with their display lists; the chapter
///   after the current one is laid out in the background. What every later question needs (page
///   starts, CFIs, XPointers) is kept for every chapter settled so far.
/// - Positions are semantic: `resolve` turns a Locator, CFI, XPointer, progression, label or
///   TOC title into a page, or throws `QuireError.unresolvable`, never a nearby page.
public final class Pagination: Sendable {
    public let book: Book
    public let settings: PaginationSettings
    let engine: Engine

    enum Engine: Sendable {
        case reflow(ReflowPages)
        case pdf(PDFPages)
    }

    public init(_ book: Book, settings: PaginationSettings) throws {
        self.book = book
        self.settings = settings
        switch book.content {
        case .epub(let container): engine = .reflow(try ReflowPages(book: book, container: container, settings: settings))
        case .pdf(let info, let password): engine = .pdf(PDFPages(path: book.path, info: info, password: password, settings: settings, identity: { try book.identity() }))
        }
    }

    /// The same book at another geometry or setting. Land on the same place with
    /// `resolve(.locator(startLocator(of: page)))`: by its position in the text, never its page number.
    public func repaginated(_ settings: PaginationSettings) throws -> Pagination { try Pagination(book, settings: settings) }

    /// The first page of the book, at once.
    public var firstAddress: PageAddress { PageAddress(spineIndex: 0, index: 0) }

    /// The page after `address`, or nil at the end of the book (waits for that chapter to settle).
    public func address(after address: PageAddress) throws -> PageAddress? {
        switch engine {
        case .reflow(let pages): return pages.address(after: address)
        case .pdf(let pages): return address.index + 1 < pages.plan.count ? PageAddress(spineIndex: 0, index: address.index + 1) : nil
        }
    }

    /// The page before `address`, or nil at the start (waits for the previous chapter to settle).
    public func address(before address: PageAddress) throws -> PageAddress? {
        switch engine {
        case .reflow(let pages): return pages.address(before: address)
        case .pdf: return address.index > 0 ? PageAddress(spineIndex: 0, index: address.index - 1) : nil
        }
    }

    /// The 1-based page number (waits for the chapters before to settle).
    public func pageNumber(of address: PageAddress) throws -> Int {
        switch engine {
        case .reflow(let pages): return try pages.pageNumber(of: address)
        case .pdf(let pages):
            try pages.check(address)
            return address.index + 1
        }
    }

    /// Pages in the whole book (waits for every chapter to settle), counted by `jobs` workers.
    public func pageCount(jobs: Int = SystemEnvironment.processorCount) -> Int {
        switch engine {
        case .reflow(let pages): return pages.summaries(jobs: jobs).reduce(0) { $0 + $1.layout.pages.count }
        case .pdf(let pages): return pages.plan.count
        }
    }

    /// Pages in one chapter (waits for it to settle).
    public func pageCount(ofChapter spineIndex: Int) throws -> Int {
        switch engine {
        case .reflow(let pages): return try pages.summary(pages.checked(spineIndex)).layout.pages.count
        case .pdf(let pages): return pages.plan.count
        }
    }

    /// Spine items (chapters) of an EPUB; 1 for a PDF.
    public var chapterCount: Int {
        switch engine {
        case .reflow(let pages): return pages.container.publication.spine.count
        case .pdf: return 1
        }
    }

    /// Whether a chapter has settled (so every answer about it is final).
    public func isSettled(chapter spineIndex: Int) -> Bool {
        switch engine {
        case .reflow(let pages): return pages.isSettled(spineIndex)
        case .pdf: return true
        }
    }

    /// The page a target names. Throws `QuireError.unresolvable` when it names nothing.
    public func resolve(_ target: Target) throws -> PageAddress {
        switch engine {
        case .reflow(let pages): return try pages.resolve(target)
        case .pdf(let pages): return try pages.resolve(target)
        }
    }

    /// The start of a page as a Locator (with Quire's CFI, XPointer and offset). Its
    /// `totalProgression` needs every chapter laid out; `withTotalProgression: false` leaves it
    /// out and needs only the page's own chapter (what a reader keeps as its place while the
    /// rest of the book is still being counted).
    public func startLocator(of address: PageAddress, withTotalProgression: Bool = true) throws -> Locator {
        switch engine {
        case .reflow(let pages): return try pages.locator(address, atEnd: false, withTotalProgression: withTotalProgression)
        case .pdf(let pages): return try pages.locator(address)
        }
    }

    /// The end of a page as a Locator: where the next page starts.
    public func endLocator(of address: PageAddress) throws -> Locator {
        switch engine {
        case .reflow(let pages): return try pages.locator(address, atEnd: true)
        case .pdf(let pages): return try pages.locator(address)
        }
    }

    /// The text position of a page's start (EPUB).
    public func startPosition(of address: PageAddress) throws -> Position {
        switch engine {
        case .reflow(let pages):
            let chapter = try pages.summary(pages.checked(address.spineIndex)).layout
            guard chapter.pages.indices.contains(address.index) else { throw QuireError.unresolvable("page \(address) is not in the book") }
            return Position(spineIndex: address.spineIndex, offset: chapter.pages[address.index].start)
        case .pdf:
            throw QuireError.unresolvable("a PDF page has no text position")
        }
    }

    /// The text of a page (EPUB), for searching: from its start to where the next page starts.
    public func pageText(_ page: PageAddress) throws -> String {
        let start = try startPosition(of: page)
        let end = try address(after: page).map { try startPosition(of: $0) }
        let text = try book.withAnchors { try $0.text(spineIndex: start.spineIndex) }
        let stop = end?.spineIndex == start.spineIndex ? end!.offset : text.units.count
        guard start.offset <= stop, stop <= text.units.count else { return "" }
        return String(decoding: text.units[start.offset..<stop], as: UTF16.self)
    }

    /// Paints a page: RGB, or grey (16 levels with `dither16`) as `paint` asks.
    /// `provisional` allows a chapter's first page before the chapter has settled.
    public func render(_ address: PageAddress, paint: PaintSettings = PaintSettings(), provisional: Bool = false) throws -> Bitmap {
        switch engine {
        case .reflow(let pages): return try pages.render(address, paint: paint, provisional: provisional)
        case .pdf(let pages): return try pages.render(address, paint: paint)
        }
    }

    /// A page as PNG bytes: exactly the bytes `quire render` writes for it.
    public func png(_ address: PageAddress, paint: PaintSettings = PaintSettings(), provisional: Bool = false) throws -> [UInt8] {
        switch engine {
        case .reflow(let pages): return try pages.png(address, paint: paint, provisional: provisional)
        case .pdf(let pages): return try pages.png(address, paint: paint)
        }
    }

    /// Writes a page's PNG to `path` atomically (a temporary name, then rename).
    public func writePNG(_ address: PageAddress, paint: PaintSettings = PaintSettings(), to path: String) throws {
        try FileSystem.writeAtomically(png(address, paint: paint), to: path)
    }

    /// Problems found so far on a page's chapter: images not measured or not drawn, a chapter that
    /// could not be read (it shows as a blank page).
    public func problems(of address: PageAddress) -> [PageProblem] {
        switch engine {
        case .reflow(let pages): return pages.problems(address.spineIndex)
        case .pdf: return []
        }
    }

    /// The whole position map (waits for every chapter to settle; lays the rest out with `jobs` workers).
    public func positionMap(jobs: Int = SystemEnvironment.processorCount) throws -> PositionMap {
        switch engine {
        case .reflow(let pages): return try pages.map(jobs: jobs, withImages: false, extraWarnings: [])
        case .pdf(let pages): return try pages.map(rendered: [], paint: PaintSettings())
        }
    }

    /// How many chapters are laid out with their display lists now, and the most there have been.
    /// Whether a chapter's pages are laid out and held, so painting one needs no layout: the
    /// reader's chapter, and the next one once it has been preloaded.
    public func isReadyToPaint(chapter spineIndex: Int) -> Bool {
        switch engine {
        case .reflow(let pages): return pages.isDrawn(spineIndex)
        case .pdf: return true
        }
    }

    /// Chapters this pagination laid out, and chapters it took from `settings.layoutCache` instead.
    public var chapterCounts: (laidOut: Int, fromCache: Int) {
        switch engine {
        case .reflow(let pages): return pages.chapterCounts
        case .pdf: return (0, 0)
        }
    }

    public var laidOutChapters: (now: Int, peak: Int) {
        switch engine {
        case .reflow(let pages): return pages.laidOutChapters
        case .pdf: return (0, 0)
        }
    }
}

/// Something wrong on a page that a reader can show in place of, or beside, the page.
public enum PageProblem: Sendable, Hashable {
    /// An image that could not be measured (a fallback box stands in).
    case imageNotMeasured(path: String, reason: String)
    /// An image that could not be drawn (a placeholder stands in).
    case imageNotDrawn(String)
    /// The chapter could not be read or laid out; it shows as a blank page.
    case chapterUnreadable(String)
}
