import CCairo
import QuireLayout
import QuireStyle

/// Rounded corners and box shadows (CSS Backgrounds 3). Cairo has no blur, so a blurred shadow is
/// drawn into an alpha mask, blurred there by three box passes (close to the Gaussian of standard
/// deviation blur / 2 that CSS asks for), and painted through the mask.
enum BoxPainter {
    /// The four corners' radii inset by the border widths: the inner edge of the border.
    static func innerRadii(_ radii: [Double], _ widths: Edges<Double>) -> [Double] {
        [
            max(0, radii[0] - widths.left), max(0, radii[1] - widths.top), max(0, radii[2] - widths.right), max(0, radii[3] - widths.top),
            max(0, radii[4] - widths.right), max(0, radii[5] - widths.bottom), max(0, radii[6] - widths.left), max(0, radii[7] - widths.bottom),
        ]
    }

    /// Radii grown (or shrunk, for a negative amount) by a shadow's spread; square corners stay square.
    static func spread(_ radii: [Double], by amount: Double) -> [Double] {
        radii.map { $0 > 0 ? max(0, $0 + amount) : 0 }
    }

    /// Adds a rounded rectangle to the path, clockwise, corners as elliptical quarter arcs.
    static func addRoundedRect(_ cr: OpaquePointer, _ rect: Rect, _ radii: [Double]) {
        let k = 0.5522847498  // Bézier control length of a quarter circle
        let (x0, y0, x1, y1) = (rect.x, rect.y, rect.maxX, rect.maxY)
        cairo_new_sub_path(cr)
        cairo_move_to(cr, x0 + radii[0], y0)
        cairo_line_to(cr, x1 - radii[2], y0)
        cairo_curve_to(cr, x1 - radii[2] * (1 - k), y0, x1, y0 + radii[3] * (1 - k), x1, y0 + radii[3])
        cairo_line_to(cr, x1, y1 - radii[5])
        cairo_curve_to(cr, x1, y1 - radii[5] * (1 - k), x1 - radii[4] * (1 - k), y1, x1 - radii[4], y1)
        cairo_line_to(cr, x0 + radii[6], y1)
        cairo_curve_to(cr, x0 + radii[6] * (1 - k), y1, x0, y1 - radii[7] * (1 - k), x0, y1 - radii[7])
        cairo_line_to(cr, x0, y0 + radii[1])
        cairo_curve_to(cr, x0, y0 + radii[1] * (1 - k), x0 + radii[0] * (1 - k), y0, x0 + radii[0], y0)
        cairo_close_path(cr)
    }

