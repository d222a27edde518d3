import Quire
import QuireCore
import QuireViewer

/// `quire view DIR|BOOK`: argument parsing and wiring; the viewer is QuireViewer.
enum ViewCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(
            arguments, valued: ["graphics", "cell", "cols", "rows", "page", "lang", "profile", "size", "locator", "cfi", "record-after", "search", "book", "writing-mode"],
            boolean: ["once", "dark", "resume", "no-resume"])
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
        var threshold = 3
        if let value = options.value("record-after") {
            guard let number = Int(value), number >= 0 else { throw QuireError.usage("--record-after needs a page count (0 records at once), not '\(value)'") }
            threshold = number
        }
        guard !(options.flag("resume") && options.flag("no-resume")) else { throw QuireError.usage("--resume and --no-resume contradict each other") }
        let once = options.flag("once")
        guard once || Terminal.isInteractive else {
            throw QuireError.usage("quire view needs a terminal (or --once to print one page to stdout)")
        }
        let source: PageSource
        var sizeForLive: TerminalSize?
        if FileSystem.isDirectory(input) {
            // A render's pages are set already: how they were set is the render's choice.
            guard options.value("writing-mode") == nil else { throw QuireError.usage("--writing-mode is for a book viewed live (render with it instead)") }
            source = try RenderedPages(directory: input, book: try options.value("book").map { try Book.open($0) })
        } else {
            guard options.value("book") == nil else { throw QuireError.usage("--book names the book of a render directory; open a book itself without it") }
            let terminalSize = once
                ? TerminalSize(columns: viewer.columns ?? 80, rows: viewer.rows ?? 24) : (Terminal.size() ?? TerminalSize(columns: 80, rows: 24))
            sizeForLive = terminalSize
            do {
                let book = try Book.open(input)
                source = try LivePages(book: book, settings: liveSettings(options, size: terminalSize, cell: viewer.cell ?? (8, 16)))
            } catch let error as QuireError where !once && error.exitCode != 64 {
                // A book that cannot be opened is shown on one screen, then reported as usual.
                let terminal = Terminal()
                try terminal.enter()
                Viewer.showFailure(error, terminal: terminal, strings: UIStrings(language: viewer.language))
                terminal.leave()
                throw error
            }
        }
        var startPage = 1
        var explicitStart = false
        if let page = try options.integer("page") { (startPage, explicitStart) = (page, true) }
        if let json = options.value("locator") { (startPage, explicitStart) = (try source.resolve(.locator(Locator(jsonString: json))), true) }
        if let cfi = options.value("cfi") { (startPage, explicitStart) = (try source.resolve(.cfi(cfi)), true) }
        if startPage != 1 { startPage = try source.resolve(.page(startPage)) }
        let reader = Viewer(source: source, options: viewer, startPage: startPage)
        if let query = options.value("search") {
            // The first match at or after the start page: a start of its own, so it overrides resume.
            guard try reader.find(query, forward: true, includingThisPage: true) else { throw QuireError.unresolvable("no match for '\(query)' from page \(startPage) on") }
            explicitStart = true
        }
        if once {
            let mode = viewer.graphics ?? .symbols
            guard !mode.isPixels || viewer.cell != nil else { throw QuireError.usage("--once with \(mode.rawValue) needs --cell WxH") }
            writeStdout(reader.once(encoder: PageEncoder(mode: mode), columns: viewer.columns ?? 80, rows: viewer.rows ?? 24, cell: viewer.cell ?? (8, 16)))
            return
        }
        // Progress: resumed unless a start was given or --no-resume; saved by the recording threshold.
        let strings = UIStrings(language: viewer.language)
        var notice: String?
        // Unless a saved Locator was resumed: the start of the page opened at.
        func setAnchor() { if reader.anchor == nil { reader.anchor = try? source.anchor(ofPage: reader.page) } }
        do {
            let store = try ProgressStore.standard()
            let identity = try source.identity()
            let saved = try store.progress(of: identity.sha256)
            if let saved, !explicitStart, !options.flag("no-resume") {
                do {
                    reader.setPage(try source.resolve(.locator(saved.locator)))
                    reader.anchor = saved.locator
                    notice = strings.text(.resumed)
                } catch {
                    notice = strings.text(.notFound, "\(error)")
                }
            }
            setAnchor()
            reader.progress = ProgressSession(
                store: store, identity: identity, path: input, title: source.title, saved: saved, threshold: threshold, settledPage: reader.page,
                settledLocator: reader.anchor)
        } catch {
            // Reading goes on; nothing is written over a progress file that could not be read.
            notice = strings.text(.progressNotSaved, "\(error)")
            setAnchor()
        }
        let terminal = Terminal()
        try terminal.enter()
        defer { terminal.leave() }
        let choice = try GraphicsChoice.detect(terminal, options: viewer)
        if let live = source as? LivePages, sizeForLive != nil, options.value("profile") == nil, options.value("size") == nil {
            let repaginate: (TerminalSize) throws -> Void = { size in try live.repaginate(liveSettings(options, size: size, cell: choice.cell)) }
            reader.repaginate = repaginate
            // The probe may have told a better cell size than the start-up guess.
            if let size = Terminal.size(), try liveSettings(options, size: size, cell: choice.cell).layout.profile != live.pagination.settings.layout.profile {
                reader.relayout { try repaginate(size) }
            }
        }
        reader.notice(notice)
        defer {
            // The terminal first, then the saves still queued (they may wait for the book's count).
            terminal.leave()
            reader.progress?.finish()
        }
        try reader.run(terminal, encoder: choice.encoder, cell: choice.cell)
    }

    /// Live pages fill the terminal's pixels above the status line, or `--profile`/`--size`.
    static func liveSettings(_ options: Arguments, size: TerminalSize, cell: (width: Int, height: Int)) throws -> PaginationSettings {
        var settings = try pageSettings(options, size: size, cell: cell)
        if let value = options.value("writing-mode") {
            guard let mode = WritingModeChoice(rawValue: value) else { throw QuireError.usage("--writing-mode is one of auto, horizontal") }
            settings.layout.writingMode = mode
        }
        return settings
    }

    private static func pageSettings(_ options: Arguments, size: TerminalSize, cell: (width: Int, height: Int)) throws -> PaginationSettings {
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
