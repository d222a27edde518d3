import QuireXML
import QuireStyle
import QuireText

/// Where a page may break after a slice.
enum BreakHint {
    case normal, avoid, forced
}

/// An unbreakable strip of the vertical flow: a line, an image, a table row.
struct Slice {
    var top: Double
    var bottom: Double
    var breakAfter: BreakHint
    /// Text offset where the slice's content starts (for page start positions).
    var start: Int
    /// Where a page that begins with this slice begins: above `top` by the borders and padding of
    /// boxes that open here and, after a forced break or at the chapter's start, by the margins too.
    var pageTop: Double
    /// Where a page that ends with this slice ends: below `bottom` by the bottom padding and
    /// borders of the boxes that close after it.
    var pageBottom: Double
    /// A table row whose table repeats its header rows (`Flow.headers`) atop a page it begins.
    var header = -1
}

/// A block set horizontally (`writing-mode: horizontal-tb`) in a chapter set in columns: an
/// orthogonal flow, laid out on its own the physical page's way up. `box` is where it stands in
/// the turned frame of the column flow; its items and lines are relative to its top-left corner on
/// the physical page, and are placed there after the page is turned, themselves unturned.
struct OrthogonalBlock {
    var slice: Int
    var box: Rect
    var items: [DisplayItem]
    var lines: [LineRecord]
}

/// A table's header rows, drawn again at the top of each page its body continues on.
struct RepeatedHeader {
    var top: Double
    var bottom: Double
    var slices: ClosedRange<Int>
    var height: Double { bottom - top }
}

/// The continuous vertical flow of one chapter before it is cut into pages. Coordinates are device
/// pixels relative to the content box's left edge and the flow's top.
final class Flow {
    var slices: [Slice] = []
    var headers: [RepeatedHeader] = []
    /// Display items owned by a slice: they go wherever the slice goes.
    var items: [(slice: Int, item: DisplayItem)] = []
    /// Backgrounds and borders that may span several slices (and pages): clipped to each page.
    var spanning: [(top: Double, bottom: Double, item: DisplayItem)] = []
    var lines: [(slice: Int, record: LineRecord)] = []
    var y = 0.0
    var pendingMarginPositive = 0.0
    var pendingMarginNegative = 0.0
    var forcedBreakPending = false
    /// The page top for a slice after a forced break (or the first): CSS Fragmentation truncates
    /// margins only at unforced breaks, so those after a forced break, and at the chapter's
    /// start, stay at the top of the page.
    var forcedBreakTop = 0.0
    /// The top border edge of the outermost box that opened since the last slice: an unforced
    /// break truncates the margins above it but keeps its border and padding.
    var openedBoxTop: Double?
    var paragraphCount = 0
    /// Floats still beside the flow: their side, horizontal extent and vertical span.
    var floats: [(side: FloatMode, left: Double, right: Double, top: Double, bottom: Double)] = []
    /// Absolutely positioned boxes, each laid out in a flow of its own and moved by (dx, dy): out
    /// of this flow's pagination, drawn on the pages that hold them (`Layer`).
    var layers: [Layer] = []
    /// Blocks set horizontally in a chapter set in columns, placed on the page unturned.
    var orthogonal: [OrthogonalBlock] = []

    /// Puts a flow laid out on its own (a table cell, a float) into one slice of this one, moved
    /// by (dx, dy): backgrounds and borders first, so its text is painted over them.
    func place(_ inner: Flow, dx: Double, dy: Double, in slice: Int) {
        for span in inner.spanning { add(translate(span.item, dx: dx, dy: dy), slice: slice) }
        for (_, item) in inner.items { add(translate(item, dx: dx, dy: dy), slice: slice) }
        for (_, record) in inner.lines {
            var moved = record.moved(dx: dx, dy: dy)
            moved.paragraph += paragraphCount
            lines.append((slice, moved))
        }
        paragraphCount += inner.paragraphCount
        layers += inner.layers.map { $0.moved(dx: dx, dy: dy) }
        orthogonal += inner.orthogonal.map { block in
            var moved = block
            moved.slice = slice
            moved.box.x += dx
            moved.box.y += dy
            return moved
        }
    }

    /// Space floats take from a line spanning `top..<bottom` of a box from `left` to `right`.
    func floatInsets(top: Double, bottom: Double, left: Double, right: Double) -> (left: Double, right: Double) {
        var insetLeft = 0.0
        var insetRight = 0.0
        for float in floats where float.top < bottom && float.bottom > top {
            if float.side == .left { insetLeft = max(insetLeft, float.right - left) } else { insetRight = max(insetRight, right - float.left) }
        }
        return (max(0, insetLeft), max(0, insetRight))
    }

    /// `clear`: move below the floats on the given side.
    func clear(_ side: Clear) {
        guard side != .none else { return }
        let bottoms = floats.filter { side == .both || (side == .left && $0.side == .left) || (side == .right && $0.side == .right) }.map(\.bottom)
        if let lowest = bottoms.max() {
            flushMargin()
            y = max(y, lowest)
        }
    }

    func collapseMargin(_ margin: Double) {
        if margin >= 0 { pendingMarginPositive = max(pendingMarginPositive, margin) } else { pendingMarginNegative = min(pendingMarginNegative, margin) }
    }

    func flushMargin() {
        y += pendingMarginPositive + pendingMarginNegative
        pendingMarginPositive = 0
        pendingMarginNegative = 0
    }

    /// A forced break before whatever comes next. The margins before it are truncated (they
    /// would only pad the previous page's foot); at the chapter's start it changes nothing.
    func forceBreak() {
        guard !slices.isEmpty else { return }
        forcedBreakPending = true
        pendingMarginPositive = 0
        pendingMarginNegative = 0
        forcedBreakTop = y
    }

    /// A box's top border or padding begins at the cursor (after its margins).
    func openBox() {
        if openedBoxTop == nil { openedBoxTop = y }
    }

    /// A box's bottom padding and border end at the cursor: they belong to the page that holds
    /// the box's last slice.
    func closeBox(firstSlice: Int) {
        guard let last = slices.indices.last, last >= firstSlice else { return }
        slices[last].pageBottom = max(slices[last].pageBottom, y)
    }

    /// Adds a slice at the cursor after collapsing pending margins; returns its index.
    func addSlice(height: Double, start: Int) -> Int {
        flushMargin()
        let pageTop: Double
        if slices.isEmpty || forcedBreakPending {
            pageTop = min(forcedBreakTop, y)
        } else {
            pageTop = openedBoxTop ?? y
        }
        if forcedBreakPending, !slices.isEmpty { slices[slices.count - 1].breakAfter = .forced }
        forcedBreakPending = false
        openedBoxTop = nil
        slices.append(Slice(top: y, bottom: y + height, breakAfter: .normal, start: start, pageTop: pageTop, pageBottom: y + height))
        y += height
        return slices.count - 1
    }

