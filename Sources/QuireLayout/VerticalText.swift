import QuireStyle
import QuireText

// Vertical text (`writing-mode: vertical-rl` and `vertical-lr`)
//
// A chapter set in columns is laid out as if it were horizontal, on a page turned a quarter turn
// counter-clockwise: lines as wide as the content box is tall, stacked down a flow as deep as the
// content box is wide. The cascade has already turned the book's physical margins, padding and
// borders into that frame (`Cascade.turnToHorizontal`), so block layout, line breaking, Knuth–Plass,
// pagination and the text offsets of the map are the horizontal ones, unchanged. Only two things
// differ:
//
// - text: upright characters (CJK, UAX #50) are shaped top to bottom with the font's vertical
//   metrics and vertical forms, and their runs are marked `.upright`; everything else (Latin set
//   sideways) is shaped as usual;
// - the page: once a page's items are placed, `VerticalFrame` turns them a quarter turn clockwise
//   into the physical page. A line's top becomes its column's right side, so lines follow each
//   other from right to left and ruby, set over its base, lands on the column's right. Sideways
//   runs are drawn turned (`.sideways`); upright runs get their glyphs' places but no turn.
//
// `vertical-lr` differs only in the order of the columns, left to right; within a column nothing
// changes (the over side, where ruby and emphasis marks stand, is the right in both modes). So a
// page of it is the vertical-rl page with its columns taken in the other order: each line is moved
// whole to the mirrored place across the page, and every other box (backgrounds, borders, block
// images) is mirrored, so a block's start border, on its right in vertical-rl, lands on its left.

/// The quarter turn clockwise from a vertical chapter's page frame to the physical page.
/// In the frame, x runs down the column and y across the columns, from the right edge leftward.
struct VerticalFrame {
    /// The physical content box.
    let content: Rect
    /// `vertical-lr`: columns follow each other from the left edge rightward.
    var leftToRight = false

    /// The frame's content box size: as wide as the physical one is tall, and the reverse.
    var frameWidth: Double { content.height }
    var frameHeight: Double { content.width }

    func point(_ p: Point) -> Point { Point(x: content.x + content.width - p.y, y: content.y + p.x) }

    func rect(_ r: Rect) -> Rect {
        Rect(
            x: content.x + content.width - (r.y + r.height), y: content.y + r.x, width: r.height,
            height: r.width)
    }

    /// A frame's edges on the physical page: its top is the right side, its left the top.
    func edges<Value>(_ e: Edges<Value>) -> Edges<Value> {
        Edges(top: e.left, right: e.top, bottom: e.right, left: e.bottom)
    }

    /// Corner radii (horizontal, vertical pairs from the top-left corner clockwise): each corner
    /// moves one place on and its two radii trade places.
    func radii(_ r: [Double]) -> [Double] {
        guard r.count == 8 else { return r }
        // Physical top-left is the frame's bottom-left, top-right its top-left, and so on.
        return [r[7], r[6], r[1], r[0], r[3], r[2], r[5], r[4]]
    }

    func item(_ item: DisplayItem) -> DisplayItem {
        switch item {
        case .glyphs(var run):
            run.origin = point(run.origin)
            if run.orientation == .upright {
                // Each glyph's place turns with the line; the glyph itself stays upright.
                for index in run.placed.indices {
                    let x = run.placed[index].x
                    run.placed[index].x = -run.placed[index].y
                    run.placed[index].y = x
                }
            } else {
                run.orientation = .sideways
            }
            return .glyphs(run)
        case .fill(let r, let color):
            return .fill(rect(r), color)
        case .stroke(let from, let to, let width, let color, let style):
            return .stroke(from: point(from), to: point(to), width: width, color: color, style: style)
        case .image(var box, let alt):
            box.rect = rect(box.rect)
            // The alt text is set sideways with its box.
            return .image(
                box,
                altText: alt.map { run in
                    guard case .glyphs(let turned) = self.item(.glyphs(run)) else { return run }
                    return turned
                })
        case .gradient(var fill):
            fill.area = rect(fill.area)
            fill.box = rect(fill.box)
            fill.radii = radii(fill.radii)
            switch fill.shape {
            case .linear(let start, let end): fill.shape = .linear(start: point(start), end: point(end))
            case .radial(let rx, let ry): fill.shape = .radial(rx: ry, ry: rx)
            }
            return .gradient(fill)
        case .box(var decorated):
            decorated.area = rect(decorated.area)
            decorated.box = rect(decorated.box)
            decorated.radii = radii(decorated.radii)
            decorated.borderWidths = edges(decorated.borderWidths)
            decorated.borderColors = edges(decorated.borderColors)
            decorated.shadows = decorated.shadows.map { shadow in
                var turned = shadow
                (turned.x, turned.y) = (-shadow.y, shadow.x)
                return turned
            }
            return .box(decorated)
        case .backgroundImage(var fill):
            fill.area = rect(fill.area)
            fill.clip = rect(fill.clip)
            fill.box = rect(fill.box)
            fill.radii = radii(fill.radii)
            return .backgroundImage(fill)
        }
    }

