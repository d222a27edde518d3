/// Cuts a chapter's flow into pages. Breaks fall only between slices (between lines or unbreakable
/// boxes); each page takes as much as fits, then steps back to the last break that is not to be
/// avoided (widows, orphans, headings kept with what follows, break-inside: avoid). If every break
/// in reach is to be avoided, the constraint gives way rather than leave content unplaced. A slice
/// taller than a page gets a page to itself.
enum Paginator {
    /// Slice ranges, one per page.
    static func paginate(_ slices: [Slice], pageHeight: Double) -> [ClosedRange<Int>] {
        guard !slices.isEmpty else { return [] }
        var pages: [ClosedRange<Int>] = []
        var first = 0
        let epsilon = 0.01
        while first < slices.count {
            let limit = slices[first].top + pageHeight + epsilon
            var fitEnd = first
            while fitEnd + 1 < slices.count && slices[fitEnd].breakAfter != .forced && slices[fitEnd + 1].bottom <= limit {
                fitEnd += 1
            }
            var last = fitEnd
            if fitEnd + 1 < slices.count && slices[fitEnd].breakAfter != .forced {
                var candidate = fitEnd
                while candidate >= first && slices[candidate].breakAfter == .avoid { candidate -= 1 }
                if candidate >= first { last = candidate }
            }
            pages.append(first...last)
            first = last + 1
        }
        return pages
    }
}