    static func paint(_ decorated: DecoratedBox, cr: OpaquePointer, page: Rect, map: (Color) -> Color) {
        // Cairo's fixed-point coordinates wrap past about ±8 million: keep what is drawn near the
        // page (a box is at most 64 pages tall; shadows are cut to a few pages' reach).
        var decorated = decorated
        let reach = 4 * max(page.width, page.height)
        for index in decorated.shadows.indices {
            decorated.shadows[index].x = min(max(decorated.shadows[index].x, -reach), reach)
            decorated.shadows[index].y = min(max(decorated.shadows[index].y, -reach), reach)
            decorated.shadows[index].spread = min(max(decorated.shadows[index].spread, -reach), reach)
        }
        let near = Rect(x: page.x - reach, y: page.y - reach, width: page.width + 2 * reach, height: page.height + 2 * reach)
        guard let area = decorated.area.intersection(near) else { return }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_new_path(cr)
        cairo_rectangle(cr, area.x, area.y, area.width, area.height)
        cairo_clip(cr)
        let box = decorated.box
        let radii = decorated.radii
        // Outer shadows, the last layer lowest, never under the box itself.
        let outer = decorated.shadows.filter { !$0.inset }
        if !outer.isEmpty {
            cairo_save(cr)
            cairo_new_path(cr)
            cairo_rectangle(cr, area.x, area.y, area.width, area.height)
            addRoundedRect(cr, box, radii)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
            cairo_clip(cr)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
            for shadow in outer.reversed() {
                let shape = Rect(
                    x: box.x + shadow.x - shadow.spread, y: box.y + shadow.y - shadow.spread,
                    width: box.width + 2 * shadow.spread, height: box.height + 2 * shadow.spread)
                guard shape.width > 0, shape.height > 0 else { continue }
                drawShadow(cr, color: map(shadow.color), blur: shadow.blur, within: shape, page: page) { cr in
                    addRoundedRect(cr, shape, spread(radii, by: shadow.spread))
                }
            }
            cairo_restore(cr)
        }
        if !decorated.background.isTransparent {
            cairo_new_path(cr)
            addRoundedRect(cr, box, radii)
            setColor(cr, map(decorated.background))
            cairo_fill(cr)
        }
        // Inset shadows: inside the padding box, the shadow is everything outside the shifted,
        // shrunk shape.
        let inner = decorated.shadows.filter(\.inset)
        let paddingBox = box.inset(by: decorated.borderWidths)
        let paddingRadii = innerRadii(radii, decorated.borderWidths)
        if !inner.isEmpty, paddingBox.width > 0, paddingBox.height > 0 {
            cairo_save(cr)
            cairo_new_path(cr)
            addRoundedRect(cr, paddingBox, paddingRadii)
            cairo_clip(cr)
            for shadow in inner.reversed() {
                let hole = Rect(
                    x: paddingBox.x + shadow.x + shadow.spread, y: paddingBox.y + shadow.y + shadow.spread,
                    width: max(0, paddingBox.width - 2 * shadow.spread), height: max(0, paddingBox.height - 2 * shadow.spread))
                let extent = min(shadow.blur, 512) * 2 + abs(shadow.x) + abs(shadow.y) + abs(shadow.spread) + 1
                let outside = Rect(x: paddingBox.x - extent, y: paddingBox.y - extent, width: paddingBox.width + 2 * extent, height: paddingBox.height + 2 * extent)
                drawShadow(cr, color: map(shadow.color), blur: shadow.blur, within: paddingBox, page: page) { cr in
                    cairo_rectangle(cr, outside.x, outside.y, outside.width, outside.height)
                    if hole.width > 0, hole.height > 0 { addRoundedRect(cr, hole, spread(paddingRadii, by: -shadow.spread)) }
                    cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
                }
            }
            cairo_restore(cr)
        }
        if decorated.hasBorder { paintBorder(decorated, paddingBox: paddingBox, paddingRadii: paddingRadii, cr: cr, map: map) }
    }

