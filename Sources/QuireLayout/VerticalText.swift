import QuireStyle
import QuireText

// Vertical text (`writing-mode: vertical-rl`)
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

/// The quarter turn clockwise from a vertical chapter's page frame to the physical page.
/// In the frame, x runs down the column and y across the columns, from the right edge leftward.
struct VerticalFrame {
    /// The physical content box.
    let content: Rect

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
                let xs = run.xs
                run.xs = run.ys.map { -$0 }
                run.ys = xs
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

    func line(_ record: LineRecord) -> LineRecord {
        var turned = record
        turned.rect = rect(record.rect)
        return turned
    }
}