    func add(_ item: DisplayItem, slice: Int) { items.append((slice, item)) }

    /// The display items and line records owned by each slice, in the order they were added.
    func bySlice() -> (items: [[DisplayItem]], lines: [[LineRecord]]) {
        var itemsBySlice = [[DisplayItem]](repeating: [], count: slices.count)
        for (slice, item) in items { itemsBySlice[slice].append(item) }
        var linesBySlice = [[LineRecord]](repeating: [], count: slices.count)
        for (slice, record) in lines { linesBySlice[slice].append(record) }
        return (itemsBySlice, linesBySlice)
    }

    /// A slice's `start` until `resolveSpaceStarts` gives it the offset of the text after it.
    static let textAfter = -1

    /// Empty room in the flow (a sized box's height beyond its content) as slices the paginator
    /// sees, so the room is on some page and not lost between two; in `step`s so a page may
    /// break inside it.
    func addSpace(_ height: Double, step: Double) {
        var left = height
        while left > 0.01 {
            let piece = left > step * 1.5 ? step : left
            _ = addSlice(height: piece, start: Self.textAfter)
            left -= piece
        }
    }

    /// Space slices start where the next text does (the chapter's end when none follows).
    func resolveSpaceStarts(textLength: Int) {
        var next = textLength
        for index in slices.indices.reversed() {
            if slices[index].start == Self.textAfter { slices[index].start = next } else { next = slices[index].start }
        }
    }

    /// How much of the flow there is: what `shift(since:by:)` moves.
    struct Mark {
        var slices: Int, items: Int, spanning: Int, lines: Int, floats: Int, layers: Int, orthogonal: Int
    }

    var mark: Mark {
        Mark(
            slices: slices.count, items: items.count, spanning: spanning.count, lines: lines.count, floats: floats.count, layers: layers.count,
            orthogonal: orthogonal.count)
    }

    /// Moves what was drawn since `mark` by (dx, dy) without moving the flow (`position:
    /// relative`): the slices, and so the pages, stay where they were.
    func offset(since mark: Mark, dx: Double, dy: Double) {
        for index in mark.items..<items.count { items[index].item = translate(items[index].item, dx: dx, dy: dy) }
        for index in mark.spanning..<spanning.count { spanning[index].item = translate(spanning[index].item, dx: dx, dy: dy) }
        for index in mark.lines..<lines.count {
            lines[index].record.rect.x += dx
            lines[index].record.rect.y += dy
        }
        for index in mark.layers..<layers.count { layers[index] = layers[index].moved(dx: dx, dy: dy) }
        for index in mark.orthogonal..<orthogonal.count {
            orthogonal[index].box.x += dx
            orthogonal[index].box.y += dy
        }
    }

    /// `position: relative`: what a box drew since `mark` moves by its offsets; its room stays.
    func moveRelatively(since mark: Mark, _ style: ComputedStyle, containingWidth: Double, scale: Double) {
        guard style.position == .relative else { return }
        let offset = relativeOffset(style, containingWidth: containingWidth, scale: scale)
        if offset != (0, 0) { self.offset(since: mark, dx: offset.dx, dy: offset.dy) }
    }

    /// Moves everything laid out since `mark` down by `dy` (a flex container centring its items).
    /// The first slice's page top stays: the space above it belongs to the container.
    func shift(since mark: Mark, by dy: Double) {
        for index in mark.slices..<slices.count {
            slices[index].top += dy
            slices[index].bottom += dy
            slices[index].pageBottom += dy
            if index > mark.slices { slices[index].pageTop += dy }
        }
        for index in mark.items..<items.count { items[index].item = translate(items[index].item, dx: 0, dy: dy) }
        for index in mark.spanning..<spanning.count {
            spanning[index].top += dy
            spanning[index].bottom += dy
            spanning[index].item = translate(spanning[index].item, dx: 0, dy: dy)
        }
        for index in mark.lines..<lines.count { lines[index].record.rect.y += dy }
        for index in headers.indices where headers[index].slices.lowerBound >= mark.slices {
            headers[index].top += dy
            headers[index].bottom += dy
        }
        for index in mark.floats..<floats.count {
            floats[index].top += dy
            floats[index].bottom += dy
        }
        for index in mark.layers..<layers.count { layers[index] = layers[index].moved(dx: 0, dy: dy) }
        for index in mark.orthogonal..<orthogonal.count { orthogonal[index].box.y += dy }
        y += dy
    }
}

/// Lays blocks out top to bottom into a flow: margins collapse through a pending-margin
/// accumulator (siblings and parent/child alike), paragraphs become lines, tables become rows.
struct BlockLayout {
    let inline: InlineLayout
    let scale: Double
    var pageHeight: Double
    /// The element whose background paints the whole page instead of its own box (CSS 2.1 §14.2:
    /// the root's, or else body's, background covers the canvas).
    var canvasNode: NodeID? = nil
    /// The chapter's archive path, which background image URLs from style attributes are relative to.
    var documentPath = ""
    /// The positioned boxes' containing blocks, as layout opens and closes them.
    let containingBlocks = ContainingBlocks()

    func px(_ value: Double) -> Double { value * scale }

    func layoutChildren(_ children: [FlowNode], left: Double, width: Double, flow: Flow, listMarker: GeneratedContent?) {
        var marker = listMarker
        for (index, child) in children.enumerated() {
            if child.isOutOfFlow {
                deferPositioned(child, left: left, width: width, flow: flow)
                continue
            }
            switch child {
            case .block(let block) where inline.vertical && block.style.writingMode == .horizontalTB && block.style.float == .none:
                layoutOrthogonal(child, style: block.style, left: left, width: width, flow: flow)
            case .table(let table) where inline.vertical && table.style.writingMode == .horizontalTB:
                layoutOrthogonal(child, style: table.style, left: left, width: width, flow: flow)
            case .block(let block) where block.style.float != .none:
                // Its text comes after the start of the paragraph it floats beside: the slice starts
                // there, so page boundaries never skip that paragraph's first words.
                let own = Self.firstOffset(child)
                let next = Self.firstOffset(in: children[(index + 1)...])
                layoutFloat(block, left: left, width: width, flow: flow, start: [own, next].compactMap { $0 }.min() ?? 0)
            case .block(let block):
                layoutBlock(block, left: left, width: width, flow: flow, inheritedMarker: marker)
            case .paragraph(let paragraph):
                layoutParagraph(paragraph, left: left, width: width, flow: flow, marker: marker)
            case .replaced(let box) where box.style.float != .none:
                layoutFloat(box, left: left, width: width, flow: flow)
            case .replaced(let box):
                flow.clear(box.style.clear)
                layoutReplaced(box, left: left, width: width, flow: flow)
            case .table(let table):
                layoutTable(table, left: left, width: width, flow: flow)
            }
            marker = nil
        }
        if let marker, children.isEmpty {
            // An empty list item still shows its marker.
            let paragraph = Paragraph(blockStyle: marker.style, startOffset: 0)
            layoutParagraph(paragraph, left: left, width: width, flow: flow, marker: marker)
        }
    }

