import CCairo
import CFreeType
import CQuirePNG
import Glibc
import QuireContainer
import QuireCore
import QuireImages
import QuireLayout
import QuirePreparation
import QuireStyle
import QuireText

/// Page colours: light (the book's own), sepia, or dark (text recoloured, pictures kept).
public enum Theme: String, Sendable, CaseIterable {
    case light, sepia, dark

    var background: Color {
        switch self {
        case .light: return .white
        case .sepia: return Color(red: 0xF4, green: 0xEC, blue: 0xD8)
        case .dark: return Color(red: 0x12, green: 0x12, blue: 0x12)
        }
    }

    /// Behind a search match: a marker yellow, dimmed in the dark theme so the light text stays legible.
    var highlight: Color {
        switch self {
        case .light, .sepia: return Color(red: 0xFF, green: 0xE0, blue: 0x3A)
        case .dark: return Color(red: 0x6B, green: 0x58, blue: 0x00)
        }
    }

    /// Book colours are kept in the light theme; the other themes recolour dark text (and light
    /// text in dark mode stays readable) the way reading apps do.
    func map(_ color: Color) -> Color {
        switch self {
        case .light: return color
        case .sepia:
            let luma = (Int(color.red) * 77 + Int(color.green) * 150 + Int(color.blue) * 29) >> 8
            return luma < 96 ? Color(red: 0x5B, green: 0x46, blue: 0x36, alpha: color.alpha) : color
        case .dark:
            let luma = (Int(color.red) * 77 + Int(color.green) * 150 + Int(color.blue) * 29) >> 8
            return luma < 128 ? Color(red: 0xDC, green: 0xDC, blue: 0xDC, alpha: color.alpha) : color
        }
    }
}

/// How a page is painted: theme, colour or grey, dithering, PNG compression.
public struct PaintSettings: Sendable, Hashable {
    public var theme: Theme = .light
    /// 8-bit grey output for e-ink.
    public var gray = false
    /// With `gray`, quantise to 16 levels with an ordered dither (what most e-ink panels show).
    public var dither16 = false
    /// libdeflate level for PNG (1–12), no filtering. Level 2: over 61 text pages of Moby-Dick
    /// (800×1067 grey) it takes 2.6 ms a page and gives 57 KB, where level 1 (another match
    /// finder) takes 2.9 ms for 60 KB and level 3 3.2 ms for 55 KB; compression is still a third
    /// of painting.
    public var compressionLevel = 2
    /// Chapter text ranges (UTF-16 offsets) to mark, such as search matches.
    public var highlights: [Range<Int>] = []

    public init() {}
}

/// The process's FreeType library for painting. cairo keeps font faces in a cache of its own
/// beyond any painter's life, so the FT_Faces behind them (and the library they come from) must
/// outlive painters: one library for all of them, faces made and freed under its lock (FreeType
/// allows one library on several threads only so). HarfBuzz never sees these faces.
final class PaintingFreeType: @unchecked Sendable {
    static let shared = PaintingFreeType()
    let lock = Lock()
    let library: FT_Library?
    /// cairo's user-data key for the FT_Face behind a cairo face.
    let faceKey = UnsafeMutablePointer<cairo_user_data_key_t>.allocate(capacity: 1)

    private init() {
        var library: FT_Library?
        self.library = FT_Init_FreeType(&library) == 0 ? library : nil
    }

    /// cairo faces of font files, one per file (and synthetic style) for the whole process. Every
    /// painter draws with the same face: cairo keeps recently used scaled fonts (and so their
    /// faces and mapped font files) alive after a painter is gone, and with a face per painter a
    /// long batch pinned a new copy of every CJK font per book (870 MB over the corpus). cairo
    /// serialises its own use of a face's FT_Face.
    private let fileFacesLock = Lock()
    private var fileFaces: [String: OpaquePointer] = [:]

    /// The shared face for `key`, made by `make` the first time; a new reference, for the caller to destroy.
    func fileFace(_ key: String, make: () -> OpaquePointer?) -> OpaquePointer? {
        fileFacesLock.withLock {
            if let face = fileFaces[key] { return cairo_font_face_reference(face) }
            guard let face = make() else { return nil }
            fileFaces[key] = face
            return cairo_font_face_reference(face)
        }
    }

    /// What a cairo face holds on to: the FT_Face, and the font bytes of a face made from memory.
    struct Held {
        var face: FT_Face
        var bytes: UnsafeMutableRawBufferPointer?
    }

    /// Called by cairo when it lets go of the face, on whichever thread that is.
    static let release: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
        guard let held = pointer?.assumingMemoryBound(to: Held.self) else { return }
        PaintingFreeType.shared.lock.withLock { _ = FT_Done_Face(held.pointee.face) }
        held.pointee.bytes?.deallocate()
        held.deinitialize(count: 1)
        held.deallocate()
    }
}