    /// The ring between the border box and the padding box, each side in its own colour (split
    /// on the corners' diagonals), dashed and dotted styles stroked along the ring's middle.
    static func paintBorder(_ decorated: DecoratedBox, paddingBox: Rect, paddingRadii: [Double], cr: OpaquePointer, map: (Color) -> Color) {
        let box = decorated.box
        let widths = decorated.borderWidths
        let colors = decorated.borderColors
        if decorated.borderStyle == .dashed || decorated.borderStyle == .dotted {
            let width = max(widths.top, widths.right, widths.bottom, widths.left)
            let half = Edges(all: width / 2)
            cairo_new_path(cr)
            addRoundedRect(cr, box.inset(by: half), innerRadii(decorated.radii, half))
            var dashes = decorated.borderStyle == .dashed ? [width * 3, width * 2] : [width, width]
            cairo_set_dash(cr, &dashes, 2, 0)
            cairo_set_line_width(cr, width)
            setColor(cr, map(colors.top))
            cairo_stroke(cr)
            cairo_set_dash(cr, nil, 0, 0)
            return
        }
        func ring() {
            cairo_new_path(cr)
            if decorated.borderStyle == .double, max(widths.top, widths.right, widths.bottom, widths.left) >= 3 {
                // Two lines, each a third of the width, with a third between them.
                let third = Edges(top: widths.top / 3, right: widths.right / 3, bottom: widths.bottom / 3, left: widths.left / 3)
                let twoThirds = Edges(top: widths.top * 2 / 3, right: widths.right * 2 / 3, bottom: widths.bottom * 2 / 3, left: widths.left * 2 / 3)
                addRoundedRect(cr, box, decorated.radii)
                addRoundedRect(cr, box.inset(by: third), innerRadii(decorated.radii, third))
                addRoundedRect(cr, box.inset(by: twoThirds), innerRadii(decorated.radii, twoThirds))
            } else {
                addRoundedRect(cr, box, decorated.radii)
            }
            addRoundedRect(cr, paddingBox, paddingRadii)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
            cairo_fill(cr)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
        }
        if colors.top == colors.right && colors.top == colors.bottom && colors.top == colors.left {
            setColor(cr, map(colors.top))
            ring()
            return
        }
        let (x0, y0, x1, y1) = (box.x, box.y, box.maxX, box.maxY)
        let (i0, j0, i1, j1) = (paddingBox.x, paddingBox.y, paddingBox.maxX, paddingBox.maxY)
        let sides: [(Double, Color, [(Double, Double)])] = [
            (widths.top, colors.top, [(x0, y0), (x1, y0), (i1, j0), (i0, j0)]),
            (widths.right, colors.right, [(x1, y0), (x1, y1), (i1, j1), (i1, j0)]),
            (widths.bottom, colors.bottom, [(x1, y1), (x0, y1), (i0, j1), (i1, j1)]),
            (widths.left, colors.left, [(x0, y1), (x0, y0), (i0, j0), (i0, j1)]),
        ]
        for (width, color, corners) in sides where width > 0 {
            cairo_save(cr)
            cairo_new_path(cr)
            cairo_move_to(cr, corners[0].0, corners[0].1)
            for corner in corners.dropFirst() { cairo_line_to(cr, corner.0, corner.1) }
            cairo_close_path(cr)
            cairo_clip(cr)
            setColor(cr, map(color))
            ring()
            cairo_restore(cr)
        }
    }

    /// Fills the path `shape` adds, blurred by `blur` device pixels, in `color`; what shows lies
    /// within `bounds` and the blur's reach around it.
    static func drawShadow(_ cr: OpaquePointer, color: Color, blur: Double, within bounds: Rect, page: Rect, shape: (OpaquePointer) -> Void) {
        setColor(cr, color)
        guard blur >= 0.5 else {
            cairo_new_path(cr)
            shape(cr)
            cairo_fill(cr)
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
            return
        }
        // The mask covers the shape and the blur's reach around it, within the page; blurs past
        // 512 device px (a faint haze by then) are drawn at 512, which bounds the mask.
        let blur = min(blur, 512)
        let margin = (blur * 1.5).rounded(.up)
        let left = max(bounds.x, page.x) - margin, top = max(bounds.y, page.y) - margin
        let right = min(bounds.maxX, page.maxX) + margin, bottom = min(bounds.maxY, page.maxY) + margin
        guard right > left, bottom > top else { return }
        let originX = left.rounded(.down), originY = top.rounded(.down)
        let width = Int32((right - originX).rounded(.up) + 1), height = Int32((bottom - originY).rounded(.up) + 1)
        guard let mask = cairo_image_surface_create(CAIRO_FORMAT_A8, width, height) else { return }
        defer { cairo_surface_destroy(mask) }
        guard cairo_surface_status(mask) == CAIRO_STATUS_SUCCESS, let maskCR = cairo_create(mask) else { return }
        cairo_translate(maskCR, -originX, -originY)
        cairo_set_source_rgba(maskCR, 0, 0, 0, 1)
        shape(maskCR)
        cairo_fill(maskCR)
        cairo_destroy(maskCR)
        cairo_surface_flush(mask)
        if let data = cairo_image_surface_get_data(mask) {
            let stride = Int(cairo_image_surface_get_stride(mask))
            blurAlpha(data, width: Int(width), height: Int(height), stride: stride, sigma: blur / 2)
        }
        cairo_surface_mark_dirty(mask)
        cairo_mask_surface(cr, mask, originX, originY)
    }