    func layoutBlock(_ block: BlockNode, left: Double, width containingWidth: Double, flow: Flow, inheritedMarker: GeneratedContent?) {
        let style = block.style
        let start = flow.mark
        flow.clear(style.clear)
        let basis = containingWidth / scale
        let marginTop = px(style.margin.top.resolve(against: basis) ?? 0)
        let marginBottom = px(style.margin.bottom.resolve(against: basis) ?? 0)
        var marginLeft = px(style.margin.left.resolve(against: basis) ?? 0)
        var marginRight = px(style.margin.right.resolve(against: basis) ?? 0)
        let border = borderEdges(style)
        var padding = Edges(
            top: px(style.padding.top.resolve(against: basis)), right: px(style.padding.right.resolve(against: basis)),
            bottom: px(style.padding.bottom.resolve(against: basis)), left: px(style.padding.left.resolve(against: basis)))
        var contentWidth = containingWidth - marginLeft - marginRight - border.left - border.right - padding.left - padding.right
        // Indentation that would leave lines shorter than 8 em (lists nested five deep on a phone)
        // gives way proportionally, so text never runs a character or two to the line.
        let minimumMeasure = min(containingWidth - border.left - border.right, px(style.fontSize * 8))
        let insets = max(marginLeft, 0) + max(marginRight, 0) + padding.left + padding.right
        if contentWidth < minimumMeasure, insets > 0, !block.fitsItsContent {
            let keep = max(0, min(1, (insets - (minimumMeasure - contentWidth)) / insets))
            if marginLeft > 0 { marginLeft *= keep }
            if marginRight > 0 { marginRight *= keep }
            padding.left *= keep
            padding.right *= keep
            contentWidth = containingWidth - marginLeft - marginRight - border.left - border.right - padding.left - padding.right
        }
        // Room a box narrower than its containing block leaves: auto margins take it, or, for an
        // inline-block standing as a block (`shrinkToFit`), its line's text-align places the box
        // (an inline-block's auto margins are zero).
        func placeBox(leaving extra: Double, autoLeft: Bool, autoRight: Bool) {
            if let align = block.shrinkToFit {
                switch align {
                case .center: marginLeft += extra / 2
                case .right: marginLeft += extra
                case .end where style.direction == .ltr: marginLeft += extra
                case .start where style.direction == .rtl: marginLeft += extra
                default: break
                }
                marginRight = containingWidth - marginLeft - border.left - border.right - padding.left - padding.right - contentWidth
                return
            }
            switch (autoLeft, autoRight) {
            case (true, true):
                marginLeft += extra / 2
                marginRight += extra / 2
            case (true, false): marginLeft += extra
            default: marginRight += extra
            }
        }
        let autoLeft: Bool = { if case .auto = style.margin.left { return true } else { return false } }()
        let autoRight: Bool = { if case .auto = style.margin.right { return true } else { return false } }()
        if let specified = style.width.resolve(against: basis).map(px) {
            var target = specified
            if let maxWidth = style.maxWidth { target = min(target, px(maxWidth.resolve(against: basis))) }
            target = max(target, px(style.minWidth.resolve(against: basis)))
            if target < contentWidth {
                let extra = contentWidth - target
                contentWidth = target
                placeBox(leaving: extra, autoLeft: autoLeft, autoRight: autoRight)
            }
        } else {
            var target = contentWidth
            if let maxWidth = style.maxWidth.map({ px($0.resolve(against: basis)) }) { target = min(target, maxWidth) }
            if block.shrinkToFit != nil { target = min(target, max(contentWidths(block.children).max, px(style.minWidth.resolve(against: basis)))) }
            if target < contentWidth {
                let extra = contentWidth - target
                contentWidth = target
                // Under max-width, an auto left margin centres the box; otherwise the room goes right.
                placeBox(leaving: extra, autoLeft: autoLeft, autoRight: autoLeft)
            }
        }
        contentWidth = max(contentWidth, px(8))

        switch style.breakBefore {
        case .always, .page, .left, .right, .recto, .verso: flow.forceBreak()
        case .avoid, .avoidPage:
            if !flow.slices.isEmpty { flow.slices[flow.slices.count - 1].breakAfter = .avoid }
        default: break
        }
        let firstSlice = flow.slices.count
        flow.collapseMargin(marginTop)
        if border.top > 0 || padding.top > 0 {
            flow.flushMargin()
            flow.openBox()
        }
        let boxTop = flow.y + (flow.pendingMarginPositive + flow.pendingMarginNegative)
        flow.y += border.top + padding.top
        let contentLeft = left + marginLeft + border.left + padding.left
        let positioned = style.position != .static
        if positioned {
            openContainingBlock(flow: flow, left: contentLeft - padding.left, top: boxTop + border.top, width: contentWidth + padding.left + padding.right)
        }
        let columns = style.isMultiColumn ? columnGeometry(style, available: contentWidth) : nil
        if let columns, columns.count > 1,
            layoutColumns(block, geometry: columns, left: contentLeft, flow: flow, marker: block.marker ?? inheritedMarker) {
            // Laid out in columns.
        } else if style.display == .flex, style.flexDirection == .column || style.flexDirection == .columnReverse {
            layoutFlexColumn(block, left: contentLeft, width: contentWidth, flow: flow, border: border, padding: padding)
        } else {
            layoutChildren(block.children, left: contentLeft, width: contentWidth, flow: flow, listMarker: block.marker ?? inheritedMarker)
        }
        // height and min-height: sized boxes keep their size even when empty.
        let minimumContent = minimumContentHeight(style, border: border, padding: padding)
        let contentTop = boxTop + border.top + padding.top
        if minimumContent > 0, flow.y + flow.pendingMarginPositive + flow.pendingMarginNegative < contentTop + minimumContent {
            flow.flushMargin()
            // Bounded: at most 64 pages of room in at most 256 slices, whatever the CSS says.
            let room = min(contentTop + minimumContent - flow.y, pageHeight * 64)
            flow.addSpace(room, step: max(px(16), room / 256))
        }
        if border.bottom > 0 || padding.bottom > 0 { flow.flushMargin() }
        flow.y += padding.bottom + border.bottom
        if border.bottom > 0 || padding.bottom > 0 { flow.closeBox(firstSlice: firstSlice) }
        let boxBottom = flow.y
        let boxLeft = left + marginLeft
        let boxWidth = containingWidth - marginLeft - marginRight
        paintBox(style, border: border, rect: Rect(x: boxLeft, y: boxTop, width: boxWidth, height: boxBottom - boxTop), flow: flow,
            background: block.node == nil || block.node != canvasNode)
        if positioned {
            closeContainingBlock(height: boxBottom - border.bottom - boxTop - border.top)
            flow.moveRelatively(since: start, style, containingWidth: containingWidth, scale: scale)
        }
        flow.collapseMargin(marginBottom)
        let lastSlice = flow.slices.count - 1
        if style.breakInside != .auto, lastSlice > firstSlice {
            for index in firstSlice..<lastSlice where flow.slices[index].breakAfter == .normal { flow.slices[index].breakAfter = .avoid }
        }
        switch style.breakAfter {
        case .always, .page, .left, .right, .recto, .verso: flow.forceBreak()
        case .avoid, .avoidPage:
            if lastSlice >= firstSlice { flow.slices[lastSlice].breakAfter = .avoid }
        default: break
        }
    }

