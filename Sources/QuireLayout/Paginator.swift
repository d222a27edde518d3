/// Cuts a chapter's flow into pages. Breaks fall only between slices (between lines or unbreakable
/// boxes); each page takes as much as fits, then steps back to the last break that is not to be
/// avoided (widows, orphans, headings kept with what follows, break-inside: avoid). If every break
/// in reach is to be avoided, the constraint gives way rather than leave content unplaced. A slice
/// taller than a page gets a page to itself.
enum Paginator {
    /// One page: its slices, and the part of the flow it shows.
    struct Cut {
        var slices: ClosedRange<Int>
        var top: Double
        var bottom: Double
    }

    /// Where a page beginning with `slice` begins: its kept margins, borders and padding, unless
    /// they would push the slice itself off a page it fits on.
    static func top(of slice: Slice, pageHeight: Double) -> Double {
        max(slice.pageTop, min(slice.top, slice.bottom - pageHeight))
    }

    /// The pages, in order.
    /// A page that begins with a table row under a repeated header (`headers`, by the slices'
    /// `header`) has that much less room.
    static func paginate(_ slices: [Slice], pageHeight: Double, headers: [RepeatedHeader] = []) -> [Cut] {
        guard !slices.isEmpty else { return [] }
        var pages: [Cut] = []
        var first = 0
        let epsilon = 0.01
        while first < slices.count {
            let pageTop = top(of: slices[first], pageHeight: pageHeight)
            let limit = pageTop + pageHeight - repeatedHeaderHeight(slices, first, headers) + epsilon
            var fitEnd = first
            while fitEnd + 1 < slices.count && slices[fitEnd].breakAfter != .forced && slices[fitEnd + 1].pageBottom <= limit {
                fitEnd += 1
            }
            var last = fitEnd
            if fitEnd + 1 < slices.count && slices[fitEnd].breakAfter != .forced {
                var candidate = fitEnd
                while candidate >= first && slices[candidate].breakAfter == .avoid { candidate -= 1 }
                if candidate >= first { last = candidate }
            }
            pages.append(Cut(slices: first...last, top: pageTop, bottom: slices[last].pageBottom))
            first = last + 1
        }
        return pages
    }

    /// The height of the table header drawn again atop a page that begins with `slices[first]`.
    static func repeatedHeaderHeight(_ slices: [Slice], _ first: Int, _ headers: [RepeatedHeader]) -> Double {
        let index = slices[first].header
        guard index >= 0, index < headers.count, headers[index].slices.upperBound < first else { return 0 }
        return headers[index].height
    }
}