    /// Three box blurs in each direction (CSS: a Gaussian of standard deviation `sigma`).
    static func blurAlpha(_ data: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int, sigma: Double) {
        let size = max(1, Int((sigma * 3 * (2 * Double.pi).squareRoot() / 4 + 0.5).rounded(.down)))
        var line = [UInt8](repeating: 0, count: max(width, height))
        var out = line
        func pass(_ count: Int, _ get: (Int) -> UInt8, _ set: (Int, UInt8) -> Void) {
            for index in 0..<count { line[index] = get(index) }
            for _ in 0..<3 {
                // A box of `size` pixels, centred (shifted half a pixel for even sizes, alternately).
                let before = size / 2, after = size - 1 - before
                var sum = 0
                for index in -before...after where index >= 0 && index < count { sum += Int(line[index]) }
                for index in 0..<count {
                    out[index] = UInt8((sum + size / 2) / size)
                    let leaving = index - before, entering = index + after + 1
                    if leaving >= 0 { sum -= Int(line[leaving]) }
                    if entering < count { sum += Int(line[entering]) }
                }
                swap(&line, &out)
            }
            for index in 0..<count { set(index, line[index]) }
        }
        for y in 0..<height {
            let row = data + y * stride
            pass(width, { row[$0] }, { row[$0] = $1 })
        }
        for x in 0..<width {
            pass(height, { data[$0 * stride + x] }, { data[$0 * stride + x] = $1 })
        }
    }

    static func setColor(_ cr: OpaquePointer, _ color: Color) {
        cairo_set_source_rgba(cr, Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255, Double(color.alpha) / 255)
    }
}

/// Where a background image's tile goes (CSS Backgrounds 3): its size from `background-size`
/// and the image's own size, its place from `background-position` in the padding box, and for
/// `round` a size that fits a whole number of tiles. `space` is drawn as `repeat`.
enum BackgroundGeometry {
    static func tile(_ fill: BackgroundImageFill, intrinsicWidth: Double, intrinsicHeight: Double) -> Rect {
        let box = fill.box
        let ratio = intrinsicWidth / intrinsicHeight
        var width: Double, height: Double
        func resolve(_ length: Length, _ base: Double) -> Double {
            switch length {
            case .px(let px): return px * fill.scale
            case .percent(let percent): return base * percent / 100
            }
        }
        switch fill.size {
        case .contain, .cover:
            let widthScale = box.width / intrinsicWidth, heightScale = box.height / intrinsicHeight
            let factor = fill.size == .contain ? min(widthScale, heightScale) : max(widthScale, heightScale)
            (width, height) = (intrinsicWidth * factor, intrinsicHeight * factor)
        case .lengths(let w, let h):
            switch (w.map { resolve($0, box.width) }, h.map { resolve($0, box.height) }) {
            case (let w?, let h?): (width, height) = (w, h)
            case (let w?, nil): (width, height) = (w, w / ratio)
            case (nil, let h?): (width, height) = (h * ratio, h)
            case (nil, nil): (width, height) = (intrinsicWidth, intrinsicHeight)
            }
        }
        if fill.repeatMode.x == .round, width > 0, box.width > 0 {
            width = box.width / max(1, (box.width / width).rounded())
            if fill.repeatMode.y != .round, case .lengths(_, nil) = fill.size { height = width / ratio }
        }
        if fill.repeatMode.y == .round, height > 0, box.height > 0 {
            height = box.height / max(1, (box.height / height).rounded())
            if fill.repeatMode.x != .round, case .lengths(nil, _) = fill.size { width = height * ratio }
        }
        func offset(_ length: Length, fromEnd: Bool, free: Double) -> Double {
            let value: Double
            switch length {
            case .px(let px): value = px * fill.scale
            case .percent(let percent): value = free * percent / 100
            }
            return fromEnd ? free - value : value
        }
        let x = box.x + offset(fill.position.x, fromEnd: fill.position.xFromEnd, free: box.width - width)
        let y = box.y + offset(fill.position.y, fromEnd: fill.position.yFromEnd, free: box.height - height)
        return Rect(x: x, y: y, width: width, height: height)
    }
}
