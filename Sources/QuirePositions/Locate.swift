import QuireContainer
import QuireCore
import QuireDocument

/// Lookups shared by `quire locate` and library users.
public enum Locate {
    /// A Readium/Komga Locator: href + (fragments, cssSelector, partialCfi, progression, position) or totalProgression.
    /// `positionOfFragment` finds an element id (or a CFI fragment) in a spine item, which needs the book's DOM.
    public static func resolve(locator: Locator, map: MapIndex, positionOfFragment: (_ spineIndex: Int, _ fragment: String) throws -> Position) throws -> (Int, Position?) {
        let locations = locator.locations
        guard !locator.href.isEmpty else {
            if let total = locations.totalProgression {
                let found = try map.position(totalProgression: total)
                return (try map.page(of: found), found)
            }
            throw QuireError.unresolvable("the locator has neither href nor totalProgression")
        }
        let href = locator.href
        guard let chapter = map.chapter(href: href) else { throw QuireError.unresolvable("href '\(href)' is not in the book") }
        var fragment = locations.fragments.first ?? href.split(separator: "#", maxSplits: 1).dropFirst().first.map(String.init)
        if let selector = locations.cssSelector {
            guard selector.hasPrefix("#"), !selector.contains(" ") else {
                throw QuireError.unresolvable("only #id CSS selectors are resolved, not '\(selector)'")
            }
            fragment = String(selector.dropFirst())
        }
        if let partial = locations.partialCfi {
            fragment = partial.hasPrefix("epubcfi(") ? partial : "epubcfi(\(partial))"
        }
        if let fragment, !fragment.isEmpty {
            let found = try positionOfFragment(chapter.spineIndex, PercentEncoding.decode(fragment))
            return (try map.page(of: found), found)
        }
        if let progression = locations.progression {
            guard progression >= 0, progression <= 1 else { throw QuireError.unresolvable("progression \(progression) is outside 0…1") }
            let found = Position(spineIndex: chapter.spineIndex, offset: Int((progression * Double(chapter.length)).rounded()))
            return (try map.page(of: found), found)
        }
        // A position or a totalProgression counts Readium's positions list; its entry must be in the href.
        let number = try locations.position ?? locations.totalProgression.map { try map.readiumPosition(totalProgression: $0) }
        if let number {
            let item = try map.positionsItem(number, convention: .readium)
            // (A bitmap fallback's href names its picture: the page tells which spine item it stands for.)
            guard let page = item.page, (chapter.firstPage..<(chapter.firstPage + max(chapter.pageCount, 1))).contains(page) else {
                throw QuireError.unresolvable("Readium position \(number) is in \(item.href), not in the locator's href \(href)")
            }
            return (try map.page(position: number, convention: .readium), nil)
        }
        let found = Position(spineIndex: chapter.spineIndex, offset: 0)
        return (try map.page(of: found), found)
    }

    /// The page's start as a Readium Locator, with Quire's cfi, xpointer and offset in `locations`.
    public static func startLocator(_ entry: PositionMap.Page) -> Locator {
        switch entry.content {
        case .pdf(let pdf):
            return pdf.locator
        case .text(let text):
            return boundaryLocator(text, text.start, excerpt: text.excerpt)
        }
    }

    /// The page's end as a Readium Locator (no text excerpt: the map keeps one at page starts).
    public static func endLocator(_ entry: PositionMap.Page) -> Locator {
        switch entry.content {
        case .pdf(let pdf):
            return pdf.locator
        case .text(let text):
            return boundaryLocator(text, text.end, excerpt: nil)
        }
    }

    private static func boundaryLocator(_ page: PositionMap.TextPage, _ boundary: PositionMap.Boundary, excerpt: PositionMap.TextContext?) -> Locator {
        Locator(
            href: page.path ?? page.href, type: "application/xhtml+xml",
            locations: Locator.Locations(
                progression: boundary.progression, totalProgression: boundary.totalProgression, cfi: boundary.cfi, xpointer: boundary.xpointer,
                offset: boundary.offset),
            text: excerpt)
    }
}
