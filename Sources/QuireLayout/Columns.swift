import QuireStyle

// Multi-column layout (CSS Multi-column Layout 1) in a paged chapter.
//
// A multi-column box's content is laid out once, at the column width, in a flow of its own.
// That flow is then cut into columns by the paginator itself, so a column ends where a page
// would: between lines, keeping widows and orphans and headings with what follows. The columns
// side by side on one page are a *column set*, and each set is one slice of the chapter's flow,
// as tall as its tallest column:
//
// - the first set is as tall as the room left on the page it starts on (the paginator is run
//   over the flow so far to find it), or a whole page when not even one line fits there;
// - each set after it fills a page;
// - the last is balanced (`column-fill: balance`, the initial value): it takes the least height
//   at which its content still fits in the columns. With `column-fill: auto` it fills columns
//   in turn instead.
//
// A multi-column box in a flow of its own (a table cell, a float, a positioned box) has no page
// to fill: it is one balanced set. `column-span` is not part of EPUB's CSS profile and is not
// read. A set is never broken by a page, so page starts fall between sets.

extension BlockLayout {
    /// How many columns a content box `available` wide holds and how wide each is, by the
    /// spec's pseudo-algorithm (§3.4), with columns at least 8 device pixels wide.
    func columnGeometry(_ style: ComputedStyle, available: Double) -> (count: Int, width: Double, gap: Double) {
        let gap = max(0, px(style.columnGap?.resolve(against: available / scale) ?? style.fontSize))
        var count: Int
        switch (style.columnCount, style.columnWidth.map(px)) {
        case (let n?, nil): count = n
        case (let n, let width?): count = min(n ?? .max, max(1, Int(((available + gap) / max(width + gap, 1)).rounded(.down))))
        default: count = 1
        }
        count = max(1, min(count, Int(((available + gap) / (px(8) + gap)).rounded(.down))))
        return (count, max(0, (available - Double(count - 1) * gap) / Double(count)), gap)
    }

    /// Lays `block`'s children out in `count` columns (see the note above). Returns false, having
    /// laid nothing out, when the content has no slices to set in columns.
    func layoutColumns(
        _ block: BlockNode, geometry: (count: Int, width: Double, gap: Double), left: Double, flow: Flow, marker: GeneratedContent?
    ) -> Bool {
        let inner = Flow()
        layoutChildren(block.children, left: 0, width: geometry.width, flow: inner, listMarker: marker)
        inner.flushMargin()
        guard !inner.slices.isEmpty else { return false }
        flow.flushMargin()
        let paged = containingBlocks.frames.first?.flow === flow
        var room = paged ? roomLeftOnPage(flow) : .infinity
        if room < inner.slices[0].bottom - inner.slices[0].top + 0.5 { room = pageHeight }
        let style = block.style
        let (itemsBySlice, linesBySlice) = inner.bySlice()
        // Where each column's part of the inner flow went: for the layers anchored in it.
        var placements: [(top: Double, dx: Double, dy: Double)] = []
        var first = 0
        while first < inner.slices.count {
            // Only what `count` columns of this room could hold is cut (so a long run costs each
            // set its own slices, not all that follow).
            let natural = Paginator.top(of: inner.slices[first], pageHeight: .infinity)
            let reach = paged ? Double(geometry.count) * room : .infinity
            var end = first + 1
            while end < inner.slices.count, inner.slices[end].top - natural < reach { end += 1 }
            let rest = Array(inner.slices[first..<end])
            let balance = end == inner.slices.count && (style.columnBalance || !paged)
            let cuts = columnCuts(rest, count: geometry.count, room: paged ? room : .infinity, balance: balance)
            let height = cuts.map { $0.bottom - $0.top }.max() ?? 0
            let start = rest[cuts[0].slices.lowerBound...cuts[cuts.count - 1].slices.upperBound].first { $0.start != Flow.textAfter }?.start ?? Flow.textAfter
            let set = flow.addSlice(height: height, start: start)
            let setTop = flow.slices[set].top
            for (column, cut) in cuts.enumerated() {
                let step = geometry.width + geometry.gap
                let dx = left + step * Double(style.direction == .rtl ? geometry.count - 1 - column : column)
                let dy = setTop - cut.top
                placements.append((cut.top, dx, dy))
                for span in inner.spanning where span.bottom > cut.top && span.top < cut.bottom {
                    if let part = clip(span.item, top: cut.top, bottom: cut.bottom) { flow.add(translate(part, dx: dx, dy: dy), slice: set) }
                }
                for index in cut.slices {
                    for item in itemsBySlice[first + index] { flow.add(translate(item, dx: dx, dy: dy), slice: set) }
                    for var record in linesBySlice[first + index] {
                        record.paragraph += flow.paragraphCount
                        record.rect.x += dx
                        record.rect.y += dy
                        flow.lines.append((set, record))
                    }
                }
                if column > 0 { drawColumnRule(style, x: dx - (style.direction == .rtl ? -geometry.width - geometry.gap / 2 : geometry.gap / 2), top: setTop, height: height, flow: flow, slice: set) }
            }
            first += cuts[cuts.count - 1].slices.upperBound + 1
            room = pageHeight
        }
        flow.paragraphCount += inner.paragraphCount
        for layer in inner.layers {
            let placement = placements.last { $0.top <= layer.dy } ?? placements[0]
            flow.layers.append(layer.moved(dx: placement.dx, dy: placement.dy))
        }
        return true
    }