/// Paints display lists with cairo. One painter per worker thread, with its own cache of cairo
/// font faces (their FT_Faces are never shared with HarfBuzz).
public final class Painter {
    private var fontFaces: [String: OpaquePointer] = [:]
    /// The face the last run asked for: runs in a row mostly share one, and this skips building
    /// the string key (the face is held, so its identity cannot pass to another).
    private var lastFace: (face: FontFace, bold: Bool, italic: Bool, cairo: OpaquePointer)?
    /// Where a run's glyphs are placed for cairo, kept from run to run.
    private var glyphBuffer: [cairo_glyph_t] = []
    private let options: OpaquePointer
    /// Reads an image's bytes from the book by archive path.
    private let resources: (@Sendable (String) -> [UInt8]?)?
    /// Recently decoded images (a page often repeats one, e.g. an ornament).
    private var decoded: [String: DecodedImage] = [:]
    private var decodedOrder: [String] = []
    /// Background images' own sizes by resource path (they are small; a book has few).
    private var backgroundSizes: [String: (width: Int, height: Int)] = [:]
    public private(set) var imageWarnings: [String] = []
    /// The image limits of the book's run (`--max-image-*`).
    private let limits: Limits

    public init(resources: (@Sendable (String) -> [UInt8]?)? = nil, limits: Limits = .standard) {
        self.resources = resources
        self.limits = limits
        options = cairo_font_options_create()
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_SLIGHT)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
    }

    /// The surface the pages this painter writes are painted on, a band at a time (a whole page
    /// for `bitmap`), kept from page to page: a new one would be allocated and cleared for
    /// nothing, as painting covers it.
    private var reusable: (surface: OpaquePointer, width: Int32, height: Int32)?

    deinit {
        for face in fontFaces.values { cairo_font_face_destroy(face) }
        cairo_font_options_destroy(options)
        if let reusable { cairo_surface_destroy(reusable.surface) }
    }

    /// The cairo face for a font (plus synthetic bold/oblique flags), created on first use.
    private func cairoFace(_ face: FontFace, bold: Bool, italic: Bool) -> OpaquePointer? {
        if let last = lastFace, last.face === face, last.bold == bold, last.italic == italic { return last.cairo }
        let found = cairoFaceByKey(face, bold: bold, italic: italic)
        if let found { lastFace = (face, bold, italic, found) }
        return found
    }

    private func cairoFaceByKey(_ face: FontFace, bold: Bool, italic: Bool) -> OpaquePointer? {
        let key = face.key + (bold ? "+b" : "") + (italic ? "+i" : "")
        if let cached = fontFaces[key] { return cached }
        let made: OpaquePointer?
        if case .file = face.source {
            made = PaintingFreeType.shared.fileFace(key) { Self.makeCairoFace(face, bold: bold, italic: italic) }
        } else {
            // A book's font lives with the book: this painter's own.
            made = Self.makeCairoFace(face, bold: bold, italic: italic)
        }
        if let made { fontFaces[key] = made }
        return made
    }

    /// A new cairo face over a new FT_Face of the font (file or bytes), with synthetic bold or oblique.
    private static func makeCairoFace(_ face: FontFace, bold: Bool, italic: Bool) -> OpaquePointer? {
        let freetype = PaintingFreeType.shared
        var ftFace: FT_Face?
        var bytes: UnsafeMutableRawBufferPointer?
        let made: Bool = freetype.lock.withLock {
            guard let library = freetype.library else { return false }
            switch face.source {
            case .file(let path, let index):
                return FT_New_Face(library, path, FT_Long(index), &ftFace) == 0
            case .memory(_, let data, let index):
                // FreeType reads a memory face's bytes for as long as the face lives.
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
                data.withUnsafeBytes { buffer.copyMemory(from: $0) }
                bytes = buffer
                return FT_New_Memory_Face(library, buffer.baseAddress!.assumingMemoryBound(to: FT_Byte.self), FT_Long(data.count), FT_Long(index), &ftFace) == 0
            }
        }
        guard made, let ftFace else {
            bytes?.deallocate()
            return nil
        }
        let held = UnsafeMutablePointer<PaintingFreeType.Held>.allocate(capacity: 1)
        held.initialize(to: PaintingFreeType.Held(face: ftFace, bytes: bytes))
        guard let cairoFace = cairo_ft_font_face_create_for_ft_face(ftFace, 0) else {
            PaintingFreeType.release(held)
            return nil
        }
        guard cairo_font_face_set_user_data(cairoFace, freetype.faceKey, held, PaintingFreeType.release) == CAIRO_STATUS_SUCCESS else {
            cairo_font_face_destroy(cairoFace)
            PaintingFreeType.release(held)
            return nil
        }
        var synthesize: UInt32 = 0
        if bold { synthesize |= CAIRO_FT_SYNTHESIZE_BOLD.rawValue }
        if italic { synthesize |= CAIRO_FT_SYNTHESIZE_OBLIQUE.rawValue }
        if synthesize != 0 { cairo_ft_font_face_set_synthesize(cairoFace, synthesize) }
        return cairoFace
    }

    /// Paints a page into a new cairo image surface (RGB24). The caller destroys it. `band`: only
    /// that horizontal band of the page (a tile of a tall scrolled document).
    public func paint(_ page: Page, settings: PaintSettings, band: (top: Int, height: Int)? = nil) -> OpaquePointer {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(page.width), Int32(band?.height ?? page.height))!
        paint(page, settings: settings, top: band?.top ?? 0, imageHeight: band?.height ?? page.height, runs: nil, into: surface)
        return surface
    }

    /// The painter's kept surface for a page of this size (made anew when the size changes).
    private func keptSurface(width: Int, height: Int) -> OpaquePointer {
        if let reusable, reusable.width == Int32(width), reusable.height == Int32(height) { return reusable.surface }
        if let reusable { cairo_surface_destroy(reusable.surface) }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))!
        reusable = (surface, Int32(width), Int32(height))
        return surface
    }

    /// The rows a PNG is made of at a time. A page is painted band by band and each band is
    /// packed into the PNG's rows before the next is painted, so a worker keeps some 0.8 MB of
    /// surface for a 800×1067 page, not 3.4 MB. A band costs one more pass over the page's
    /// display list, drawing only the runs that meet its rows; a run crossing its edge is
    /// drawn in both bands.
    public static let bandRows = 256

    /// Paints the rows `image` of a page (all of it, or a tile) band by band into a PNG: the
    /// same pixels as the whole image painted at once (see `BandPlan`).
    private func paintRows(_ page: Page, settings: PaintSettings, image: (top: Int, height: Int)) -> PNGRows {
        var rows = PNGRows(width: page.width, height: image.height, gray: settings.gray, dither16: settings.dither16, level: settings.compressionLevel)
        let whole = image.top..<(image.top + image.height)
        let plan = image.height > Self.bandRows ? BandPlan(page) : nil
        // Bands of equal height: a 1,067-row page is five bands of 214 rows, not four of 256 and one of 43.
        let bands = plan == nil ? 1 : (image.height + Self.bandRows - 1) / Self.bandRows
        let bandHeight = max(1, (image.height + bands - 1) / bands)
        var top = whole.lowerBound
        while top < whole.upperBound {
            var end = min(top + bandHeight, whole.upperBound)
            if top == whole.lowerBound, let plan, plan.firstBandBottom > Double(end) {
                end = plan.firstBandBottom >= Double(whole.upperBound) ? whole.upperBound : Int(plan.firstBandBottom.rounded(.up))
            }
            let band = top..<end
            let painted = plan.map { $0.paintedRows(band, within: whole) } ?? band
            let surface = bandSurface(width: page.width, rows: painted.count)
            defer { cairo_surface_destroy(surface) }
            let runs = plan.map { (spans: $0.spans, rows: Double(band.lowerBound)..<Double(band.upperBound)) }
            paint(page, settings: settings, top: painted.lowerBound, imageHeight: image.height, runs: runs, into: surface)
            let stride = Int(cairo_image_surface_get_stride(surface))
            let first = cairo_image_surface_get_data(surface)! + (band.lowerBound - painted.lowerBound) * stride
            rows.add(xrgb: first, stride: stride, count: band.count)
            top = end
        }
        return rows
    }

    /// How a page can be painted in bands with the same pixels as painted whole.
    /// - Painted `top` rows further up, glyphs, fills, strokes and box edges land on the same
    ///   pixels: their device coordinates differ by a whole number, exactly.
    /// - A glyph run must not be cut by a band's edge: cairo then clips it to its glyphs' metric
    ///   boxes, and the antialiased fringe a glyph has outside its box is lost (a faint pixel
    ///   above a capital in Moby-Dick). A band is grown to hold whole every run that meets it;
    ///   a run's rows come from the font's ink bounds (head table), with room for hinting and
    ///   synthetic bold. A band draws only the runs that meet its own rows.
    /// - Images are drawn through scaled matrices, whose inverse (what pixman samples by) rounds
    ///   differently when the page is moved. They are painted in the first band, which starts
    ///   where the whole page does and reaches past the lowest of them (an image low on a page
    ///   makes the first band tall). Gradients, shadows and sideways text, rarer, make the page
    ///   painted whole (no plan).
    private struct BandPlan {
        /// The page rows each glyph run may touch, by item (nil for the other items).
        var spans: [Range<Double>?] = []
        /// The row the first band reaches at least.
        var firstBandBottom = 0.0

        init?(_ page: Page) {
            spans.reserveCapacity(page.items.count)
            for item in page.items {
                spans.append(nil)
                switch item {
                case .glyphs(let run):
                    guard run.orientation != .sideways else { return nil }
                    spans[spans.count - 1] = Self.span(run)
                case .fill, .stroke:
                    continue
                case .box(let decorated):
                    guard decorated.shadows.isEmpty else { return nil }
                case .image(let box, let alt):
                    // Clipped to its box; a placeholder's alt text is drawn with it.
                    firstBandBottom = max(firstBandBottom, box.rect.maxY + 2, alt.flatMap(Self.span)?.upperBound ?? -.infinity)
                    guard alt?.orientation != .sideways else { return nil }
                case .backgroundImage(let fill):
                    // Clipped to its area.
                    firstBandBottom = max(firstBandBottom, fill.area.maxY + 2)
                case .gradient:
                    return nil
                }
            }
        }

        /// The rows the run's glyphs may reach: the font's ink bounds (head table), with room for
        /// hinting, the antialiased fringe and synthetic bold. (Each glyph's own outline bounds,
        /// from HarfBuzz, saved 0.3% of Moby-Dick's render instructions net: not worth a table
        /// of every face's glyphs in every painter.)
        private static func span(_ run: GlyphRun) -> Range<Double>? {
            guard let first = run.placed.first else { return nil }
            var (low, high) = (first.y, first.y)
            for glyph in run.placed {
                low = min(low, glyph.y)
                high = max(high, glyph.y)
            }
            let scale = run.size / run.face.unitsPerEm
            let slack = 0.1 * run.size + 2
            return (run.origin.y + Double(low) - run.face.inkTop * scale - slack)..<(run.origin.y + Double(high) - run.face.inkBottom * scale + slack)
        }

        /// The rows to paint for `band`: the band, grown to hold whole every run that meets it,
        /// within the image (whose own edges cut a run as painting it whole does).
        func paintedRows(_ band: Range<Int>, within whole: Range<Int>) -> Range<Int> {
            let (top, bottom) = (Double(band.lowerBound), Double(band.upperBound))
            var (low, high) = (top, bottom)
            for case let span? in spans where span.lowerBound < bottom && span.upperBound > top {
                low = min(low, span.lowerBound)
                high = max(high, span.upperBound)
            }
            // Clamped before converting: a run far off the page has a span far off the page.
            let (first, last) = (Double(whole.lowerBound), Double(whole.upperBound))
            return Int(max(first, low).rounded(.down))..<Int(min(last, high).rounded(.up))
        }
    }

    /// A surface of `rows` rows for one band, which the caller destroys: over the kept surface's
    /// memory, grown to the most rows a band has needed up to twice `bandRows`, or with its own
    /// for a taller band (a page with an image is painted whole, and that memory is freed; the
    /// kept surface is freed first, so the two are never held at once).
    private func bandSurface(width: Int, rows: Int) -> OpaquePointer {
        if rows > 2 * Self.bandRows {
            if let reusable { cairo_surface_destroy(reusable.surface) }
            reusable = nil
            return cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(rows))!
        }
        let kept: OpaquePointer
        if let reusable, reusable.width == Int32(width), reusable.height >= Int32(rows) {
            kept = reusable.surface
        } else {
            kept = keptSurface(width: width, height: min(2 * Self.bandRows, (rows + 63) / 64 * 64))
        }
        return cairo_image_surface_create_for_data(
            cairo_image_surface_get_data(kept), CAIRO_FORMAT_RGB24, Int32(width), Int32(rows), cairo_image_surface_get_stride(kept))!
    }

    /// Paints the page's rows from `top` over the whole of `surface`: the opaque background first
    /// (every theme's is), so nothing of what the surface held before shows. `imageHeight` is the
    /// height of the image the rows belong to (the page, or a tile of it): it bounds the size a
    /// background image is decoded at, the same for every band of it. With `runs`, a glyph run
    /// whose span (by item) misses `rows` (the band's, which the caller keeps) is not drawn: it
    /// leaves no pixel there.
    private func paint(
        _ page: Page, settings: PaintSettings, top: Int, imageHeight: Int, runs: (spans: [Range<Double>?], rows: Range<Double>)?,
        into surface: OpaquePointer
    ) {
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        setColor(cr, settings.theme.background)
        cairo_paint(cr)
        if top != 0 { cairo_translate(cr, 0, -Double(top)) }
        cairo_set_font_options(cr, options)
        if let clip = page.clip {
            cairo_rectangle(cr, clip.x, clip.y, clip.width, clip.height)
            cairo_clip(cr)
        }
        for (index, item) in page.items.enumerated() {
            if let runs, let span = runs.spans[index], !span.overlaps(runs.rows) { continue }
            switch item {
            case .fill(let rect, let color):
                setColor(cr, settings.theme.map(color))
                cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height)
                cairo_fill(cr)
            case .gradient(let fill):
                paintGradient(fill, cr: cr, theme: settings.theme)
            case .backgroundImage(let fill):
                // The image painted (a tile of a tall scrolled page) bounds what a tile may cost.
                paintBackgroundImage(fill, cr: cr, page: Rect(x: 0, y: 0, width: Double(page.width), height: Double(imageHeight)), theme: settings.theme)
            case .box(let decorated):
                BoxPainter.paint(decorated, cr: cr, page: Rect(x: 0, y: 0, width: Double(page.width), height: Double(page.height)), map: settings.theme.map)
            case .stroke(let from, let to, let width, let color, let style):
                setColor(cr, settings.theme.map(color))
                cairo_set_line_width(cr, width)
                switch style {
                case .dashed:
                    var dashes = [width * 3, width * 2]
                    cairo_set_dash(cr, &dashes, 2, 0)
                case .dotted:
                    var dashes = [width, width]
                    cairo_set_dash(cr, &dashes, 2, 0)
                default:
                    cairo_set_dash(cr, nil, 0, 0)
                }
                if style == .double, width >= 3 {
                    // Two lines a third of the width each, either side of the centre line.
                    let length = max(((to.x - from.x) * (to.x - from.x) + (to.y - from.y) * (to.y - from.y)).squareRoot(), 1e-9)
                    let (nx, ny) = (-(to.y - from.y) / length * width / 3, (to.x - from.x) / length * width / 3)
                    cairo_set_line_width(cr, width / 3)
                    for side in [-1.0, 1.0] {
                        cairo_move_to(cr, from.x + nx * side, from.y + ny * side)
                        cairo_line_to(cr, to.x + nx * side, to.y + ny * side)
                    }
                } else {
                    cairo_move_to(cr, from.x, from.y)
                    cairo_line_to(cr, to.x, to.y)
                }
                cairo_stroke(cr)
                cairo_set_dash(cr, nil, 0, 0)
            case .glyphs(let run):
                turned(run, cr: cr) { run in
                    if !settings.highlights.isEmpty { mark(run, ranges: settings.highlights, cr: cr, theme: settings.theme) }
                    draw(run, cr: cr, theme: settings.theme)
                }
            case .image(let box, let alt):
                if box.state == .image, let image = decode(box) {
                    ImagePainter.draw(image, in: box.rect, cr: cr, opacity: box.opacity)
                    continue
                }
                // A placeholder: a light frame with a cross (and the alt text when there is one).
                setColor(cr, settings.theme.map(Color(red: 160, green: 160, blue: 160)))
                cairo_set_line_width(cr, 1)
                cairo_rectangle(cr, box.rect.x + 0.5, box.rect.y + 0.5, max(box.rect.width - 1, 0), max(box.rect.height - 1, 0))
                cairo_move_to(cr, box.rect.x, box.rect.y)
                cairo_line_to(cr, box.rect.maxX, box.rect.maxY)
                cairo_move_to(cr, box.rect.maxX, box.rect.y)
                cairo_line_to(cr, box.rect.x, box.rect.maxY)
                cairo_stroke(cr)
                if let alt { turned(alt, cr: cr) { draw($0, cr: cr, theme: settings.theme) } }
            }
        }
        cairo_surface_flush(surface)
    }

    /// A background image layer: measured, sized and placed in its box (CSS Backgrounds 3,
    /// sections 3.6 to 3.9), decoded once at the tile's size and repeated by cairo. A gradient
    /// layer has no size of its own: auto is the positioning area, and it is drawn into its tile.
    private func paintBackgroundImage(_ fill: BackgroundImageFill, cr: OpaquePointer, page: Rect, theme: Theme) {
        let intrinsic: (width: Double, height: Double)
        if fill.gradient != nil {
            guard fill.box.width > 0, fill.box.height > 0 else { return }
            intrinsic = (fill.box.width, fill.box.height)
        } else {
            guard let info = backgroundImageSize(fill) else { return }
            intrinsic = (Double(info.width) * fill.scale, Double(info.height) * fill.scale)
        }
        var tile = BackgroundGeometry.tile(fill, intrinsicWidth: intrinsic.width, intrinsicHeight: intrinsic.height)
        guard tile.width >= 0.5, tile.height >= 0.5 else { return }
        // A repeating axis starts its tiles at the painted area (the pattern is the same), so a
        // far-off position never reaches cairo.
        if fill.repeatMode.x != .noRepeat { tile.x -= ((tile.x - fill.area.x) / tile.width).rounded(.down) * tile.width }
        if fill.repeatMode.y != .noRepeat { tile.y -= ((tile.y - fill.area.y) / tile.height).rounded(.down) * tile.height }
        // An axis that does not repeat shows its one tile only where that meets the area.
        if fill.repeatMode.x == .noRepeat, tile.maxX <= fill.area.x || tile.x >= fill.area.maxX { return }
        if fill.repeatMode.y == .noRepeat, tile.maxY <= fill.area.y || tile.y >= fill.area.maxY { return }
        // A tile far larger than the page is decoded at twice the page's size at most.
        let decodeScale = min(1, 2 * max(page.width, page.height) / max(tile.width, tile.height), Double(Page.maxTileHeight) / max(tile.width, tile.height))
        let image: DecodedImage
        if let gradient = fill.gradient {
            guard let drawn = gradientTile(gradient, width: tile.width * decodeScale, height: tile.height * decodeScale, scale: fill.scale * decodeScale, theme: theme)
            else { return }
            image = drawn
        } else {
            let box = ImageBox(
                rect: Rect(x: 0, y: 0, width: tile.width * decodeScale, height: tile.height * decodeScale), resource: fill.resource, alt: "", state: .image,
                inlineData: fill.inlineData)
            guard let decoded = decode(box) else { return }
            image = decoded
        }
        cairo_save(cr)
        cairo_new_path(cr)
        cairo_rectangle(cr, fill.area.x, fill.area.y, fill.area.width, fill.area.height)
        cairo_clip(cr)
        if !fill.radii.isEmpty {
            BoxPainter.addRoundedRect(cr, fill.clip, fill.radii)
            cairo_clip(cr)
        }
        // An axis that does not repeat paints one tile's band.
        let band = Rect(
            x: fill.repeatMode.x == .noRepeat ? tile.x : fill.area.x, y: fill.repeatMode.y == .noRepeat ? tile.y : fill.area.y,
            width: fill.repeatMode.x == .noRepeat ? tile.width : fill.area.width, height: fill.repeatMode.y == .noRepeat ? tile.height : fill.area.height)
        cairo_rectangle(cr, band.x, band.y, band.width, band.height)
        cairo_clip(cr)
        ImagePainter.draw(image, in: tile, cr: cr, opacity: fill.opacity, repeating: true)
        cairo_restore(cr)
    }

    /// Keeps a decoded picture or a drawn gradient tile: a background repeats on every page its
    /// box spans, and the last 8 are kept.
    private func remember(_ image: DecodedImage, as key: String) {
        decoded[key] = image
        decodedOrder.append(key)
        if decodedOrder.count > 8 { decoded[decodedOrder.removeFirst()] = nil }
    }

    /// A gradient drawn into one tile, as the image a repeating background layer repeats (kept
    /// with the decoded pictures, so a chapter's body background is drawn once, not per page).
    private func gradientTile(_ gradient: Gradient, width: Double, height: Double, scale: Double, theme: Theme) -> DecodedImage? {
        let (w, h) = (max(1, Int(width.rounded(.up))), max(1, Int(height.rounded(.up))))
        let key = "gradient \(gradient) \(theme) \(scale)@\(w)x\(h)"
        if let image = decoded[key] { return image }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(w), Int32(h))!
        defer { cairo_surface_destroy(surface) }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else { return nil }
        let cr = cairo_create(surface)!
        paintGradient(GradientFill(gradient, box: Rect(x: 0, y: 0, width: Double(w), height: Double(h)), scale: scale), cr: cr, theme: theme)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let pixels = Array(UnsafeBufferPointer(start: cairo_image_surface_get_data(surface)!, count: stride * h))
        let image = DecodedImage(width: w, height: h, stride: stride, pixels: pixels)
        remember(image, as: key)
        return image
    }

    /// A background image's own size, read once per resource (a background repeats on every
    /// page its box spans; the tile's decode is cached by `decode`).
    private func backgroundImageSize(_ fill: BackgroundImageFill) -> (width: Int, height: Int)? {
        if let path = fill.resource, let known = backgroundSizes[path] { return known }
        let bytes: [UInt8]?
        if let data = fill.inlineData { bytes = data } else if let path = fill.resource { bytes = resources?(path) } else { bytes = nil }
        guard let bytes else {
            if let path = fill.resource { imageWarnings.append("\(path): background image not in the book") }
            return nil
        }
        guard let info = try? ImageInfo.measure(bytes, limits: limits), info.width > 0, info.height > 0 else {
            imageWarnings.append("\(fill.resource ?? "data: URL"): background image cannot be read")
            return nil
        }
        if let path = fill.resource { backgroundSizes[path] = (info.width, info.height) }
        return (info.width, info.height)
    }

    /// Decodes an image at the size it is drawn (never the full bitmap of a large image).
    private func decode(_ box: ImageBox) -> DecodedImage? {
        let width = max(1, Int(box.rect.width.rounded(.up)))
        let height = max(1, Int(box.rect.height.rounded(.up)))
        if let data = box.inlineData {
            do {
                return try ImageDecoder.decode(data, info: try ImageInfo.measure(data, limits: limits), maxWidth: width, maxHeight: height, limits: limits)
            } catch {
                imageWarnings.append("inline image: \(error)")
                return nil
            }
        }
        guard let path = box.resource, let resources else { return nil }
        let key = "\(path)@\(width)x\(height)"
        if let image = decoded[key] { return image }
        guard let bytes = resources(path) else {
            imageWarnings.append("\(path): not in the book")
            return nil
        }
        do {
            let info = try ImageInfo.measure(bytes, limits: limits)
            let image = try ImageDecoder.decode(bytes, info: info, maxWidth: width, maxHeight: height, limits: limits)
            remember(image, as: key)
            return image
        } catch {
            imageWarnings.append("\(path): \(error)")
            return nil
        }
    }

    private func draw(_ run: GlyphRun, cr: OpaquePointer, theme: Theme) {
        guard !run.placed.isEmpty, let face = cairoFace(run.face, bold: run.syntheticBold, italic: run.syntheticItalic) else { return }
        cairo_set_font_face(cr, face)
        cairo_set_font_size(cr, run.size)
        setColor(cr, theme.map(run.color))
        // One buffer for every run the painter draws: a run is often a word or two.
        glyphBuffer.removeAll(keepingCapacity: true)
        for glyph in run.placed {
            glyphBuffer.append(cairo_glyph_t(index: UInt(glyph.id), x: run.origin.x + Double(glyph.x), y: run.origin.y + Double(glyph.y)))
        }
        glyphBuffer.withUnsafeBufferPointer { cairo_show_glyphs(cr, $0.baseAddress, Int32($0.count)) }
    }

    /// Runs `body` with the run as it is drawn: a sideways run of vertical text (Latin in a column)
    /// about its origin, turned a quarter turn clockwise; any other run as it is.
    private func turned(_ run: GlyphRun, cr: OpaquePointer, _ body: (GlyphRun) -> Void) {
        guard run.orientation == .sideways else { return body(run) }
        cairo_save(cr)
        cairo_translate(cr, run.origin.x, run.origin.y)
        cairo_rotate(cr, .pi / 2)
        var local = run
        local.origin = Point(x: 0, y: 0)
        body(local)
        cairo_restore(cr)
    }

    /// Fills the band behind the run's glyphs whose text falls in `ranges`, one box per stretch
    /// of marked glyphs: from the first glyph's pen position to the last one's advance.
    private func mark(_ run: GlyphRun, ranges: [Range<Int>], cr: OpaquePointer, theme: Theme) {
        guard run.hasSources, let face = cairoFace(run.face, bold: run.syntheticBold, italic: run.syntheticItalic) else { return }
        let marked = run.placed.map { glyph in ranges.contains { $0.contains(Int(glyph.source)) } }
        guard marked.contains(true) else { return }
        cairo_set_font_face(cr, face)
        cairo_set_font_size(cr, run.size)
        var fontExtents = cairo_font_extents_t()
        cairo_font_extents(cr, &fontExtents)
        setColor(cr, theme.highlight)
        if run.orientation == .upright {
            // Upright glyphs down a column: a box around each marked one.
            for index in marked.indices where marked[index] {
                let x = run.origin.x + Double(run.placed[index].x)
                let y = run.origin.y + Double(run.placed[index].y)
                var glyph = cairo_glyph_t(index: UInt(run.placed[index].id), x: 0, y: 0)
                var extents = cairo_text_extents_t()
                cairo_glyph_extents(cr, &glyph, 1, &extents)
                cairo_rectangle(cr, x, y - fontExtents.ascent, max(extents.x_advance, run.size), run.size)
            }
            cairo_fill(cr)
            return
        }
        var index = 0
        while index < marked.count {
            guard marked[index] else {
                index += 1
                continue
            }
            var last = index
            while last + 1 < marked.count, marked[last + 1] { last += 1 }
            var glyph = cairo_glyph_t(index: UInt(run.placed[last].id), x: 0, y: 0)
            var extents = cairo_text_extents_t()
            cairo_glyph_extents(cr, &glyph, 1, &extents)
            let left = run.origin.x + Double(min(run.placed[index].x, run.placed[last].x))
            let right = run.origin.x + Double(max(run.placed[index].x, run.placed[last].x)) + extents.x_advance
            cairo_rectangle(cr, left, run.origin.y - fontExtents.ascent, right - left, fontExtents.ascent + fontExtents.descent)
            cairo_fill(cr)
            index = last + 1
        }
    }

    /// A CSS gradient as a cairo pattern over its area. A repeating gradient repeats the span
    /// between its first and last stops.
    private func paintGradient(_ fill: GradientFill, cr: OpaquePointer, theme: Theme) {
        guard let first = fill.positions.first, let last = fill.positions.last else { return }
        let span = fill.repeating && last > first ? (first, last) : (0.0, 1.0)
        let pattern: OpaquePointer
        switch fill.shape {
        case .linear(let start, let end):
            let (dx, dy) = (end.x - start.x, end.y - start.y)
            pattern = cairo_pattern_create_linear(start.x + dx * span.0, start.y + dy * span.0, start.x + dx * span.1, start.y + dy * span.1)
        case .radial(let rx, let ry):
            let cx = fill.box.x + fill.box.width / 2
            let cy = fill.box.y + fill.box.height / 2
            pattern = cairo_pattern_create_radial(cx, cy, rx * span.0, cx, cy, rx * span.1)
            // An ellipse: the pattern's circle stretched to the box's proportions.
            if ry > 0, rx > 0, abs(rx - ry) > 0.01 {
                var matrix = cairo_matrix_t()
                cairo_matrix_init_translate(&matrix, cx, cy)
                cairo_matrix_scale(&matrix, 1, rx / ry)
                cairo_matrix_translate(&matrix, -cx, -cy)
                cairo_pattern_set_matrix(pattern, &matrix)
            }
        }
        defer { cairo_pattern_destroy(pattern) }
        for (colour, position) in zip(fill.colors, fill.positions) {
            let mapped = theme.map(colour)
            let offset = span.1 > span.0 ? (position - span.0) / (span.1 - span.0) : position
            cairo_pattern_add_color_stop_rgba(
                pattern, offset, Double(mapped.red) / 255, Double(mapped.green) / 255, Double(mapped.blue) / 255, Double(mapped.alpha) / 255)
        }
        cairo_pattern_set_extend(pattern, fill.repeating ? CAIRO_EXTEND_REPEAT : CAIRO_EXTEND_PAD)
        cairo_set_source(cr, pattern)
        cairo_save(cr)
        if !fill.radii.isEmpty {
            cairo_new_path(cr)
            BoxPainter.addRoundedRect(cr, fill.box, fill.radii)
            cairo_clip(cr)
        }
        cairo_rectangle(cr, fill.area.x, fill.area.y, fill.area.width, fill.area.height)
        cairo_fill(cr)
        cairo_restore(cr)
    }

    private func setColor(_ cr: OpaquePointer, _ color: Color) { BoxPainter.setColor(cr, color) }

    /// Paints a page to packed 8-bit pixels: RGB, or grey (16 dithered levels with `dither16`).
    public func bitmap(_ page: Page, settings: PaintSettings) -> Bitmap {
        let surface = keptSurface(width: page.width, height: page.height)
        paint(page, settings: settings, top: 0, imageHeight: page.height, runs: nil, into: surface)
        return PNGWriter.bitmap(surface: surface, gray: settings.gray, dither16: settings.dither16)
    }

    /// Paints a page and encodes it as PNG in memory: the bytes `writePNG` writes.
    public func pngBytes(_ page: Page, settings: PaintSettings) throws -> [UInt8] {
        try paintRows(page, settings: settings, image: (0, page.height)).encoded()
    }

    /// Paints a page (or the tile `band` of it) and writes it as PNG, atomically (a temporary
    /// name, then rename).
    public func writePNG(_ page: Page, settings: PaintSettings, band: (top: Int, height: Int)? = nil, to path: String) throws {
        try paintRows(page, settings: settings, image: band ?? (0, page.height)).write(to: path)
    }
}