    /// The least height of a block's content box from `height` and `min-height` (less padding
    /// and borders under box-sizing: border-box). Content taller than `height` grows the box
    /// rather than overlapping what follows; a percentage height has an auto-height containing
    /// block here, and so is auto.
    func minimumContentHeight(_ style: ComputedStyle, border: Edges<Double>, padding: Edges<Double>) -> Double {
        var fixedHeight = 0.0
        if case .length(.px(let height)) = style.height { fixedHeight = px(height) }
        let boxEdges = style.boxSizing == .borderBox ? border.top + padding.top + border.bottom + padding.bottom : 0
        return max(px(style.minHeight.resolve(against: 0)), fixedHeight) - boxEdges
    }

    /// A column flex container, the subset books use to centre an imprint, an epigraph or a plate
    /// on its page: items stack in order (or reversed), `align-items` centres (or moves to one
    /// side) each at its max-content width, and `justify-content` places them in the container's
    /// `min-height`. Items' margins stay inside the container, as in a flex formatting context.
    func layoutFlexColumn(_ block: BlockNode, left: Double, width: Double, flow: Flow, border: Edges<Double>, padding: Edges<Double>) {
        let style = block.style
        flow.flushMargin()
        let contentTop = flow.y
        let mark = flow.mark
        let items = style.flexDirection == .columnReverse ? Array(block.children.reversed()) : block.children
        for item in items {
            var itemLeft = left
            var itemWidth = width
            if [.center, .start, .end].contains(style.alignItems) {
                // The item's max-content width, with a pixel's slack so its longest line does not wrap.
                itemWidth = min(width, contentWidths([item]).max + horizontalMargins(item) + 1)
                switch style.alignItems {
                case .center: itemLeft += (width - itemWidth) / 2
                case .end: itemLeft += width - itemWidth
                default: break
                }
            }
            layoutChildren([item], left: itemLeft, width: itemWidth, flow: flow, listMarker: nil)
            flow.flushMargin()
        }
        let target = max(minimumContentHeight(style, border: border, padding: padding), 0)
        let used = flow.y - contentTop
        guard target > used else { return }
        let free = target - used
        switch style.justifyContent {
        case .center, .spaceAround, .spaceEvenly: flow.shift(since: mark, by: free / 2)
        case .end: flow.shift(since: mark, by: free)
        default: break
        }
        flow.y = contentTop + target
    }

    /// An item's fixed left and right margins (auto counts as none).
    func horizontalMargins(_ node: FlowNode) -> Double {
        guard let style = node.style else { return 0 }
        return px(max(0, style.margin.left.resolve(against: 0) ?? 0) + max(0, style.margin.right.resolve(against: 0) ?? 0))
    }

    /// The used border widths in device pixels (none where the style is none).
    func borderEdges(_ style: ComputedStyle) -> Edges<Double> {
        Edges(
            top: style.borderStyle.top == .none ? 0 : px(style.borderWidth.top),
            right: style.borderStyle.right == .none ? 0 : px(style.borderWidth.right),
            bottom: style.borderStyle.bottom == .none ? 0 : px(style.borderWidth.bottom),
            left: style.borderStyle.left == .none ? 0 : px(style.borderWidth.left))
    }

    /// A block's background, gradient and borders, in that order; rounded corners and shadows
    /// make them one decorated box below the gradient and its border above it.
    func paintBox(_ style: ComputedStyle, border: Edges<Double>, rect: Rect, flow: Flow, background: Bool) {
        flow.spanning += boxDecorations(style, rect: rect, border: border, scale: scale, documentPath: documentPath, background: background)
    }

    func layoutParagraph(_ paragraph: Paragraph, left: Double, width: Double, flow: Flow, marker: GeneratedContent?) {
        let startY = flow.y + flow.pendingMarginPositive + flow.pendingMarginNegative
        var lines: [LineBox]
        if flow.floats.contains(where: { $0.bottom > startY }) {
            // Lines are broken before their heights are known: the first pass places them from the
            // strut, and each later pass from the heights the pass before found, until the floats
            // beside every line are the ones it was set against (three passes at most).
            let strut = paragraph.blockStyle.lineHeightPx() * scale
            var tops: [Double] = []
            func insets(_ tops: [Double]) -> (Int) -> (left: Double, right: Double) {
                { line in
                    let top = line < tops.count ? tops[line] : (tops.last.map { $0 + strut * Double(line - tops.count + 1) } ?? startY + Double(line) * strut)
                    let height = line < tops.count - 1 ? tops[line + 1] - tops[line] : strut
                    return flow.floatInsets(top: top, bottom: top + height, left: left, right: left + width)
                }
            }
            lines = inline.layout(paragraph, width: width, marker: marker, floats: insets(tops))
            for _ in 0..<2 {
                var y = startY
                let placed = lines.map { line -> Double in
                    defer { y += line.height }
                    return y
                }
                let guessed = insets(tops)
                let actual = insets(placed + [y])
                guard lines.indices.contains(where: { guessed($0) != actual($0) }) else { break }
                tops = placed + [y]
                lines = inline.layout(paragraph, width: width, marker: marker, floats: insets(tops))
            }
        } else {
            lines = inline.layout(paragraph, width: width, marker: marker, floats: nil)
        }
        let style = paragraph.blockStyle
        let count = lines.count
        let paragraphID = flow.paragraphCount
        flow.paragraphCount += 1
        for (index, line) in lines.enumerated() {
            let slice = flow.addSlice(height: line.height, start: line.start)
            let top = flow.slices[slice].top
            for item in line.items { flow.add(translate(item, dx: left, dy: top), slice: slice) }
            flow.lines.append(
                (slice, LineRecord(
                    rect: Rect(x: left + line.left, y: top, width: line.width, height: line.height), start: line.start, end: line.end,
                    paragraph: paragraphID, lineIndex: index, lineCount: count)))
            // Widows and orphans: a break after this line must leave enough lines on both sides.
            let before = index + 1
            let after = count - before
            if after > 0 && (before < style.orphans || after < style.widows || line.keepWithNext) {
                flow.slices[slice].breakAfter = .avoid
            }
        }
    }

