import Glibc
import QuireContainer
import QuireCore
import QuireDocument

/// A loaded positions.json, indexed for lookups (binary search over page starts).
public final class MapIndex: Sendable {
    public struct Chapter: Sendable {
        public var spineIndex: Int
        public var href: String
        public var path: String?
        public var itemref: String?
        public var firstPage: Int
        public var pageCount: Int
        public var length: Int
    }

    public let path: String
    /// The map as read.
    public let map: PositionMap
    public let sha256: String
    public let pageCount: Int
    public let totalLength: Int
    public let spineStep: Int
    public let chapters: [Chapter]
    public let pageStarts: [Position]
    /// Each page's end offset (exclusive) within its spine item.
    public let pageEnds: [Int]
    /// The middles of the pages that hold text, with their page numbers, in book order.
    private let pageMiddles: [(position: Position, page: Int)]
    private let chapterBySpine: [Int: Int]

    public convenience init(path: String) throws {
        try self.init(map: PositionMap(path: path), path: path)
    }

    public init(map: PositionMap, path: String = "") {
        self.path = path
        self.map = map
        sha256 = map.book.sha256
        spineStep = map.book.spineStep ?? 6
        pageCount = map.pageCount
        totalLength = map.length ?? 0
        chapters = (map.spine ?? []).map { entry in
            Chapter(
                spineIndex: entry.index, href: entry.href, path: entry.path, itemref: entry.itemref, firstPage: entry.firstPage,
                pageCount: entry.pageCount, length: entry.length)
        }
        // A map edited by hand may list a spine item twice (uniqueKeysWithValues trapped): the first counts.
        chapterBySpine = Dictionary(chapters.enumerated().map { ($1.spineIndex, $0) }, uniquingKeysWith: { first, _ in first })
        // A PDF's pages have no text positions: they all start at 0 of item 0, as they always did.
        pageStarts = map.pages.map { page in page.text.map { Position(spineIndex: $0.spineIndex, offset: $0.start.offset) } ?? Position(spineIndex: 0, offset: 0) }
        let pageEnds = map.pages.map { $0.text?.end.offset ?? 0 }
        self.pageEnds = pageEnds
        pageMiddles = zip(pageStarts, pageEnds).enumerated().compactMap { index, range in
            range.1 > range.0.offset ? (Self.middle(range.0, range.1), index + 1) : nil
        }
    }

    public func chapter(spineIndex: Int) -> Chapter? { chapterBySpine[spineIndex].map { chapters[$0] } }

    /// The spine item an href names (manifest href or archive path; fragment and query ignored).
    public func chapter(href: String) -> Chapter? {
        var clean = href
        if let hash = clean.firstIndex(of: "#") { clean = String(clean[..<hash]) }
        clean = PercentEncoding.decode(clean)
        while clean.hasPrefix("/") { clean.removeFirst() }
        return chapters.first { $0.href == clean || $0.path == clean || PercentEncoding.decode($0.href) == clean }
            ?? chapters.first { ($0.path ?? "").hasSuffix("/" + clean) }
    }

    /// The page holding a position: the last page starting at or before it (O(log n)).
    public func page(of position: Position) throws -> Int {
        guard let chapter = chapter(spineIndex: position.spineIndex) else {
            throw QuireError.unresolvable("spine item \(position.spineIndex) is not in the map")
        }
        guard position.offset >= 0, position.offset <= chapter.length else {
            throw QuireError.unresolvable("offset \(position.offset) is outside spine item \(position.spineIndex) (length \(chapter.length))")
        }
        var low = 0
        var high = pageStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if pageStarts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return max(low + 1, chapter.firstPage)
    }

    /// The page entry (1-based) as stored in the map.
    public func entry(page: Int) throws -> PositionMap.Page {
        guard page >= 1, page <= map.pages.count else { throw QuireError.unresolvable("page \(page) is outside 1…\(map.pages.count)") }
        return map.pages[page - 1]
    }

    public func startPosition(ofPage page: Int) throws -> Position {
        guard page >= 1, page <= pageStarts.count else { throw QuireError.unresolvable("page \(page) is outside 1…\(pageStarts.count)") }
        return pageStarts[page - 1]
    }

    /// The middle of a page's text.
    public func middlePosition(ofPage page: Int) throws -> Position {
        Self.middle(try startPosition(ofPage: page), pageEnds[page - 1])
    }

