import Dispatch
import Quire
import QuireCore
import QuirePreparation

/// A TOC entry flattened for the picker: its depth and the page it opens at.
public struct TOCLine: Sendable, Equatable {
    public var title: String
    public var level: Int
    public var page: Int?
}

/// Where the viewer's pages come from: a `quire render` output, or a book paginated live.
/// Pages are 1-based. `pageCount` is nil while it is not final (a chapter still settling).
public protocol PageSource: AnyObject {
    var title: String { get }
    var pageCount: Int? { get }
    /// The page's pixels; with `highlight`, the matches of that query marked where the source can.
    func image(ofPage page: Int, dark: Bool, highlight: String?) throws -> Bitmap
    func chapterTitle(ofPage page: Int) -> String?
    func toc() -> [TOCLine]
    /// Lines for the `i` screen: page, chapter, Locator, CFI, XPointer.
    func info(ofPage page: Int) -> [String]
    /// The page a print label, a Locator or a CFI names (throws `unresolvable` for nothing).
    func resolve(_ target: Target) throws -> Int
    /// The first page after (or before) `page` whose text holds `query` (case and diacritics
    /// ignored), with the match in context; nil when there is none. Page 0 searches from the start.
    func search(_ query: String, from page: Int, forward: Bool) throws -> SearchHit?
    /// The start Locator of a page (what progress is saved as). For a live book it waits for
    /// every chapter to be laid out (its totalProgression needs the whole book).
    func locator(ofPage page: Int) throws -> Locator
    /// The start of a page by its place in its chapter (href, offset, CFI, XPointer), without the
    /// book-wide totalProgression: at once, for keeping the reader's place.
    func anchor(ofPage page: Int) throws -> Locator
    /// `locator(ofPage:)` to be called later, on another thread: tied to this pagination, so
    /// a re-pagination in between does not change what it names.
    func locatorLater(ofPage page: Int) throws -> @Sendable () throws -> Locator
    /// Whether `page` is the book's last (for a live book: its chapter settled and none follows).
    func isLastPage(_ page: Int) -> Bool
    /// The book's SHA-256 and KOReader id: what progress is keyed by.
    func identity() throws -> PositionMap.BookIdentity
}

/// A search result: the page to show and the matched words in context (for the status line).
public struct SearchHit: Sendable, Equatable {
    public var page: Int
    public var context: String
}

/// `quire view DIR`: the map and its page images, as `quire render` wrote them.
public final class RenderedPages: PageSource {
    public let directory: String
    public let map: PositionMap
    let index: MapIndex
    /// The book the map was made from, when given: searching needs its text.
    let book: Book?

    /// `book`, when given, must be the file the map was made from (checked by SHA-256).
    public init(directory: String, book: Book? = nil) throws {
        self.directory = directory
        let path = FileSystem.joined(directory, "positions.json")
        guard FileSystem.exists(path) else {
            throw QuireError.cannotOpen(path: path, reason: "no positions.json here: not a `quire render` output")
        }
        map = try PositionMap(path: path)
        index = try MapIndex(path: path)
        if let book, try book.identity().sha256 != map.book.sha256 {
            throw QuireError.usage("\(book.path) is not the book \(directory) was rendered from (its SHA-256 differs from the map's)")
        }
        self.book = book
    }

    public var title: String { map.book.title ?? FileSystem.lastComponent(directory) }
    public var pageCount: Int? { map.pageCount }

    /// The page's PNG as rendered: a rendered page carries no glyph positions, so a search
    /// match is reported on the status line but not marked.
    public func image(ofPage page: Int, dark: Bool, highlight: String?) throws -> Bitmap {
        guard page >= 1, page <= map.pages.count else { throw QuireError.unresolvable("page \(page) is outside 1…\(map.pages.count)") }
        guard let relative = map.pages[page - 1].image else {
            throw QuireError.missingResource(href: "page \(page)", context: "this render left the page out (--pages or --map-only)")
        }
        let path = FileSystem.joined(directory, relative)
        guard FileSystem.exists(path) else { throw QuireError.missingResource(href: relative, context: directory) }
        let image = try PNGReader.read(path)
        return Bitmap(width: image.width, height: image.height, channels: image.channels, bytes: image.pixels)
    }