    func layoutReplaced(_ box: ReplacedBox, left: Double, width: Double, flow: Flow) {
        let used = usedImageSize(box, containingWidth: width / scale, containingHeight: pageHeight / scale, turned: inline.vertical)
        let (border, padding) = imageEdges(box.style, basis: width / scale, scale: scale)
        let (edgeWidth, edgeHeight) = ((border + padding).horizontal, (border + padding).vertical)
        var w = used.width * scale
        var h = used.height * scale
        // Contain within the content box, keeping the aspect ratio (images are never split).
        let fit = min(1, max(1, width - edgeWidth) / max(w, 1), max(1, pageHeight - edgeHeight) / max(h, 1))
        w *= fit
        h *= fit
        let marginTop = px(box.style.margin.top.resolve(against: width / scale) ?? 0)
        let marginBottom = px(box.style.margin.bottom.resolve(against: width / scale) ?? 0)
        flow.collapseMargin(marginTop)
        let slice = flow.addSlice(height: h + edgeHeight, start: box.offset)
        let top = flow.slices[slice].top
        let x: Double
        switch (box.style.margin.left, box.style.margin.right) {
        case (.auto, .auto): x = left + max(0, (width - w - edgeWidth) / 2)
        case (.auto, _): x = left + max(0, width - w - edgeWidth)
        default: x = left + (box.style.margin.left.resolve(against: width / scale).map(px) ?? 0)
        }
        let rect = Rect(x: x + (border + padding).left, y: top + (border + padding).top, width: w, height: h)
        let drawn = flow.mark
        placeImage(box, in: rect, border: border, padding: padding, flow: flow, slice: slice, altText: true)
        flow.moveRelatively(since: drawn, box.style, containingWidth: width, scale: scale)
        flow.collapseMargin(marginBottom)
    }

    /// Draws an image at `rect` (its content box) into `slice`, with its box's background,
    /// border, corners and shadow around it first.
    func placeImage(_ box: ReplacedBox, in rect: Rect, border: Edges<Double>, padding: Edges<Double>, flow: Flow, slice: Int, altText: Bool) {
        let style = box.style
        let outer = rect.outset(by: border + padding)
        // Drawn with the image's slice: an image is never split across pages.
        for decoration in boxDecorations(style, rect: outer, border: border, scale: scale, documentPath: documentPath) { flow.add(decoration.item, slice: slice) }
        let image = ImageBox(rect: rect, resource: box.resource, alt: box.alt, state: box.displayState, inlineData: box.inlineData, opacity: box.style.opacity)
        flow.add(.image(image, altText: altText ? inline.altText(box, in: rect) : nil), slice: slice)
    }

    /// A floated image: placed at the side at the current height; the content that follows flows
    /// beside it (its slice overlaps theirs, so a page break keeps it with them or moves it on).
    /// The first text offset a flow node holds.
    static func firstOffset(_ node: FlowNode) -> Int? {
        switch node {
        case .paragraph(let paragraph): return paragraph.sources.first.map(Int.init) ?? paragraph.startOffset
        case .block(let block): return firstOffset(in: block.children)
        case .replaced(let box): return box.offset
        case .table(let table):
            for row in table.rows {
                if let offset = firstOffset(in: row.lazy.map { .block($0) }) { return offset }
            }
            return nil
        }
    }

    /// The first text offset among nodes. A plain loop: `lazy.compactMap(…).first` finds the first
    /// hit and then computes it again, which doubles the cost at every level of nested floats.
    static func firstOffset(in nodes: some Sequence<FlowNode>) -> Int? {
        for node in nodes {
            if let offset = firstOffset(node) { return offset }
        }
        return nil
    }

    /// A floated block: as wide as its content needs (or its `width`), laid out on its own, then
    /// placed at the left or right edge with the text of the blocks after it flowing beside it.
    func layoutFloat(_ block: BlockNode, left: Double, width: Double, flow: Flow, start: Int) {
        let style = block.style
        let basis = width / scale
        let edges = px((style.margin.left.resolve(against: basis) ?? 0) + (style.margin.right.resolve(against: basis) ?? 0))
            + px(style.padding.left.resolve(against: basis) + style.padding.right.resolve(against: basis))
            + px(style.borderWidth.left + style.borderWidth.right)
        let content = style.width.resolve(against: basis).map(px) ?? contentWidths(block.children).max
        let outer = max(1, min(width, content + edges))
        flow.clear(style.clear)
        flow.flushMargin()
        let top = flow.y
        var unfloated = block
        unfloated.style.float = .none
        let inner = Flow()
        layoutBlock(unfloated, left: 0, width: outer, flow: inner, inheritedMarker: nil)
        inner.flushMargin()
        let height = max(inner.y, inner.slices.last?.bottom ?? 0)
        guard height > 0 else { return }
        let x = style.float == .left ? left : left + width - outer
        let slice = flow.addSlice(height: height, start: start)
        flow.slices[slice].breakAfter = .avoid
        flow.place(inner, dx: x, dy: top, in: slice)
        flow.floats.append((style.float, x, x + outer, top, top + height))
        flow.y = top
    }

    /// A block or table set horizontally in a chapter set in columns (CSS Writing Modes 3, 7.3):
    /// laid out on its own, upright, as wide as its content needs up to the physical content box's
    /// width (the turned flow's page height), as tall as that makes it. It stands whole in the
    /// column flow at the columns' start, taking as much of the flow as it is wide; a block taller
    /// than a column overflows its foot.
    func layoutOrthogonal(_ node: FlowNode, style: ComputedStyle, left: Double, width: Double, flow: Flow) {
        let available = pageHeight
        inline.vertical = false
        let columnLength = inline.caches.pageHeight
        inline.caches.pageHeight = width
        defer {
            inline.vertical = true
            inline.caches.pageHeight = columnLength
        }
        var horizontal = self
        horizontal.pageHeight = width
        let basis = available / scale
        var outer = available
        if case .block(let block) = node {
            let edges = px((style.margin.left.resolve(against: basis) ?? 0) + (style.margin.right.resolve(against: basis) ?? 0))
                + px(style.padding.left.resolve(against: basis) + style.padding.right.resolve(against: basis))
                + px(style.borderWidth.left + style.borderWidth.right)
            let content = style.width.resolve(against: basis).map(px) ?? horizontal.contentWidths(block.children).max
            outer = max(1, min(available, content + edges))
        } else if case .table(let table) = node {
            // A table is as wide as its columns need (its caption is set in that width).
            let margins = (style.margin.left.resolve(against: basis).map(px) ?? 0) + (style.margin.right.resolve(against: basis).map(px) ?? 0)
            var room = available - margins
            if let specified = style.width.resolve(against: basis).map(px), specified < room { room = max(px(8), specified) }
            outer = max(1, min(available, horizontal.tableGrid(table, outerWidth: room, basis: basis).natural + margins))
        }
        let inner = Flow()
        horizontal.layoutChildren([node], left: 0, width: outer, flow: inner, listMarker: nil)
        inner.flushMargin()
        let height = max(inner.y, inner.slices.last?.bottom ?? 0)
        guard height > 0 else { return }
        flow.clear(style.clear)
        let slice = flow.addSlice(height: outer, start: Self.firstOffset(node) ?? Flow.textAfter)
        let top = flow.slices[slice].top
        var items = inner.spanning.map(\.item) + inner.items.map(\.item)
        var lines = inner.lines.map { entry in
            var record = entry.record
            record.paragraph += flow.paragraphCount
            return record
        }
        // Positioned boxes inside it are drawn with it, over its text.
        for layer in inner.layers.sorted(by: { $0.zIndex < $1.zIndex }) {
            items += (layer.flow.spanning.map(\.item) + layer.flow.items.map(\.item)).map { translate($0, dx: layer.dx, dy: layer.dy) }
            lines += layer.flow.lines.map { $0.record.moved(dx: layer.dx, dy: layer.dy) }
        }
        flow.paragraphCount += inner.paragraphCount
        flow.orthogonal.append(OrthogonalBlock(slice: slice, box: Rect(x: left, y: top, width: height, height: outer), items: items, lines: lines))
    }

