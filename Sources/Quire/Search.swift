import CQuireICU
import QuireCore
import QuireDocument
import QuirePositions

/// A stretch of a chapter's text that matched a search.
public struct TextMatch: Sendable, Hashable {
    /// Where the match starts.
    public var position: Position
    /// Its length in UTF-16 units (the offsets positions count in).
    public var length: Int
    /// The matched offsets in the chapter, as `PaintSettings.highlights` takes them.
    public var range: Range<Int> { position.offset..<(position.offset + length) }
    /// The matched text with a few words either side, for a status line.
    public var context: String
}

extension Book {
    /// The first match of `query` at or after `position` (before it, going back), in reading
    /// order. Matching ignores case and diacritics; a match never spans two chapters.
    /// Spine items without text (images) are passed over. Nil when the book has no further match.
    public func find(_ query: String, from position: Position, forward: Bool) throws -> TextMatch? {
        guard !query.isEmpty else { return nil }
        let chapters = try withAnchors { $0.container.publication.spine.count }
        var spineIndex = position.spineIndex
        while spineIndex >= 0, spineIndex < chapters {
            let units = (try? withAnchors { try $0.units(spineIndex: spineIndex) }) ?? []
            let range: Range<Int>
            if spineIndex == position.spineIndex {
                let offset = min(max(position.offset, 0), units.count)
                range = forward ? offset..<units.count : 0..<offset
            } else {
                range = 0..<units.count
            }
            if let match = TextSearch.first(query, in: units, spineIndex: spineIndex, range: range, forward: forward) { return match }
            spineIndex += forward ? 1 : -1
        }
        return nil
    }

    /// Every match of `query` inside `range` of one chapter, in order.
    public func matches(_ query: String, spineIndex: Int, in range: Range<Int>) throws -> [TextMatch] {
        let units = try withAnchors { try $0.units(spineIndex: spineIndex) }
        var found: [TextMatch] = []
        var from = max(range.lowerBound, 0)
        let end = min(range.upperBound, units.count)
        while from < end, let match = TextSearch.first(query, in: units, spineIndex: spineIndex, range: from..<end, forward: true) {
            found.append(match)
            from = match.range.upperBound
        }
        return found
    }
}

extension Pagination {
    /// The next page after `page` (or before it) holding a match of `query`, and the match; a nil
    /// `page` searches forward from the start of the book. Finding the page waits for its chapter
    /// to settle, like every target past a chapter's start.
    public func search(_ query: String, from page: PageAddress?, forward: Bool) throws -> (page: PageAddress, match: TextMatch)? {
        let from: Position
        if let page, forward {
            guard let next = try address(after: page) else { return nil }
            from = try startPosition(of: next)
        } else if let page {
            from = try startPosition(of: page)
        } else {
            from = Position(spineIndex: 0, offset: 0)
        }
        guard let match = try book.find(query, from: from, forward: forward) else { return nil }
        guard case .reflow(let pages) = engine else { return nil }
        return (try pages.address(of: match.position), match)
    }

    /// The chapter offsets of every match of `query` on a page: what `PaintSettings.highlights` marks.
    public func highlights(of query: String, on page: PageAddress) throws -> [Range<Int>] {
        let start = try startPosition(of: page)
        let stop = try address(after: page).map { try startPosition(of: $0) }
        let end = stop?.spineIndex == start.spineIndex ? stop!.offset : Int.max
        return try book.matches(query, spineIndex: start.spineIndex, in: start.offset..<end).map(\.range)
    }
}

/// Case- and diacritic-insensitive search in UTF-16 text. Both sides are folded by ICU
/// (`quire_search_fold`: each character decomposed, its nonspacing marks dropped, the rest
/// case-folded), so "Etre" finds "Être" and "STRASSE" finds "Straße"; a match starts and ends at
/// whole characters, and is reported in the text's own offsets.
enum TextSearch {
    /// Folded text and, for each folded unit, the source character's range.
    struct Folded {
        var units: [UInt16]
        var starts: [Int32]
        var ends: [Int32]
    }

    /// Nil on an ICU error.
    static func fold(_ text: UnsafeBufferPointer<UInt16>) -> Folded? {
        var capacity = text.count + text.count / 2 + 8
        while true {
            var folded = Folded(
                units: [UInt16](repeating: 0, count: capacity), starts: [Int32](repeating: 0, count: capacity),
                ends: [Int32](repeating: 0, count: capacity))
            let count = folded.units.withUnsafeMutableBufferPointer { units in
                folded.starts.withUnsafeMutableBufferPointer { starts in
                    folded.ends.withUnsafeMutableBufferPointer { ends in
                        quire_search_fold(text.baseAddress, Int32(text.count), units.baseAddress, starts.baseAddress, ends.baseAddress, Int32(capacity))
                    }
                }
            }
            if count == -2 {
                capacity *= 2
                continue
            }
            guard count >= 0 else { return nil }
            folded.units.removeLast(capacity - Int(count))
            folded.starts.removeLast(capacity - Int(count))
            folded.ends.removeLast(capacity - Int(count))
            return folded
        }
    }

    static func first(_ query: String, in units: [UInt16], spineIndex: Int, range: Range<Int>, forward: Bool) -> TextMatch? {
        guard !range.isEmpty, range.upperBound <= units.count else { return nil }
        guard let needle = query.utf16Units.withUnsafeBufferPointer({ fold($0) })?.units, !needle.isEmpty,
            let text = units.withUnsafeBufferPointer({ fold(UnsafeBufferPointer(rebasing: $0[range])) }),
            let at = find(needle, in: text, forward: forward)
        else { return nil }
        let offset = range.lowerBound + Int(text.starts[at])
        let end = range.lowerBound + Int(text.ends[at + needle.count - 1])
        return TextMatch(position: Position(spineIndex: spineIndex, offset: offset), length: end - offset, context: context(units, offset..<end))
    }

    /// Where `needle` first occurs in `text` (last, going back), starting and ending at whole
    /// characters: a character folds to several units ("ß" to "ss", a Hangul syllable to its
    /// letters), and a match of some of them ("s", "하" in "한") is not a match.
    static func find(_ needle: [UInt16], in text: Folded, forward: Bool) -> Int? {
        let haystack = text.units
        guard needle.count <= haystack.count else { return nil }
        let candidates = 0...(haystack.count - needle.count)
        let matches = { (start: Int) -> Bool in
            let end = start + needle.count
            return haystack[start] == needle[0] && (start == 0 || text.starts[start] != text.starts[start - 1])
                && (end == haystack.count || text.starts[end] != text.starts[end - 1])
                && haystack[start..<end].elementsEqual(needle)
        }
        return forward ? candidates.first(where: matches) : candidates.reversed().first(where: matches)
    }

    /// Up to 30 units either side of a match, cut at spaces, on one line.
    static func context(_ units: [UInt16], _ match: Range<Int>) -> String {
        var lower = max(0, match.lowerBound - 30)
        var upper = min(units.count, match.upperBound + 30)
        while lower > 0, lower < match.lowerBound, units[lower - 1] != 0x20 { lower += 1 }
        while upper < units.count, upper > match.upperBound, units[upper] != 0x20 { upper -= 1 }
        let text = String(decoding: units[lower..<upper], as: UTF16.self)
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