    public func chapterTitle(ofPage page: Int) -> String? {
        var best: String?
        func walk(_ entries: [PositionMap.NavigationEntry]) {
            for entry in entries {
                if let start = entry.page, start <= page { best = entry.title }
                walk(entry.children)
            }
        }
        walk(map.toc)
        return best
    }

    public func toc() -> [TOCLine] {
        var lines: [TOCLine] = []
        func walk(_ entries: [PositionMap.NavigationEntry], _ level: Int) {
            for entry in entries {
                lines.append(TOCLine(title: entry.title, level: level, page: entry.page))
                walk(entry.children, level + 1)
            }
        }
        walk(map.toc, 0)
        return lines
    }

    public func info(ofPage page: Int) -> [String] {
        guard page >= 1, page <= map.pages.count else { return [] }
        var lines = ["page \(page) of \(map.pageCount)"]
        if let chapter = chapterTitle(ofPage: page) { lines.append("chapter: \(chapter)") }
        if let label = map.pages[page - 1].label { lines.append("print page: \(label)") }
        switch map.pages[page - 1].content {
        case .text(let text):
            lines.append("href: \(text.href)  offset \(text.start.offset)  progression \(text.start.progression)")
            if let cfi = text.start.cfi { lines.append("CFI: \(cfi)") }
            if let xpointer = text.start.xpointer { lines.append("XPointer: \(xpointer)") }
        case .pdf(let pdf):
            lines.append("source page \(pdf.sourcePage) (\(pdf.half))")
        }
        if let locator = try? locator(ofPage: page) { lines.append("Locator: \(locator.json.serialized(pretty: false))") }
        return lines
    }

    public func resolve(_ target: Target) throws -> Int {
        switch target {
        case .page(let number):
            guard number >= 1, number <= map.pageCount else { throw QuireError.unresolvable("page \(number) is outside 1…\(map.pageCount)") }
            return number
        case .lastPage: return map.pageCount
        case .label(let label): return try index.page(label: label)
        case .tocTitle(let title): return try index.page(tocTitle: title)
        case .totalProgression(let fraction): return try index.page(of: index.position(totalProgression: fraction))
        case .locator(let locator):
            return try Locate.resolve(locator: locator, map: index) { _, _ in
                throw QuireError.unresolvable("a fragment needs the book: open it live")
            }.0
        default: throw QuireError.unresolvable("open the book itself to look this up")
        }
    }

    public func search(_ query: String, from page: Int, forward: Bool) throws -> SearchHit? {
        guard let book else {
            throw QuireError.unresolvable("searching a rendered book needs its text: add --book BOOK.epub, or open the book itself")
        }
        guard !map.book.isPDF else { throw QuireError.unresolvable("a PDF's pages carry no text to search") }
        let from: Position
        if page == 0 {
            from = Position(spineIndex: 0, offset: 0)
        } else if forward {
            guard page < map.pageCount else { return nil }
            from = try index.startPosition(ofPage: page + 1)
        } else {
            from = try index.startPosition(ofPage: page)
        }
        guard let match = try book.find(query, from: from, forward: forward) else { return nil }
        return SearchHit(page: try index.page(of: match.position), context: match.context)
    }

    public func locator(ofPage page: Int) throws -> Locator {
        guard page >= 1, page <= map.pages.count else { throw QuireError.unresolvable("no page \(page)") }
        return Locate.startLocator(map.pages[page - 1])
    }

    public func anchor(ofPage page: Int) throws -> Locator { try locator(ofPage: page) }

    public func locatorLater(ofPage page: Int) throws -> @Sendable () throws -> Locator {
        let locator = try locator(ofPage: page)
        return { locator }
    }

    public func isLastPage(_ page: Int) -> Bool { page == map.pageCount }

    public func identity() throws -> PositionMap.BookIdentity { PositionMap.BookIdentity(sha256: map.book.sha256, partialMD5: map.book.partialMD5) }
}

/// `quire view BOOK`: pages laid out on demand at the terminal's size.
public final class LivePages: PageSource {
    public let book: Book
    /// The current pagination; the viewer's frame cache reads it from its own queue.
    public var pagination: Pagination { current.withLock { $0 } }
    private let current: LockedValue<Pagination>
    /// Page numbers found so far; the total once every chapter has settled (in the background).
    private let total = LockedValue<Int?>(nil)