    func layoutFloat(_ box: ReplacedBox, left: Double, width: Double, flow: Flow) {
        let used = usedImageSize(box, containingWidth: width / scale, containingHeight: pageHeight / scale, turned: inline.vertical)
        let basis = width / scale
        let (border, padding) = imageEdges(box.style, basis: basis, scale: scale)
        let (edgeWidth, edgeHeight) = ((border + padding).horizontal, (border + padding).vertical)
        var w = used.width * scale
        var h = used.height * scale
        let fit = min(1, max(1, width * 0.9 - edgeWidth) / max(w, 1), max(1, pageHeight - edgeHeight) / max(h, 1))
        w = w * fit + edgeWidth
        h = h * fit + edgeHeight
        let marginLeft = px(box.style.margin.left.resolve(against: basis) ?? 0)
        let marginRight = px(box.style.margin.right.resolve(against: basis) ?? 0)
        let marginTop = px(box.style.margin.top.resolve(against: basis) ?? 0)
        let marginBottom = px(box.style.margin.bottom.resolve(against: basis) ?? 0)
        flow.clear(box.style.clear)
        flow.flushMargin()
        let top = flow.y
        // Below earlier floats on the same side when there is no room beside them.
        let x = box.style.float == .left ? left + marginLeft : left + width - w - marginRight
        let slice = flow.addSlice(height: marginTop + h + marginBottom, start: box.offset)
        flow.slices[slice].breakAfter = .avoid
        let content = Rect(x: x, y: top + marginTop, width: w, height: h).inset(by: border + padding)
        placeImage(box, in: content, border: border, padding: padding, flow: flow, slice: slice, altText: false)
        flow.floats.append(
            (box.style.float, box.style.float == .left ? left : x - marginLeft, box.style.float == .left ? x + w + marginRight : left + width, top, top + marginTop + h + marginBottom))
        flow.y = top
    }

    /// Automatic table layout (as browsers do it, simplified): each column gets its min-content width,
    /// and the room left is shared in proportion to how much more each column would like.
    /// Each column's narrowest (longest word) and widest (no wrapping) content width, edges included.
    func columnExtents(_ table: TableNode, columns: Int, available: Double) -> (minimum: [Double], maximum: [Double]) {
        var minimum = [Double](repeating: 0, count: columns)
        var maximum = [Double](repeating: 0, count: columns)
        // A width given to a cell or its `<col>` (percentages of the table's) is the column's
        // width, unless its content's longest word needs more (CSS 2.1 §17.5.2.2).
        var fixed = [Double](repeating: 0, count: columns)
        let basis = available / scale
        for (column, width) in table.columnWidths.prefix(columns).enumerated() {
            if let width { fixed[column] = px(width.resolve(against: basis)) }
        }
        for row in table.rows {
            for (column, cell) in row.enumerated() where column < columns {
                let horizontal = px(cell.style.padding.left.resolve(against: basis) + cell.style.padding.right.resolve(against: basis))
                    + px(cell.style.borderWidth.left + cell.style.borderWidth.right)
                    + px((cell.style.margin.left.resolve(against: basis) ?? 0) + (cell.style.margin.right.resolve(against: basis) ?? 0))
                let widths = contentWidths(cell.children)
                minimum[column] = max(minimum[column], widths.min + horizontal)
                maximum[column] = max(maximum[column], widths.max + horizontal)
                if let specified = cell.style.width.resolve(against: basis).map(px) {
                    fixed[column] = max(fixed[column], specified + (cell.style.boxSizing == .borderBox ? 0 : horizontal))
                }
            }
        }
        for column in 0..<columns where fixed[column] > 0 {
            minimum[column] = max(minimum[column], min(fixed[column], available))
            maximum[column] = minimum[column]
        }
        return (minimum, maximum)
    }

    /// Column widths, and whether the page is too narrow for the columns' longest words.
    func columnWidths(_ table: TableNode, columns: Int, available: Double) -> (widths: [Double], squeezed: Bool) {
        let (minimum, maximum) = columnExtents(table, columns: columns, available: available)
        let totalMin = minimum.reduce(0, +)
        let totalMax = maximum.reduce(0, +)
        if totalMax <= available {
            // Everything fits on one line per cell: a table asking for its full width shares the rest.
            if case .length = table.style.width, totalMax > 0 {
                return (maximum.map { $0 * available / totalMax }, false)
            }
            return (maximum.map { max($0, 1) }, false)
        }
        if totalMin >= available || totalMax <= totalMin {
            return (minimum.map { $0 * available / max(totalMin, 1) }, totalMin > available + 0.5)
        }
        let share = (available - totalMin) / (totalMax - totalMin)
        return (zip(minimum, maximum).map { $0 + ($1 - $0) * share }, false)
    }

    func contentWidths(_ nodes: [FlowNode]) -> (min: Double, max: Double) {
        var result = (min: 0.0, max: 0.0)
        for node in nodes {
            let widths: (min: Double, max: Double)
            switch node {
            case .paragraph(let paragraph): widths = inline.contentWidths(paragraph)
            case .block(let block):
                let inner = contentWidths(block.children)
                let edges = px(block.style.padding.left.resolve(against: 0) + block.style.padding.right.resolve(against: 0))
                widths = (inner.min + edges, inner.max + edges)
            case .replaced(let box):
                let size = usedImageSize(box, containingWidth: 10_000, containingHeight: pageHeight / scale, turned: inline.vertical)
                widths = (size.width * scale, size.width * scale)
            case .table(let nested):
                let inner = nested.rows.map { contentWidths($0.map { .block($0) }) }
                widths = (inner.map(\.min).max() ?? 0, inner.map(\.max).max() ?? 0)
            }
            result = (max(result.min, widths.min), max(result.max, widths.max))
        }
        return result
    }

