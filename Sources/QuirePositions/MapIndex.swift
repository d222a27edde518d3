import Foundation
import QuireContainer
import QuireCore
import QuireDocument

/// A loaded positions.json, indexed for lookups (binary search over page starts).
public final class MapIndex: @unchecked Sendable {
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
    public let sha256: String
    public let pageCount: Int
    public let totalLength: Int
    public let spineStep: Int
    public let chapters: [Chapter]
    public let pageStarts: [Position]
    let pages: [[String: Any]]
    let toc: [[String: Any]]
    let pageList: [(label: String, page: Int)]
    let positions: [PositionsConvention: [[String: Any]]]
    private let chapterBySpine: [Int: Int]

    public init(path: String) throws {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else { throw QuireError.notFound(path: path) }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            root["format"] as? String == PositionMap.format
        else { throw QuireError.invalidPackageDocument("\(path) is not a Quire position map") }
        let book = root["book"] as? [String: Any] ?? [:]
        sha256 = book["sha256"] as? String ?? ""
        spineStep = book["spineStep"] as? Int ?? 6
        pageCount = root["pageCount"] as? Int ?? 0
        totalLength = root["length"] as? Int ?? 0
        var chapters: [Chapter] = []
        for entry in root["spine"] as? [[String: Any]] ?? [] {
            chapters.append(
                Chapter(
                    spineIndex: entry["index"] as? Int ?? 0, href: entry["href"] as? String ?? "", path: entry["path"] as? String,
                    itemref: entry["itemref"] as? String, firstPage: entry["firstPage"] as? Int ?? 1,
                    pageCount: entry["pageCount"] as? Int ?? 0, length: entry["length"] as? Int ?? 0))
        }
        self.chapters = chapters
        chapterBySpine = Dictionary(uniqueKeysWithValues: chapters.enumerated().map { ($1.spineIndex, $0) })
        pages = root["pages"] as? [[String: Any]] ?? []
        pageStarts = pages.map { page in
            Position(spineIndex: page["spineIndex"] as? Int ?? 0, offset: (page["start"] as? [String: Any])?["offset"] as? Int ?? 0)
        }
        toc = root["toc"] as? [[String: Any]] ?? []
        pageList = (root["pageList"] as? [[String: Any]] ?? []).compactMap { entry in
            guard let label = entry["label"] as? String, let page = entry["page"] as? Int else { return nil }
            return (label, page)
        }
        var positions: [PositionsConvention: [[String: Any]]] = [:]
        let lists = root["positions"] as? [String: Any] ?? [:]
        for convention in PositionsConvention.allCases {
            positions[convention] = (lists[convention.rawValue] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        }
        self.positions = positions
    }

    public func chapter(spineIndex: Int) -> Chapter? { chapterBySpine[spineIndex].map { chapters[$0] } }

    /// The spine item an href names (manifest href or archive path; fragment and query ignored).
    public func chapter(href: String) -> Chapter? {
        var clean = href
        if let hash = clean.firstIndex(of: "#") { clean = String(clean[..<hash]) }
        clean = Href.percentDecode(clean)
        while clean.hasPrefix("/") { clean.removeFirst() }
        return chapters.first { $0.href == clean || $0.path == clean || Href.percentDecode($0.href) == clean }
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
    public func pageJSON(_ page: Int) throws -> [String: Any] {
        guard page >= 1, page <= pages.count else { throw QuireError.unresolvable("page \(page) is outside 1…\(pages.count)") }
        return pages[page - 1]
    }

    public func startPosition(ofPage page: Int) throws -> Position {
        guard page >= 1, page <= pageStarts.count else { throw QuireError.unresolvable("page \(page) is outside 1…\(pageStarts.count)") }
        return pageStarts[page - 1]
    }

    public func page(label: String) throws -> Int {
        if let entry = pageList.first(where: { $0.label == label }) { return entry.page }
        throw QuireError.unresolvable("no print page labelled '\(label)'")
    }

    public func page(tocTitle: String) throws -> Int {
        func search(_ entries: [[String: Any]], _ match: (String) -> Bool) -> Int? {
            for entry in entries {
                if let title = entry["title"] as? String, match(title), let page = entry["page"] as? Int { return page }
                if let found = search(entry["children"] as? [[String: Any]] ?? [], match) { return found }
            }
            return nil
        }
        if let page = search(toc, { $0 == tocTitle }) ?? search(toc, { $0.lowercased() == tocTitle.lowercased() }) { return page }
        throw QuireError.unresolvable("no table-of-contents entry titled '\(tocTitle)'")
    }

    public func page(position: Int, convention: PositionsConvention) throws -> Int {
        let list = positions[convention] ?? []
        guard position >= 1, position <= list.count, let page = list[position - 1]["page"] as? Int else {
            throw QuireError.unresolvable("position \(position) is outside 1…\(list.count) (\(convention.rawValue))")
        }
        return page
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