    public init(book: Book, settings: PaginationSettings) throws {
        self.book = book
        current = LockedValue(try Pagination(book, settings: settings))
        countInBackground()
    }

    func countInBackground() {
        let pagination = self.pagination
        let total = self.total
        total.withLock { $0 = nil }
        DispatchQueue.global().async {
            // One core is left to the reader, so a page turn never waits behind the count.
            let count = pagination.pageCount(jobs: max(1, SystemEnvironment.processorCount - 1))
            total.withLock { $0 = count }
        }
    }

    /// Lays the book out again at new settings. The viewer finds its page again by Locator.
    public func repaginate(_ settings: PaginationSettings) throws {
        let next = try pagination.repaginated(settings)
        current.withLock { $0 = next }
        countInBackground()
    }

    public var title: String { book.title ?? FileSystem.lastComponent(book.path) }
    public var pageCount: Int? { total.withLock { $0 } }

    func address(_ page: Int) throws -> PageAddress { try pagination.resolve(.page(page)) }

    public func image(ofPage page: Int, dark: Bool, highlight: String?) throws -> Bitmap {
        let address = try address(page)
        var paint = PaintSettings()
        if dark { paint.theme = .dark }
        if let highlight, !highlight.isEmpty, book.format != .pdf { paint.highlights = try pagination.highlights(of: highlight, on: address) }
        return try pagination.render(address, paint: paint)
    }

    public func chapterTitle(ofPage page: Int) -> String? {
        guard let locator = try? anchor(ofPage: page) else { return nil }
        var best: String?
        func walk(_ entries: [Book.NavigationEntry]) {
            for entry in entries {
                if let href = entry.href, href.split(separator: "#").first.map(String.init) == locator.href.split(separator: "#").first.map(String.init),
                    best == nil
                {
                    best = entry.title
                }
                walk(entry.children)
            }
        }
        walk(book.toc)
        return best
    }

    public func toc() -> [TOCLine] {
        var lines: [TOCLine] = []
        func walk(_ entries: [Book.NavigationEntry], _ level: Int) {
            for entry in entries {
                let page = (try? pagination.resolve(.tocTitle(entry.title))).flatMap { try? pagination.pageNumber(of: $0) }
                lines.append(TOCLine(title: entry.title, level: level, page: page))
                walk(entry.children, level + 1)
            }
        }
        walk(book.toc, 0)
        return lines
    }

    public func info(ofPage page: Int) -> [String] {
        var lines = ["page \(page)" + (pageCount.map { " of \($0)" } ?? "")]
        if let chapter = chapterTitle(ofPage: page) { lines.append("chapter: \(chapter)") }
        if let locator = try? locator(ofPage: page) {
            if let cfi = locator.locations.cfi { lines.append("CFI: \(cfi)") }
            if let xpointer = locator.locations.xpointer { lines.append("XPointer: \(xpointer)") }
            lines.append("Locator: \(locator.json.serialized(pretty: false))")
        }
        return lines
    }

    public func resolve(_ target: Target) throws -> Int { try pagination.pageNumber(of: pagination.resolve(target)) }

    public func search(_ query: String, from page: Int, forward: Bool) throws -> SearchHit? {
        guard book.format != .pdf else { throw QuireError.unresolvable("searching a PDF's text is not supported yet") }
        guard let found = try pagination.search(query, from: page == 0 ? nil : address(page), forward: forward) else { return nil }
        return SearchHit(page: try pagination.pageNumber(of: found.page), context: found.match.context)
    }

    public func locator(ofPage page: Int) throws -> Locator { try pagination.startLocator(of: address(page)) }

    public func anchor(ofPage page: Int) throws -> Locator { try pagination.startLocator(of: address(page), withTotalProgression: false) }

    public func locatorLater(ofPage page: Int) throws -> @Sendable () throws -> Locator {
        let pagination = self.pagination
        let address = try address(page)
        return { try pagination.startLocator(of: address) }
    }

    public func isLastPage(_ page: Int) -> Bool {
        do { return try pagination.address(after: address(page)) == nil } catch { return false }
    }

    public func identity() throws -> PositionMap.BookIdentity { try book.identity() }
}