    private static func middle(_ start: Position, _ end: Int) -> Position {
        Position(spineIndex: start.spineIndex, offset: start.offset + (max(end, start.offset) - start.offset) / 2)
    }

    /// The page of this map that matches page `page` of another map of the same book (another
    /// geometry): the median of the pages related to it (`pagesRelated`). The rule is the same
    /// both ways round, so there and back comes back exactly when the geometries are the same,
    /// and within one page unless a page of one map is related to four or more of the other's.
    /// A page without text (a picture alone) has no position of its own; it matches as the page
    /// after it does.
    public func page(matching page: Int, in source: MapIndex) throws -> Int {
        let related = try pagesRelated(toPage: page, of: source)
        return related[(related.count - 1) / 2]
    }

    /// This map's pages that share text with page `page` of another map through a middle: the
    /// page holding that page's middle, and every page whose own middle lies on that page. In
    /// order, never empty.
    public func pagesRelated(toPage page: Int, of source: MapIndex) throws -> [Int] {
        let start = try source.startPosition(ofPage: page)
        let holder = try self.page(of: source.middlePosition(ofPage: page))
        let end = Position(spineIndex: start.spineIndex, offset: max(source.pageEnds[page - 1], start.offset))
        var related = pageMiddles[firstMiddle(atOrAfter: start)..<firstMiddle(atOrAfter: end)].map(\.page)
        if !related.contains(holder) {
            related.insert(holder, at: related.firstIndex { $0 > holder } ?? related.count)
        }
        return related
    }

    /// Index into `pageMiddles` of the first middle at or after a position.
    private func firstMiddle(atOrAfter position: Position) -> Int {
        var low = 0
        var high = pageMiddles.count
        while low < high {
            let middle = (low + high) / 2
            if pageMiddles[middle].position < position { low = middle + 1 } else { high = middle }
        }
        return low
    }

    public func page(label: String) throws -> Int {
        if let entry = map.pageList?.first(where: { $0.label == label }) { return entry.page }
        throw QuireError.unresolvable("no print page labelled '\(label)'")
    }

    public func page(tocTitle: String) throws -> Int {
        func search(_ entries: [PositionMap.NavigationEntry], _ match: (String) -> Bool) -> Int? {
            for entry in entries {
                if match(entry.title), let page = entry.page { return page }
                if let found = search(entry.children, match) { return found }
            }
            return nil
        }
        if let page = search(map.toc, { $0 == tocTitle }) ?? search(map.toc, { $0.lowercased() == tocTitle.lowercased() }) { return page }
        throw QuireError.unresolvable("no table-of-contents entry titled '\(tocTitle)'")
    }

    public func page(position: Int, convention: PositionsConvention) throws -> Int {
        guard let page = try positionsItem(position, convention: convention).page else {
            throw QuireError.unresolvable("position \(position) (\(convention.rawValue)) is on no page")
        }
        return page
    }

    /// The entry of a positions list (1-based).
    public func positionsItem(_ position: Int, convention: PositionsConvention) throws -> PositionMap.PositionsEntry.Item {
        let list = map.positions?[convention]?.list ?? []
        guard position >= 1, position <= list.count else {
            throw QuireError.unresolvable("position \(position) is outside 1…\(list.count) (\(convention.rawValue))")
        }
        return list[position - 1]
    }

    /// The Readium position a totalProgression stands for: Readium writes (position − 1) / count.
    public func readiumPosition(totalProgression: Double) throws -> Int {
        guard totalProgression >= 0, totalProgression <= 1 else { throw QuireError.unresolvable("totalProgression \(totalProgression) is outside 0…1") }
        let count = map.positions?[.readium]?.list.count ?? 0
        guard count > 0 else { throw QuireError.unresolvable("the map has no Readium positions") }
        return PositionsList.readiumPosition(totalProgression: totalProgression, count: count)
    }

    /// totalProgression over the book's characters (the map's convention).
    public func position(totalProgression: Double) throws -> Position {
        guard totalProgression >= 0, totalProgression <= 1 else { throw QuireError.unresolvable("totalProgression \(totalProgression) is outside 0…1") }
        var target = Int((totalProgression * Double(totalLength)).rounded())
        for chapter in chapters {
            if target < chapter.length || chapter.spineIndex == chapters.last?.spineIndex {
                return Position(spineIndex: chapter.spineIndex, offset: min(target, chapter.length))
            }
            target -= chapter.length
        }
        throw QuireError.unresolvable("the map has no text")
    }
}
