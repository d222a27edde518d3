import QuireStyle

// Positioned boxes (CSS 2.1 §9.3, §10.3.7, §10.6.4).
//
// A box with `position: absolute` or `fixed` leaves the flow: it takes no room, and nothing
// breaks around it. It is laid out on its own, in a flow of its own, once its containing block
// is known: the padding box of the nearest positioned ancestor, or the initial containing block
// (the first page's content box; in a fixed-layout page, the viewport). Blocks are sized as the
// spec says (both insets and an auto width stretch it; otherwise it shrinks to fit), placed by
// `top`/`left` or `bottom`/`right`, or else where it would have been (its static position).
//
// A laid-out positioned box is a `Layer`: its slices are not paginated, but each goes to the page
// whose part of the chapter's flow holds its top, drawn over the page's flow (under it with a
// negative `z-index`). A reflowable chapter gets pages enough to show its layers; a fixed-layout
// page clips them to its viewport.
//
// `position: relative` moves what a box draws after it is laid out; its room stays where it was.

/// A positioned box laid out in its own flow, moved by (dx, dy) into the flow that holds it.
struct Layer {
    var flow: Flow
    var dx: Double
    var dy: Double
    var zIndex: Int

    func moved(dx: Double, dy: Double) -> Layer {
        Layer(flow: flow, dx: self.dx + dx, dy: self.dy + dy, zIndex: zIndex)
    }

    /// How far down it reaches in the flow that holds it.
    var bottom: Double { dy + max(flow.y, flow.slices.last?.bottom ?? 0) }
}

/// The containing blocks of positioned boxes, innermost last, with the boxes waiting for their
/// block's size. One per chapter layout, shared by every copy of its `BlockLayout`.
final class ContainingBlocks {
    struct Frame {
        /// The flow the block is laid out in: its waiting boxes go into that flow's layers.
        let flow: Flow
        /// The padding box, in that flow's coordinates; `height` is known when the block closes.
        var left: Double
        var top: Double
        var width: Double
        var height: Double
        var waiting: [(node: FlowNode, staticLeft: Double, staticTop: Double)] = []
    }

    var frames: [Frame] = []
}

extension FlowNode {
    /// The style of a block, picture or table (a paragraph's runs carry their own).
    var style: ComputedStyle? {
        switch self {
        case .block(let block): return block.style
        case .replaced(let box): return box.style
        case .table(let table): return table.style
        case .paragraph: return nil
        }
    }

    /// A block or picture out of the flow (`position: absolute` or `fixed`).
    var isOutOfFlow: Bool {
        if case .table = self { return false }
        return style?.position == .absolute || style?.position == .fixed
    }
}

extension BlockLayout {
    /// Lays out a chapter's root in the initial containing block (the page's content box).
    func layoutRoot(_ root: BlockNode, width: Double, flow: Flow) {
        containingBlocks.frames.append(.init(flow: flow, left: 0, top: 0, width: width, height: pageHeight))
        layoutBlock(root, left: 0, width: width, flow: flow, inheritedMarker: nil)
        closeContainingBlock(height: pageHeight)
    }

    /// A positioned block's padding box becomes the containing block of the boxes inside it.
    func openContainingBlock(flow: Flow, left: Double, top: Double, width: Double) {
        containingBlocks.frames.append(.init(flow: flow, left: left, top: top, width: width, height: 0))
    }

    /// The block's height is known: the boxes that waited for it are laid out, in document order.
    func closeContainingBlock(height: Double) {
        guard var frame = containingBlocks.frames.popLast() else { return }
        frame.height = max(0, height)
        for waiting in frame.waiting {
            layoutPositioned(waiting.node, staticLeft: waiting.staticLeft, staticTop: waiting.staticTop, in: frame)
        }
    }

    /// Where the flow meets a positioned box: it waits for its containing block, or, when that
    /// block is in another flow (a positioned box inside a table cell of a positioned block), is
    /// placed against the box it sits in.
    func deferPositioned(_ node: FlowNode, left: Double, width: Double, flow: Flow) {
        let staticTop = flow.y + flow.pendingMarginPositive + flow.pendingMarginNegative
        let index = node.style?.position == .fixed ? containingBlocks.frames.indices.first : containingBlocks.frames.indices.last
        if let index, containingBlocks.frames[index].flow === flow {
            containingBlocks.frames[index].waiting.append((node, left, staticTop))
        } else {
            let local = ContainingBlocks.Frame(flow: flow, left: left, top: staticTop, width: width, height: pageHeight)
            layoutPositioned(node, staticLeft: left, staticTop: staticTop, in: local)
        }
    }