    /// Where a box of the flow stands on the physical page: a block set horizontally, placed whole
    /// and unturned (in vertical-lr at the mirrored place across the flow).
    func physical(_ box: Rect) -> Rect {
        var placed = box
        if leftToRight { placed.y = frameHeight - box.maxY }
        return rect(placed)
    }

    func line(_ record: LineRecord) -> LineRecord {
        var turned = record
        turned.rect = rect(record.rect)
        return turned
    }

    /// A page's items and lines, from the frame onto the physical page.
    func page(_ items: [DisplayItem], lines: [LineRecord]) -> ([DisplayItem], [LineRecord]) {
        guard leftToRight else { return (items.map(item), lines.map(line)) }
        let placed = items.map { item -> DisplayItem in
            // The innermost line holding it (an inline block's lines lie inside their line).
            if let line = lines.filter({ Self.holds($0.rect, item) }).min(by: { $0.rect.height < $1.rect.height }) {
                return self.item(translate(item, dx: 0, dy: mirrorShift(line.rect.y, line.rect.maxY)))
            }
            return self.item(mirrored(item))
        }
        let turnedLines = lines.map { record in
            var moved = record
            moved.rect.y += mirrorShift(record.rect.y, record.rect.maxY)
            return line(moved)
        }
        return (placed, turnedLines)
    }

    /// How far a band of the flow from `top` to `bottom` moves to the mirrored place across it.
    private func mirrorShift(_ top: Double, _ bottom: Double) -> Double { frameHeight - top - bottom }

    /// Whether `item` belongs to the line whose box (in the frame) is `line`: a run's baseline
    /// or a decoration's ends lie in it, a box lies wholly in it.
    private static func holds(_ line: Rect, _ item: DisplayItem) -> Bool {
        let slack = 0.01
        func inside(_ p: Point) -> Bool {
            p.x >= line.x - slack && p.x <= line.maxX + slack && p.y >= line.y - slack && p.y <= line.maxY + slack
        }
        func inside(_ r: Rect) -> Bool { inside(Point(x: r.x, y: r.y)) && inside(Point(x: r.maxX, y: r.maxY)) }
        switch item {
        case .glyphs(let run): return inside(run.origin)
        case .stroke(let from, let to, _, _, _): return inside(from) && inside(to)
        case .fill(let r, _): return inside(r)
        case .image(let box, _): return inside(box.rect)
        case .box(let decorated): return inside(decorated.box)
        case .gradient(let fill): return inside(fill.box)
        case .backgroundImage(let fill): return inside(fill.box)
        }
    }

    /// An item outside the lines, mirrored across the flow in the frame (y to frameHeight − y).
    private func mirrored(_ item: DisplayItem) -> DisplayItem {
        func flip(_ r: Rect) -> Rect { Rect(x: r.x, y: frameHeight - r.maxY, width: r.width, height: r.height) }
        func flip(_ p: Point) -> Point { Point(x: p.x, y: frameHeight - p.y) }
        // Top and bottom corners trade places (radii from the top-left corner clockwise).
        func flip(radii r: [Double]) -> [Double] { r.count == 8 ? [r[6], r[7], r[4], r[5], r[2], r[3], r[0], r[1]] : r }
        func flip<Value>(edges e: Edges<Value>) -> Edges<Value> { Edges(top: e.bottom, right: e.right, bottom: e.top, left: e.left) }
        switch item {
        case .glyphs(let run):
            // Text outside any line (rare): moved whole, as if its em box were mirrored.
            let emTop = run.origin.y - run.size * 0.88
            return translate(item, dx: 0, dy: mirrorShift(emTop, emTop + run.size))
        case .fill(let r, let color):
            return .fill(flip(r), color)
        case .stroke(let from, let to, let width, let color, let style):
            return .stroke(from: flip(from), to: flip(to), width: width, color: color, style: style)
        case .image(var box, let alt):
            // The picture is not mirrored, only its place; its alt text moves with it.
            let shift = mirrorShift(box.rect.y, box.rect.maxY)
            box.rect.y += shift
            return .image(box, altText: alt.map { run in
                var moved = run
                moved.origin.y += shift
                return moved
            })
        case .gradient(var fill):
            fill.area = flip(fill.area)
            fill.box = flip(fill.box)
            fill.radii = flip(radii: fill.radii)
            if case .linear(let start, let end) = fill.shape { fill.shape = .linear(start: flip(start), end: flip(end)) }
            return .gradient(fill)
        case .box(var decorated):
            decorated.area = flip(decorated.area)
            decorated.box = flip(decorated.box)
            decorated.radii = flip(radii: decorated.radii)
            decorated.borderWidths = flip(edges: decorated.borderWidths)
            decorated.borderColors = flip(edges: decorated.borderColors)
            decorated.shadows = decorated.shadows.map { shadow in
                var flipped = shadow
                flipped.y = -shadow.y
                return flipped
            }
            return .box(decorated)
        case .backgroundImage(var fill):
            fill.area = flip(fill.area)
            fill.clip = flip(fill.clip)
            fill.box = flip(fill.box)
            fill.radii = flip(radii: fill.radii)
            return .backgroundImage(fill)
        }
    }
}