/// Small helpers over painted surfaces (tests and tools inspect pixels without knowing cairo).
public enum PainterSurface {
    public static func destroy(_ surface: OpaquePointer) { cairo_surface_destroy(surface) }

    /// The bounding box of pixels that differ from the top-left (background) pixel.
    public static func inkBounds(_ surface: OpaquePointer) -> (minX: Int, minY: Int, maxX: Int, maxY: Int)? {
        let width = Int(cairo_image_surface_get_width(surface))
        let height = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard let data = cairo_image_surface_get_data(surface) else { return nil }
        let background = data.withMemoryRebound(to: UInt32.self, capacity: 1) { $0[0] } & 0xFFFFFF
        var bounds: (Int, Int, Int, Int)? = nil
        for y in 0..<height {
            let row = (data + y * stride).withMemoryRebound(to: UInt32.self, capacity: width) { $0 }
            for x in 0..<width where row[x] & 0xFFFFFF != background {
                if let current = bounds {
                    bounds = (min(current.0, x), min(current.1, y), max(current.2, x), max(current.3, y))
                } else {
                    bounds = (x, y, x, y)
                }
            }
        }
        return bounds.map { (minX: $0.0, minY: $0.1, maxX: $0.2, maxY: $0.3) }
    }
}

public enum ImagePainter {
    /// Draws decoded pixels scaled into `rect` (bilinear when scaled up, cairo's GOOD filter), at
    /// `opacity`; `repeating` tiles them from `rect` over the current clip instead.
    public static func draw(_ image: DecodedImage, in rect: Rect, cr: OpaquePointer, opacity: Double = 1, repeating: Bool = false) {
        guard image.width > 0, image.height > 0, rect.width > 0, rect.height > 0 else { return }
        image.pixels.withUnsafeBufferPointer { buffer in
            // cairo only reads a source surface; the surface never outlives this closure.
            guard let base = buffer.baseAddress,
                let surface = cairo_image_surface_create_for_data(
                    UnsafeMutablePointer(mutating: base), CAIRO_FORMAT_ARGB32, Int32(image.width), Int32(image.height),
                    Int32(image.stride))
            else { return }
            cairo_save(cr)
            if !repeating {
                cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height)
                cairo_clip(cr)
            }
            cairo_translate(cr, rect.x, rect.y)
            cairo_scale(cr, rect.width / Double(image.width), rect.height / Double(image.height))
            cairo_set_source_surface(cr, surface, 0, 0)
            cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
            cairo_pattern_set_extend(cairo_get_source(cr), repeating ? CAIRO_EXTEND_REPEAT : CAIRO_EXTEND_PAD)
            if opacity < 1 { cairo_paint_with_alpha(cr, max(0, opacity)) } else { cairo_paint(cr) }
            cairo_restore(cr)  // drops the pattern's reference to the surface
            cairo_surface_finish(surface)
            cairo_surface_destroy(surface)
        }
    }
}

extension PNGWriter {
    /// A cairo RGB24 surface as packed pixels: RGB, or grey as the PNG writer makes it.
    static func bitmap(surface: OpaquePointer, gray: Bool, dither16: Bool) -> Bitmap {
        cairo_surface_flush(surface)
        return bitmap(
            xrgb: UnsafePointer(cairo_image_surface_get_data(surface)!), width: Int(cairo_image_surface_get_width(surface)),
            height: Int(cairo_image_surface_get_height(surface)), stride: Int(cairo_image_surface_get_stride(surface)), gray: gray,
            dither16: dither16)
    }
}

extension Painter {
    /// A painter for a book's pages: images read from its archive under its limits.
    public convenience init(book container: EPUBContainer) {
        self.init(resources: { try? container.read(path: $0) }, limits: container.archive.limits)
    }
}
