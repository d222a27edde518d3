import CChafa
import Quire
import QuireCore

/// Turns a page bitmap into terminal output through libchafa: its kitty, iTerm2 and sixel
/// encoders, or its Unicode symbols in truecolor, 256 or 16 colours. The term info libchafa's
/// database gives for the environment (TERM, TERM_PROGRAM, KITTY_WINDOW_ID…) supplies the escape
/// sequences; under tmux the pixel modes' output is wrapped for passthrough.
/// Safe on several threads: the term info is only read after `init`, and every encode makes
/// its own canvas.
public final class PageEncoder: @unchecked Sendable {
    public let mode: GraphicsMode
    let termInfo: OpaquePointer
    let passthrough: Bool

    /// `termType` names the terminal to the database when it is not the environment's (tmux's
    /// outer terminal); nil uses the environment.
    public init(mode: GraphicsMode, termType: String? = nil, passthrough: Bool = false) {
        self.mode = mode
        self.passthrough = passthrough
        var environment = SystemEnvironment.all
        if let termType {
            environment["TERM"] = termType
            environment["TMUX"] = nil
        }
        let strings = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for string in strings { free(string) } }
        var pointers = strings
        let detected = pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafeMutablePointer<gchar>?.self, capacity: buffer.count) {
                chafa_term_db_detect(chafa_term_db_get_default(), $0)
            }
        }
        let fallback = chafa_term_db_get_fallback_info(chafa_term_db_get_default())
        suggestedMode = Self.suggestedMode(detected ?? fallback!)
        if let detected, let fallback {
            // The database knows a terminal by name, not by what the probe found: xterm's entry
            // has no sixel sequences even when `-ti vt340` answers with attribute 4. Missing
            // sequences come from libchafa's fallback set, so a mode the probe (or --graphics)
            // chose prints something.
            chafa_term_info_supplement(detected, fallback)
            chafa_term_info_unref(fallback)
            termInfo = detected
        } else {
            termInfo = detected ?? fallback!
        }
    }

    deinit { chafa_term_info_unref(termInfo) }

    /// The mode libchafa's database would pick for this terminal by itself (from its own entry,
    /// before the fallback sequences are added).
    public let suggestedMode: GraphicsMode

    static func suggestedMode(_ info: OpaquePointer) -> GraphicsMode {
        if chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_KITTY_IMMEDIATE_IMAGE_V1) != 0 { return .kitty }
        if chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_ITERM2_IMAGE) != 0 { return .iterm }
        if chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_SIXELS) != 0 { return .sixel }
        if chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_DIRECT) != 0 { return .symbols }
        if chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_256) != 0 { return .symbols256 }
        return .symbols16
    }

    /// The cells a page takes when fitted into `columns × rows` cells of `cell` pixels, keeping
    /// its aspect.
    public static func fit(width: Int, height: Int, columns: Int, rows: Int, cell: (width: Int, height: Int)) -> (columns: Int, rows: Int) {
        let scale = min(Double(columns * cell.width) / Double(max(width, 1)), Double(rows * cell.height) / Double(max(height, 1)))
        let fittedColumns = max(1, min(columns, Int((Double(width) * scale / Double(cell.width)).rounded())))
        let fittedRows = max(1, min(rows, Int((Double(height) * scale / Double(cell.height)).rounded())))
        return (fittedColumns, fittedRows)
    }

    /// The page as terminal output for a `columns × rows` cell area (the caller places the cursor).
    public func encode(_ bitmap: Bitmap, columns: Int, rows: Int, cell: (width: Int, height: Int)) -> String {
        guard let config = chafa_canvas_config_new() else { return "" }
        defer { chafa_canvas_config_unref(config) }
        chafa_canvas_config_set_geometry(config, gint(columns), gint(rows))
        chafa_canvas_config_set_cell_geometry(config, gint(cell.width), gint(cell.height))
        switch mode {
        case .kitty: chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_KITTY)
        case .iterm: chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_ITERM2)
        case .sixel: chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_SIXELS)
        case .symbols, .symbols256, .symbols16:
            chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_SYMBOLS)
            chafa_canvas_config_set_canvas_mode(
                config, mode == .symbols ? CHAFA_CANVAS_MODE_TRUECOLOR : mode == .symbols256 ? CHAFA_CANVAS_MODE_INDEXED_256 : CHAFA_CANVAS_MODE_INDEXED_16)
            // Block and border symbols read best for text pages; no threads, so output is the same every run.
            if let symbols = chafa_symbol_map_new() {
                chafa_symbol_map_add_by_tags(symbols, ChafaSymbolTags(rawValue: CHAFA_SYMBOL_TAG_BLOCK.rawValue | CHAFA_SYMBOL_TAG_SPACE.rawValue))
                chafa_canvas_config_set_symbol_map(config, symbols)
                chafa_symbol_map_unref(symbols)
            }
        }
        guard let canvas = chafa_canvas_new(config) else { return "" }
        defer { chafa_canvas_unref(canvas) }
        if bitmap.channels == 3 {
            // Painted pages are packed RGB: libchafa reads them as they are.
            bitmap.bytes.withUnsafeBufferPointer {
                chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGB8, $0.baseAddress, gint(bitmap.width), gint(bitmap.height), gint(bitmap.stride))
            }
        } else {
            Self.rgba(bitmap).withUnsafeBufferPointer {
                chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, $0.baseAddress, gint(bitmap.width), gint(bitmap.height), gint(bitmap.width * 4))
            }
        }
        guard let printed = chafa_canvas_print(canvas, termInfo) else { return "" }
        let output = String(cString: printed.pointee.str)
        g_string_free(printed, 1)
        return passthrough && mode.isPixels ? Tmux.wrap(output) : output
    }

    /// Any page bitmap (grey, RGB, RGBA) as RGBA8.
    static func rgba(_ bitmap: Bitmap) -> [UInt8] {
        var result = [UInt8](repeating: 255, count: bitmap.width * bitmap.height * 4)
        for y in 0..<bitmap.height {
            let row = y * bitmap.stride
            for x in 0..<bitmap.width {
                let source = row + x * bitmap.channels
                let target = (y * bitmap.width + x) * 4
                switch bitmap.channels {
                case 1:
                    result[target] = bitmap.bytes[source]
                    result[target + 1] = bitmap.bytes[source]
                    result[target + 2] = bitmap.bytes[source]
                case 2:
                    result[target] = bitmap.bytes[source]
                    result[target + 1] = bitmap.bytes[source]
                    result[target + 2] = bitmap.bytes[source]
                    result[target + 3] = bitmap.bytes[source + 1]
                default:
                    result[target] = bitmap.bytes[source]
                    result[target + 1] = bitmap.bytes[source + 1]
                    result[target + 2] = bitmap.bytes[source + 2]
                    if bitmap.channels >= 4 { result[target + 3] = bitmap.bytes[source + 3] }
                }
            }
        }
        return result
    }
}