    /// Tables: automatic column widths; each row is one unbreakable slice.
    func layoutTable(_ table: TableNode, left containingLeft: Double, width containingWidth: Double, flow: Flow) {
        let style = table.style
        let start = flow.mark
        defer { flow.moveRelatively(since: start, style, containingWidth: containingWidth, scale: scale) }
        // The table's box: its fixed side margins, and its `width` (its border box, as browsers
        // size tables) where that is less than the room.
        let basis = containingWidth / scale
        let fixedLeft = style.margin.left.resolve(against: basis).map(px)
        let fixedRight = style.margin.right.resolve(against: basis).map(px)
        var outerLeft = containingLeft + (fixedLeft ?? 0)
        var outerWidth = max(px(8), containingWidth - (fixedLeft ?? 0) - (fixedRight ?? 0))
        let room = outerWidth
        if let specified = style.width.resolve(against: basis).map(px), specified < outerWidth { outerWidth = max(px(8), specified) }
        flow.collapseMargin(px(style.margin.top.resolve(against: basis) ?? 0))
        layoutChildren(table.caption, left: outerLeft, width: outerWidth, flow: flow, listMarker: nil)
        let grid = tableGrid(table, outerWidth: outerWidth, basis: basis)
        let (border, edges, spacing, rows, widths, squeezed) = (grid.border, grid.edges, grid.spacing, grid.rows, grid.widths, grid.squeezed)
        let firstSlice = flow.slices.count
        if edges.top > 0 {
            flow.flushMargin()
            flow.openBox()
        }
        let tableTop = flow.y + flow.pendingMarginPositive + flow.pendingMarginNegative
        flow.y += edges.top
        // Auto side margins centre a table narrower than its room, or put it at the end.
        let natural = grid.natural
        if fixedLeft == nil { outerLeft += fixedRight == nil ? (room - natural) / 2 : room - natural }
        let left = outerLeft + edges.left + spacing.h
        // Columns narrower than their longest words: those words break, rather than spill into
        // the next cell or off the page.
        let breaking = inline.breaksOverlongWords
        inline.breaksOverlongWords = breaking || squeezed
        defer { inline.breaksOverlongWords = breaking }
        let offsets = widths.indices.map { widths[..<$0].reduce(0, +) + Double($0) * spacing.h }
        var headerTop: Double?
        var headerIndex = -1
        for (rowIndex, row) in rows.enumerated() {
            // A short row's last cell spans the columns it lacks, and the spacing between them.
            let columnWidths = row.indices.map { column in
                column == row.count - 1 ? widths[column...].reduce(0, +) + Double(widths.count - 1 - column) * spacing.h : widths[column]
            }
            var cellFlows = row.indices.map { layoutCell(row[$0], width: columnWidths[$0], above: 0, below: 0) }
            let heights = cellFlows.map { max($0.y, $0.slices.last?.bottom ?? 0) }
            let height = heights.max() ?? 0
            guard height > 0 else { continue }
            // Every cell is as tall as its row (its background and borders reach the row's foot),
            // its content placed by vertical-align: the extra height goes above or below it.
            for (column, cell) in row.enumerated() where heights[column] < height - 0.5 {
                let extra = height - heights[column]
                let above: Double
                switch cell.style.verticalAlign {
                case .middle: above = extra / 2
                case .bottom: above = extra
                default: above = 0
                }
                cellFlows[column] = layoutCell(cell, width: columnWidths[column], above: above, below: extra - above)
            }
            flow.y += spacing.v
            // The row starts where its first text does (a cell's empty room has no offset yet).
            let start = cellFlows.lazy.flatMap(\.slices).first { $0.start != Flow.textAfter }?.start ?? flow.slices.last?.start ?? 0
            let slice = flow.addSlice(height: height, start: start)
            if rowIndex == 0, table.headerRows > 0 { headerTop = flow.slices[slice].top - spacing.v }
            if rowIndex < table.headerRows {
                // The header stays with the first body row, and is drawn again on each page the
                // body continues on (when it takes no more than a third of a page).
                flow.slices[slice].breakAfter = .avoid
                if rowIndex == table.headerRows - 1, let headerTop, flow.y - headerTop <= pageHeight / 3 {
                    let firstHeaderSlice = slice - (table.headerRows - 1)
                    flow.headers.append(RepeatedHeader(top: headerTop, bottom: flow.y, slices: firstHeaderSlice...slice))
                    headerIndex = flow.headers.count - 1
                }
            } else {
                flow.slices[slice].header = headerIndex
            }
            let top = flow.slices[slice].top
            for (column, cellFlow) in cellFlows.enumerated() {
                let dx = left + offsets[min(column, offsets.count - 1)]
                flow.place(cellFlow, dx: dx, dy: top, in: slice)
            }
        }
        if !rows.isEmpty { flow.y += spacing.v }
        flow.y += edges.bottom
        if edges.bottom > 0 { flow.closeBox(firstSlice: firstSlice) }
        let tableBottom = flow.y
        if tableBottom > tableTop + edges.top + edges.bottom {
            // Its background, gradient, images, corners, shadow and border, under the cells.
            let rect = Rect(x: outerLeft, y: tableTop, width: natural, height: tableBottom - tableTop)
            paintBox(style, border: border, rect: rect, flow: flow, background: true)
        }
        flow.collapseMargin(px(style.margin.bottom.resolve(against: basis) ?? 0))
    }

    /// A table's edges, spacing and column widths in a box `outerWidth` wide, and the width its
    /// columns need (`natural`, at most `outerWidth`).
    struct TableGrid {
        var border: Edges<Double>
        /// Border and padding.
        var edges: Edges<Double>
        var spacing: (h: Double, v: Double)
        /// The rows, with collapsed borders merged.
        var rows: [[BlockNode]]
        var widths: [Double]
        /// Some column is narrower than its longest word.
        var squeezed: Bool
        var natural: Double
    }