    /// The columns of one set: as many as fit in `room` (all of `count` when more content
    /// follows), or, for the last set when balancing, the least height that holds the rest.
    func columnCuts(_ slices: [Slice], count: Int, room: Double, balance: Bool) -> [Paginator.Cut] {
        let natural = Paginator.top(of: slices[0], pageHeight: .infinity)
        let total = (slices.last.map { $0.pageBottom } ?? natural) - natural
        let limit = min(room, total + 1)
        let filled = Paginator.paginate(slices, pageHeight: limit)
        guard filled.count <= count, balance, count > 1 else { return Array(filled.prefix(count)) }
        // The least height that still takes at most `count` columns, to half a pixel.
        var low = slices.map { $0.bottom - $0.top }.max() ?? 0
        var high = limit
        var best = filled
        for _ in 0..<32 where high - low > 0.5 {
            let middle = (low + high) / 2
            let cuts = Paginator.paginate(slices, pageHeight: middle)
            if cuts.count <= count {
                best = cuts
                high = middle
            } else {
                low = middle
            }
        }
        return best
    }

    /// How much of the current page the chapter's flow leaves below its cursor.
    func roomLeftOnPage(_ flow: Flow) -> Double {
        if flow.slices.isEmpty || flow.forcedBreakPending {
            return pageHeight - (flow.y - min(flow.forcedBreakTop, flow.y))
        }
        let cuts = Paginator.paginate(flow.slices, pageHeight: pageHeight, headers: flow.headers)
        guard let last = cuts.last else { return pageHeight }
        return last.top + pageHeight - Paginator.repeatedHeaderHeight(flow.slices, last.slices.lowerBound, flow.headers) - flow.y
    }

    /// `column-rule`: a line down the middle of the gap before a column.
    func drawColumnRule(_ style: ComputedStyle, x: Double, top: Double, height: Double, flow: Flow, slice: Int) {
        guard style.columnRuleStyle != .none, style.columnRuleStyle != .hidden, style.columnRuleWidth > 0, height > 0 else { return }
        let width = max(1, px(style.columnRuleWidth))
        flow.add(
            .stroke(from: Point(x: x, y: top), to: Point(x: x, y: top + height), width: width, color: style.columnRuleColor ?? style.color, style: style.columnRuleStyle),
            slice: slice)
    }
}