    /// Sizes and places one positioned box in its containing block, as a layer of the block's flow.
    func layoutPositioned(_ node: FlowNode, staticLeft: Double, staticTop: Double, in frame: ContainingBlocks.Frame) {
        let widthBasis = frame.width / scale
        let heightBasis = frame.height / scale
        let inner = Flow()
        let style: ComputedStyle
        let outerWidth: Double
        switch node {
        case .block(let block):
            style = block.style
            var sized = block
            let (width, height) = positionedContentSize(block, in: frame, staticLeft: staticLeft)
            sized.style.width = .px(width / scale)
            sized.style.height = height.map { .px($0 / scale) } ?? .auto
            sized.style.minWidth = .zero
            sized.style.maxWidth = nil
            sized.style.boxSizing = .contentBox
            sized.style.margin.left = .px(style.margin.left.resolve(against: widthBasis) ?? 0)
            sized.style.margin.right = .px(style.margin.right.resolve(against: widthBasis) ?? 0)
            sized.shrinkToFit = nil
            outerWidth = width + horizontalEdges(style, basis: widthBasis)
            layoutBlock(sized, left: 0, width: outerWidth, flow: inner, inheritedMarker: nil)
            inner.flushMargin()
        case .replaced(let box):
            style = box.style
            let used = usedImageSize(box, containingWidth: widthBasis, containingHeight: heightBasis, turned: inline.vertical)
            let margin = Edges(
                top: px(style.margin.top.resolve(against: widthBasis) ?? 0), right: px(style.margin.right.resolve(against: widthBasis) ?? 0),
                bottom: px(style.margin.bottom.resolve(against: widthBasis) ?? 0), left: px(style.margin.left.resolve(against: widthBasis) ?? 0))
            let (border, padding) = imageEdges(style, basis: widthBasis, scale: scale)
            let (w, h) = (used.width * scale, used.height * scale)
            let around = margin + border + padding
            outerWidth = w + around.horizontal
            let slice = inner.addSlice(height: h + around.vertical, start: box.offset)
            let content = Rect(x: around.left, y: around.top, width: w, height: h)
            placeImage(box, in: content, border: border, padding: padding, flow: inner, slice: slice, altText: false)
        default:
            return
        }
        let outerHeight = inner.y
        let left = style.offsets.left.resolve(against: widthBasis).map(px)
        let right = style.offsets.right.resolve(against: widthBasis).map(px)
        let top = style.offsets.top.resolve(against: heightBasis).map(px)
        let bottom = style.offsets.bottom.resolve(against: heightBasis).map(px)
        let x = left ?? right.map { frame.width - $0 - outerWidth } ?? (staticLeft - frame.left)
        let y = top ?? bottom.map { frame.height - $0 - outerHeight } ?? (staticTop - frame.top)
        frame.flow.layers.append(Layer(flow: inner, dx: frame.left + x, dy: frame.top + y, zIndex: style.zIndex ?? 0))
        // Boxes positioned inside it were laid out against it: they join the same flow.
        frame.flow.layers += inner.layers.map { $0.moved(dx: frame.left + x, dy: frame.top + y) }
        inner.layers = []
    }

    /// Margins, borders and padding across a box.
    func horizontalEdges(_ style: ComputedStyle, basis: Double) -> Double {
        px((style.margin.left.resolve(against: basis) ?? 0) + (style.margin.right.resolve(against: basis) ?? 0)
            + style.padding.left.resolve(against: basis) + style.padding.right.resolve(against: basis)
            + style.borderWidth.left + style.borderWidth.right)
    }

    /// A positioned block's content width and, when its size or both vertical insets fix it,
    /// content height (device px).
    func positionedContentSize(_ block: BlockNode, in frame: ContainingBlocks.Frame, staticLeft: Double) -> (width: Double, height: Double?) {
        let style = block.style
        let widthBasis = frame.width / scale
        let heightBasis = frame.height / scale
        let horizontal = horizontalEdges(style, basis: widthBasis)
        let boxSizingEdges = px(style.padding.left.resolve(against: widthBasis) + style.padding.right.resolve(against: widthBasis)
            + style.borderWidth.left + style.borderWidth.right)
        let left = style.offsets.left.resolve(against: widthBasis).map(px)
        let right = style.offsets.right.resolve(against: widthBasis).map(px)
        var width: Double
        if let specified = style.width.resolve(against: widthBasis).map(px) {
            width = specified - (style.boxSizing == .borderBox ? boxSizingEdges : 0)
        } else if let left, let right {
            width = frame.width - left - right - horizontal
        } else {
            let available = frame.width - (left ?? (staticLeft - frame.left)) - (right ?? 0) - horizontal
            let content = contentWidths(block.children)
            width = min(content.max, max(available, content.min))
        }
        if let maxWidth = style.maxWidth { width = min(width, px(maxWidth.resolve(against: widthBasis))) }
        width = max(width, px(style.minWidth.resolve(against: widthBasis)), px(1))

        let vertical = px(style.padding.top.resolve(against: widthBasis) + style.padding.bottom.resolve(against: widthBasis)
            + style.borderWidth.top + style.borderWidth.bottom)
        let margins = px((style.margin.top.resolve(against: widthBasis) ?? 0) + (style.margin.bottom.resolve(against: widthBasis) ?? 0))
        let top = style.offsets.top.resolve(against: heightBasis).map(px)
        let bottom = style.offsets.bottom.resolve(against: heightBasis).map(px)
        var height: Double?
        if let specified = style.height.resolve(against: heightBasis).map(px) {
            height = specified - (style.boxSizing == .borderBox ? vertical : 0)
        } else if let top, let bottom {
            height = frame.height - top - bottom - margins - vertical
        }
        if let value = height, let maxHeight = style.maxHeight { height = min(value, px(maxHeight.resolve(against: heightBasis))) }
        // Bounded like any sized box: a page's worth of room at most 64 times over.
        return (min(width, frame.width * 64 + px(100_000)), height.map { min(max(0, $0), pageHeight * 64) })
    }
}

/// `position: relative`: how far a box's drawing moves (left over right, top over bottom), in
/// device pixels at `scale`, for a containing block `containingWidth` device pixels wide.
func relativeOffset(_ style: ComputedStyle, containingWidth: Double, scale: Double) -> (dx: Double, dy: Double) {
    let basis = containingWidth / scale
    let dx = (style.offsets.left.resolve(against: basis) ?? style.offsets.right.resolve(against: basis).map { -$0 } ?? 0) * scale
    // A percentage of an auto-height containing block is auto.
    func vertical(_ value: LengthOrAuto) -> Double? {
        if case .length(.percent) = value { return nil }
        return value.resolve(against: 0)
    }
    let dy = (vertical(style.offsets.top) ?? vertical(style.offsets.bottom).map { -$0 } ?? 0) * scale
    return (dx, dy)
}
