import Foundation
import Quire
import QuireCore
import QuireViewer

/// `quire view DIR|BOOK`: argument parsing and wiring; the viewer is QuireViewer.
enum ViewCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(
            arguments, valued: ["graphics", "cell", "cols", "rows", "page", "lang", "profile", "size", "locator", "cfi"],
            boolean: ["once", "dark"])
        guard options.positionals.count == 1 else { throw QuireError.usage("view needs one book or render directory") }
        let input = options.positionals[0]
        var viewer = ViewerOptions()
        if let value = options.value("graphics") {
            guard let mode = GraphicsMode(rawValue: value == "iterm2" ? "iterm" : value) else {
                throw QuireError.usage("--graphics is one of kitty, iterm, sixel, symbols, symbols-256, symbols-16")
            }
            viewer.graphics = mode
        }
        if let value = options.value("cell") {
            let parts = value.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 > 0 && $0 < 200 }) else { throw QuireError.usage("--cell needs WIDTHxHEIGHT in pixels, such as 10x20") }
            viewer.cell = (parts[0], parts[1])
        }
        viewer.columns = try options.integer("cols")
        viewer.rows = try options.integer("rows")
        viewer.language = options.value("lang")
        viewer.dark = options.flag("dark")
        let once = options.flag("once")
        guard once || Terminal.isInteractive else {
            throw QuireError.usage("quire view needs a terminal (or --once to print one page to stdout)")
        }
        var isDirectory: ObjCBool = false
        let source: PageSource
        var sizeForLive: TerminalSize?
        if FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue {
            source = try RenderedPages(directory: input)
        } else {
            let book = try Book.open(input)
            let terminalSize = once
                ? TerminalSize(columns: viewer.columns ?? 80, rows: viewer.rows ?? 24) : (Terminal.size() ?? TerminalSize(columns: 80, rows: 24))
            sizeForLive = terminalSize
            source = try LivePages(book: book, settings: liveSettings(options, size: terminalSize, cell: viewer.cell ?? (8, 16)))
        }
        var startPage = 1
        if let page = try options.integer("page") { startPage = page }
        if let json = options.value("locator") { startPage = try source.resolve(.locator(Locator(jsonString: json))) }
        if let cfi = options.value("cfi") { startPage = try source.resolve(.cfi(cfi)) }
        if startPage != 1 { startPage = try source.resolve(.page(startPage)) }
        let reader = Viewer(source: source, options: viewer, startPage: startPage)
        if once {
            let mode = viewer.graphics ?? .symbols
            guard !mode.isPixels || viewer.cell != nil else { throw QuireError.usage("--once with \(mode.rawValue) needs --cell WxH") }
            writeStdout(reader.once(encoder: PageEncoder(mode: mode), columns: viewer.columns ?? 80, rows: viewer.rows ?? 24, cell: viewer.cell ?? (8, 16)))
            return
        }
        let terminal = Terminal()
        try terminal.enter()
        defer { terminal.leave() }
        let choice = try GraphicsChoice.detect(terminal, options: viewer)
        if let live = source as? LivePages, sizeForLive != nil, options.value("profile") == nil, options.value("size") == nil {
            reader.repaginate = { size, page in
                try live.repaginate(liveSettings(options, size: size, cell: choice.cell), keeping: page)
            }
            // The probe may have told a better cell size than the start-up guess.
            if let size = Terminal.size() { reader.setPage((try? live.repaginate(liveSettings(options, size: size, cell: choice.cell), keeping: reader.page)) ?? reader.page) }
        }
        try reader.run(terminal, encoder: choice.encoder, cell: choice.cell)
    }

    /// Live pages fill the terminal's pixels above the status line, or `--profile`/`--size`.
    static func liveSettings(_ options: Arguments, size: TerminalSize, cell: (width: Int, height: Int)) throws -> PaginationSettings {
        if let name = options.value("profile") { return try PaginationSettings(profile: name) }
        var width = size.pixelWidth > 0 ? size.pixelWidth : size.columns * cell.width
        var height = size.pixelHeight > 0 ? size.pixelHeight * (size.rows - 1) / size.rows : (size.rows - 1) * cell.height
        if let value = options.value("size") {
            let parts = value.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 >= 100 && $0 <= 10_000 }) else { throw QuireError.usage("--size needs WIDTHxHEIGHT in pixels") }
            (width, height) = (parts[0], parts[1])
        }
        let profile = PageProfile(name: "terminal", width: max(200, width), height: max(200, height), dpi: 96)
        return PaginationSettings(layout: LayoutSettings(profile: profile), profileName: nil)
    }
}