    func tableGrid(_ table: TableNode, outerWidth: Double, basis: Double) -> TableGrid {
        let style = table.style
        // The table's own border and background, around its rows (the caption is outside).
        let border = borderEdges(style)
        // The separated model puts border-spacing around every cell and the table's padding
        // inside its border; the collapsed one has neither and merges the borders cells share.
        let collapse = style.borderCollapse
        let padding = collapse ? Edges(all: 0.0) : Edges(
            top: px(style.padding.top.resolve(against: basis)), right: px(style.padding.right.resolve(against: basis)),
            bottom: px(style.padding.bottom.resolve(against: basis)), left: px(style.padding.left.resolve(against: basis)))
        let edges = border + padding
        let columns = max(1, table.rows.map(\.count).max() ?? 1)
        let spacing = collapse ? (h: 0.0, v: 0.0) : (h: px(style.borderSpacingHorizontal), v: px(style.borderSpacingVertical))
        let rows = collapse ? Self.collapsedBorders(table.rows, tableBorder: border) : table.rows
        let width = max(outerWidth - edges.horizontal - Double(columns + 1) * spacing.h, px(8))
        var spaced = table
        spaced.rows = rows
        let (widths, squeezed) = columnWidths(spaced, columns: columns, available: width)
        let natural = min(outerWidth, widths.reduce(0, +) + Double(columns + 1) * spacing.h + edges.horizontal)
        return TableGrid(border: border, edges: edges, spacing: spacing, rows: rows, widths: widths, squeezed: squeezed, natural: natural)
    }

    /// `border-collapse: collapse`: where two cells meet, the wider of their two borders is kept on
    /// the first (left or upper) cell and the other is dropped, so the rule is drawn once; a table
    /// border replaces the outer cells' borders on its side.
    static func collapsedBorders(_ rows: [[BlockNode]], tableBorder: Edges<Double>) -> [[BlockNode]] {
        func width(_ style: BorderStyle, _ value: Double) -> Double { style == .none || style == .hidden ? 0 : value }
        var rows = rows
        for r in rows.indices {
            for c in rows[r].indices {
                var cell = rows[r][c].style
                if c > 0 {
                    var previous = rows[r][c - 1].style
                    if width(cell.borderStyle.left, cell.borderWidth.left) > width(previous.borderStyle.right, previous.borderWidth.right) {
                        previous.borderStyle.right = cell.borderStyle.left
                        previous.borderWidth.right = cell.borderWidth.left
                        previous.borderColor.right = cell.borderColor.left ?? cell.color
                        rows[r][c - 1].style = previous
                    }
                    cell.borderStyle.left = .none
                } else if tableBorder.left > 0 {
                    cell.borderStyle.left = .none
                }
                if c == rows[r].count - 1, tableBorder.right > 0 { cell.borderStyle.right = .none }
                if r > 0, c < rows[r - 1].count {
                    var above = rows[r - 1][c].style
                    if width(cell.borderStyle.top, cell.borderWidth.top) > width(above.borderStyle.bottom, above.borderWidth.bottom) {
                        above.borderStyle.bottom = cell.borderStyle.top
                        above.borderWidth.bottom = cell.borderWidth.top
                        above.borderColor.bottom = cell.borderColor.top ?? cell.color
                        rows[r - 1][c].style = above
                    }
                    cell.borderStyle.top = .none
                } else if r == 0, tableBorder.top > 0 {
                    cell.borderStyle.top = .none
                }
                if r == rows.count - 1, tableBorder.bottom > 0 { cell.borderStyle.bottom = .none }
                rows[r][c].style = cell
            }
        }
        return rows
    }

    /// One cell laid out on its own, with `above` and `below` device pixels added to its padding
    /// (to fill its row).
    func layoutCell(_ cell: BlockNode, width: Double, above: Double, below: Double) -> Flow {
        var cell = cell
        // The cell's width went into its column's: the cell fills the column.
        cell.style.width = .auto
        cell.style.maxWidth = nil
        if above > 0 || below > 0 {
            let basis = width / scale
            cell.style.padding.top = .px(cell.style.padding.top.resolve(against: basis) + above / scale)
            cell.style.padding.bottom = .px(cell.style.padding.bottom.resolve(against: basis) + below / scale)
        }
        let cellFlow = Flow()
        layoutBlock(cell, left: 0, width: width, flow: cellFlow, inheritedMarker: nil)
        cellFlow.flushMargin()
        return cellFlow
    }
}

extension LineRecord {
    /// The same line moved by (dx, dy), as `translate` moves a display item.
    func moved(dx: Double, dy: Double) -> LineRecord {
        var moved = self
        moved.rect.x += dx
        moved.rect.y += dy
        return moved
    }
}

func translate(_ item: DisplayItem, dx: Double, dy: Double) -> DisplayItem {
    switch item {
    case .glyphs(var run):
        run.origin.x += dx
        run.origin.y += dy
        return .glyphs(run)
    case .gradient(let fill):
        return .gradient(fill.translated(dx: dx, dy: dy))
    case .box(let decorated):
        return .box(decorated.translated(dx: dx, dy: dy))
    case .backgroundImage(let fill):
        return .backgroundImage(fill.translated(dx: dx, dy: dy))
    case .fill(var rect, let color):
        rect.x += dx
        rect.y += dy
        return .fill(rect, color)
    case .stroke(let from, let to, let width, let color, let style):
        return .stroke(from: Point(x: from.x + dx, y: from.y + dy), to: Point(x: to.x + dx, y: to.y + dy), width: width, color: color, style: style)
    case .image(var box, let alt):
        box.rect.x += dx
        box.rect.y += dy
        var movedAlt = alt
        movedAlt?.origin.x += dx
        movedAlt?.origin.y += dy
        return .image(box, altText: movedAlt)
    }
}

/// The part of `item` between `top` and `bottom` of the flow (a page's cut, a column's), or nil.
func clip(_ item: DisplayItem, top: Double, bottom: Double) -> DisplayItem? {
    switch item {
    case .fill(let rect, let color):
        return rect.clipped(top: top, bottom: bottom).map { .fill($0, color) }
    case .gradient(var fill):
        // The part on this page; the gradient's geometry stays the whole box's.
        guard let area = fill.area.clipped(top: top, bottom: bottom) else { return nil }
        fill.area = area
        return .gradient(fill)
    case .backgroundImage(var fill):
        guard let area = fill.area.clipped(top: top, bottom: bottom) else { return nil }
        fill.area = area
        return .backgroundImage(fill)
    case .box(var decorated):
        // Shadows may reach past the page's cut where the box itself begins or ends on the page.
        let y0 = decorated.box.y >= top ? decorated.area.y : max(decorated.area.y, top)
        let y1 = decorated.box.maxY <= bottom ? decorated.area.maxY : min(decorated.area.maxY, bottom)
        guard y1 > y0 else { return nil }
        decorated.area = Rect(x: decorated.area.x, y: y0, width: decorated.area.width, height: y1 - y0)
        return .box(decorated)
    case .stroke(let from, let to, let width, let color, let style):
        if from.x == to.x {
            let y0 = max(min(from.y, to.y), top)
            let y1 = min(max(from.y, to.y), bottom)
            return y1 > y0 ? .stroke(from: Point(x: from.x, y: y0), to: Point(x: to.x, y: y1), width: width, color: color, style: style) : nil
        }
        return from.y >= top && from.y <= bottom ? item : nil
    default:
        return item
    }
}
