import Quire
import QuireCore

/// What `quire view` was asked for.
public struct ViewerOptions: Sendable {
    /// nil: detect (probe, libchafa's term database, tmux).
    public var graphics: GraphicsMode?
    /// `--cell WxH`: the cell's pixel size when neither the kernel nor the terminal says.
    public var cell: (width: Int, height: Int)?
    /// `--cols C --rows R` for `--once`.
    public var columns: Int?
    public var rows: Int?
    public var language: String?
    public var dark = false

    public init() {}
}

/// A page source handed to the frame cache's queue. Sources are safe to call from several
/// threads (a live book's layout is behind locks; a render directory is files).
struct UncheckedSource: @unchecked Sendable {
    let source: PageSource
}

/// The reader: one page fitted above a status line, keys to move, a TOC picker, search, info.
/// The frame is built as one string and written at once, so a page turn never shows half a page.
public final class Viewer {
    let source: PageSource
    let strings: UIStrings
    var options: ViewerOptions
    public private(set) var page = 1
    var message: String?
    var dark: Bool
    var lastQuery: String?
    /// The query whose matches are marked on the page (Esc clears it).
    var highlight: String?
    /// Each live resize re-paginates; the caller supplies how (nil for a rendered directory).
    public var repaginate: ((_ size: TerminalSize) throws -> Void)?
    /// Where the reader is, as text: the start of the page turned to, or the spot a resize kept
    /// on screen. A re-pagination lands on the page holding it, and it stays the same through
    /// any number of resizes (a page start would creep back with each).
    public var anchor: Locator?
    /// Saving progress (nil: not saved).
    public var progress: ProgressSession?
    /// Pages made ahead, and the pagination they belong to (a re-pagination moves every page).
    let frames = FrameCache()
    var generation = 0
    let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    var tick = 0
    /// Keys read but not yet handled: a paste or a fast typist sends several in one read, and a
    /// prompt opened by the first must see the rest.
    var queued: [Key] = []

    public init(source: PageSource, options: ViewerOptions, startPage: Int = 1) {
        self.source = source
        self.options = options
        strings = UIStrings(language: options.language)
        dark = options.dark
        page = max(1, startPage)
    }

    // MARK: One frame

    /// The status line: title, chapter, PAGE/TOTAL and percentage, fitted to `columns` cells.
    public func statusLine(columns: Int) -> String {
        let total = source.pageCount
        let position: String
        if let total {
            let percent = total > 0 ? Int((Double(page) / Double(total) * 100).rounded(.down)) : 0
            position = "\(page)/\(total) \(percent)%"
        } else {
            position = "\(page)/\(spinner[tick % spinner.count])"
        }
        var left = source.title
        if let chapter = source.chapterTitle(ofPage: page), chapter != left { left += " — " + chapter }
        if let error = progress?.lastError { left = strings.text(.progressNotSaved, "\(error)") }
        if let message { left = message }
        let room = max(1, columns - UIStrings.cellWidth(position) - 2)
        let shown = UIStrings.truncated(left, toCells: room)
        let gap = max(1, columns - UIStrings.cellWidth(shown) - UIStrings.cellWidth(position) - 1)
        return " " + shown + String(repeating: " ", count: gap) + position
    }

    /// The page as terminal output for a `columns × rows` area starting at row 1 (1-based),
    /// centred: made ahead by the frame cache when it can be, and the neighbours then made ahead.
    func pageOutput(encoder: PageEncoder, columns: Int, rows: Int, cell: (width: Int, height: Int)) -> String {
        func key(_ page: Int) -> FrameCache.Key {
            FrameCache.Key(page: page, generation: generation, columns: columns, rows: rows, cellWidth: cell.width, cellHeight: cell.height, dark: dark, highlight: highlight)
        }
        let output: String
        if let made = frames.output(key(page)) {
            output = made
        } else {
            do {
                output = try Self.pageOutput(source: source, page: page, dark: dark, highlight: highlight, encoder: encoder, columns: columns, rows: rows, cell: cell)
                frames.store(output, for: key(page))
            } catch {
                let reason = (error as? QuireError).map { "\($0)" } ?? "\(error)"
                return "\u{1B}[\(max(1, rows / 2));3H" + strings.text(.cannotShowPage, "\(page)", reason) + "  (" + strings.text(.retryKey) + ")"
            }
        }
        let shared = UncheckedSource(source: source)
        let (isDark, marked) = (dark, highlight)
        // Only the page ahead: painting a page makes its chapter the reader's current one in the
        // layout window, and the page behind would pull the window back (and drop the chapter
        // preloaded ahead).
        for neighbour in [page + 1] where neighbour <= (source.pageCount ?? Int.max) {
            frames.prefetch(key(neighbour)) {
                try? Self.pageOutput(source: shared.source, page: neighbour, dark: isDark, highlight: marked, encoder: encoder, columns: columns, rows: rows, cell: cell)
            }
        }
        return output
    }

    /// One page rendered and encoded: what `pageOutput` shows, made on any thread.
    static func pageOutput(
        source: PageSource, page: Int, dark: Bool, highlight: String?, encoder: PageEncoder, columns: Int, rows: Int, cell: (width: Int, height: Int)
    ) throws -> String {
        let bitmap = try source.image(ofPage: page, dark: dark, highlight: highlight)
        let fitted = PageEncoder.fit(width: bitmap.width, height: bitmap.height, columns: columns, rows: rows, cell: cell)
        let left = (columns - fitted.columns) / 2 + 1
        let encoded = encoder.encode(bitmap, columns: fitted.columns, rows: fitted.rows, cell: cell)
        if encoder.mode.isPixels { return "\u{1B}[1;\(left)H" + encoded }
        // Symbols: place each row, so no newline handling of the terminal is involved.
        var output = ""
        for (index, line) in encoded.split(separator: "\n", omittingEmptySubsequences: false).prefix(fitted.rows).enumerated() {
            output += "\u{1B}[\(index + 1);\(left)H" + line + "\u{1B}[0m"
        }
        return output
    }

    /// A whole frame: clear what the last one left, the page, the status line.
    public func frame(encoder: PageEncoder, size: TerminalSize, cell: (width: Int, height: Int)) -> String {
        let rows = max(1, size.rows - 1)
        var output = ""
        if encoder.mode == .kitty { output += "\u{1B}_Ga=d,d=A\u{1B}\\" }  // every placement goes
        output += "\u{1B}[0m\u{1B}[2J"
        output += pageOutput(encoder: encoder, columns: size.columns, rows: rows, cell: cell)
        output += "\u{1B}[\(size.rows);1H\u{1B}[0m\u{1B}[7m" + statusLine(columns: size.columns) + "\u{1B}[0m"
        return output
    }

    /// `--once`: the page in symbols and the status line, as plain lines for stdout.
    public func once(encoder: PageEncoder, columns: Int, rows: Int, cell: (width: Int, height: Int)) -> String {
        var output = ""
        do {
            let bitmap = try source.image(ofPage: page, dark: dark, highlight: highlight)
            let fitted = PageEncoder.fit(width: bitmap.width, height: bitmap.height, columns: columns, rows: max(1, rows - 1), cell: cell)
            output = encoder.encode(bitmap, columns: fitted.columns, rows: fitted.rows, cell: cell)
            if !output.hasSuffix("\n") { output += "\n" }
        } catch {
            output = strings.text(.cannotShowPage, "\(page)", "\(error)") + "\n"
        }
        return output + "\u{1B}[0m" + statusLine(columns: columns) + "\n"
    }

    // MARK: Moving

    public func setPage(_ page: Int) { self.page = max(1, page) }

    /// A message for the first frame's status line.
    public func notice(_ text: String?) { if let text { message = text } }

    func go(to target: Int) {
        if let total = source.pageCount, target > total {
            message = strings.text(.lastPage)
            return
        }
        guard target >= 1 else {
            message = strings.text(.firstPage)
            return
        }
        do {
            page = try source.resolve(.page(target))
        } catch {
            message = strings.text(.lastPage)
        }
    }

    func turn(_ delta: Int) {
        if delta < 0 && page == 1 { message = strings.text(.firstPage); return }
        if delta > 0, let total = source.pageCount, page >= total { message = strings.text(.lastPage); return }
        go(to: page + delta)
    }

    /// The next (or previous) TOC entry's page.
    func chapter(forward: Bool) {
        let starts = Array(Set(source.toc().compactMap(\.page))).sorted()
        if forward, let next = starts.first(where: { $0 > page }) { page = next } else if !forward, let previous = starts.last(where: { $0 < page }) {
            page = previous
        } else {
            message = strings.text(forward ? .lastPage : .firstPage)
        }
    }

    /// A `:` command or a number typed before Enter.
    func command(_ text: String) {
        let command = text.trimmingUnicodeWhitespace()
        if command.hasSuffix("%"), let percent = Double(command.dropLast()) {
            do { page = try source.resolve(.totalProgression(min(max(percent / 100, 0), 1))) } catch { message = "\(error)" }
        } else if command.hasPrefix("p ") {
            let label = String(command.dropFirst(2)).trimmingUnicodeWhitespace()
            do { page = try source.resolve(.label(label)) } catch { message = strings.text(.notFound, label) }
        } else if let number = Int(command) {
            go(to: number)
        } else if !command.isEmpty {
            message = strings.text(.notFound, command)
        }
    }

    /// Goes to the next page after this one (or before it) holding `query`, marks the matches and
    /// shows the first in context; false when there is none. `includingThisPage` starts the search
    /// at this page's start.
    public func find(_ query: String, forward: Bool, includingThisPage: Bool = false) throws -> Bool {
        lastQuery = query
        guard let hit = try source.search(query, from: includingThisPage ? page - 1 : page, forward: forward) else {
            message = strings.text(.notFound, query)
            return false
        }
        page = hit.page
        highlight = query
        message = "“" + hit.context + "”"
        return true
    }

    /// `find` for a key: a failure shows on the status line.
    func search(_ query: String, forward: Bool) {
        do { _ = try find(query, forward: forward) } catch { message = "\(error)" }
    }

    // MARK: The interactive loop

    public enum Key: Equatable {
        case character(Character), enter, escape, backspace, left, right, up, down, pageUp, pageDown, home, end
    }

    /// The keys in what the terminal sent; answers to the probe that come late are dropped.
    public static func keys(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        let text = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        while index < text.count {
            let scalar = text[index]
            if scalar == "\u{1B}" {
                if index + 2 < text.count, text[index + 1] == "[" || text[index + 1] == "O" {
                    var end = index + 2
                    while end < text.count, !(0x40...0x7E).contains(text[end].value) { end += 1 }
                    let body = String(String.UnicodeScalarView(text[(index + 2)...min(end, text.count - 1)]))
                    switch body {
                    case "C": keys.append(.right)
                    case "D": keys.append(.left)
                    case "A": keys.append(.up)
                    case "B": keys.append(.down)
                    case "5~": keys.append(.pageUp)
                    case "6~": keys.append(.pageDown)
                    case "H", "1~": keys.append(.home)
                    case "F", "4~": keys.append(.end)
                    default: break
                    }
                    index = end + 1
                    continue
                }
                // A terminal's late answer to the start-up probe (a slow terminal can miss its
                // timeout): kitty's graphics reply is an APC, others send DCS or OSC strings.
                // They run to ST (ESC \\) or BEL and are never keys.
                if index + 1 < text.count, ["_", "P", "]", "^"].contains(text[index + 1]) {
                    var end = index + 2
                    while end < text.count, text[end] != "\u{07}", !(text[end] == "\u{1B}" && end + 1 < text.count && text[end + 1] == "\\") { end += 1 }
                    index = end < text.count && text[end] == "\u{1B}" ? end + 2 : end + 1
                    continue
                }
                keys.append(.escape)
            } else if scalar == "\r" || scalar == "\n" {
                keys.append(.enter)
            } else if scalar.value == 127 || scalar.value == 8 {
                keys.append(.backspace)
            } else if scalar.value == 3 {
                keys.append(.character("q"))  // Ctrl-C quits, restoring the terminal
            } else {
                keys.append(.character(Character(scalar)))
            }
            index += 1
        }
        return keys
    }

    /// The next key, waiting up to `timeout` milliseconds (nil on timeout).
    func nextKey(_ terminal: Terminal, timeout: Int32) -> Key? {
        if queued.isEmpty { queued = Self.keys(terminal.read(timeout: timeout)) }
        return queued.isEmpty ? nil : queued.removeFirst()
    }

    /// Reads a line in the status row (for `:` and `/`); nil when Escape cancels it.
    func readLine(_ terminal: Terminal, prompt: String, size: TerminalSize, initial: String = "") -> String? {
        var line = initial
        while true {
            terminal.write("\u{1B}[\(size.rows);1H\u{1B}[0m\u{1B}[2K" + prompt + line + "\u{1B}[?25h")
            if let key = nextKey(terminal, timeout: 1000) {
                switch key {
                case .enter:
                    terminal.write("\u{1B}[?25l")
                    return line
                case .escape:
                    terminal.write("\u{1B}[?25l")
                    return nil
                case .backspace: if !line.isEmpty { line.removeLast() }
                case .character(let character): line.append(character)
                default: break
                }
            }
        }
    }

    /// A full-screen list (help, info, TOC); returns the key that closed it.
    func showLines(_ terminal: Terminal, _ lines: [String], size: TerminalSize, highlight: Int? = nil, top: Int = 0) {
        var output = "\u{1B}[0m\u{1B}[2J"
        if options.graphics == .kitty { output = "\u{1B}_Ga=d,d=A\u{1B}\\" + output }
        for (row, line) in lines.dropFirst(top).prefix(size.rows - 1).enumerated() {
            let shown = UIStrings.truncated(line, toCells: size.columns - 2)
            output += "\u{1B}[\(row + 1);2H" + (row + top == highlight ? "\u{1B}[7m" + shown + "\u{1B}[0m" : shown)
        }
        output += "\u{1B}[\(size.rows);1H\u{1B}[7m" + UIStrings.truncated(" " + strings.text(.pressAnyKey), toCells: size.columns) + "\u{1B}[0m"
        terminal.write(output)
    }

    /// The TOC picker: the current chapter highlighted, ↑/↓ (or k/j) move, Enter jumps.
    func pickTOC(_ terminal: Terminal, size: TerminalSize) {
        let lines = source.toc()
        guard !lines.isEmpty else {
            message = strings.text(.noTOC)
            return
        }
        var selected = lines.lastIndex { ($0.page ?? Int.max) <= page } ?? 0
        while true {
            let top = max(0, selected - (size.rows - 2))
            showLines(terminal, lines.map { String(repeating: "  ", count: $0.level) + $0.title + ($0.page.map { "  \($0)" } ?? "") }, size: size, highlight: selected, top: top)
            if let key = nextKey(terminal, timeout: 1000) {
                switch key {
                case .down, .character("j"): selected = min(lines.count - 1, selected + 1)
                case .up, .character("k"): selected = max(0, selected - 1)
                case .enter:
                    if let target = lines[selected].page { page = target }
                    return
                case .escape, .character("q"), .character("t"): return
                default: break
                }
            }
        }
    }

    /// Runs until `q`. The terminal is entered by the caller and restored by it.
    public func run(_ terminal: Terminal, encoder: PageEncoder, cell initialCell: (width: Int, height: Int)) throws {
        var size = Terminal.size() ?? TerminalSize(columns: 80, rows: 24)
        var cell = initialCell
        var pendingNumber = ""
        var needsDraw = true
        var lastTotal = source.pageCount
        while true {
            if terminal.takeResize(), let now = Terminal.size() {
                size = now
                if now.pixelWidth > 0, now.pixelHeight > 0 { cell = (now.pixelWidth / now.columns, now.pixelHeight / now.rows) }
                if let repaginate { relayout { try repaginate(size) } }
                needsDraw = true
            }
            if source.pageCount != lastTotal {
                lastTotal = source.pageCount
                needsDraw = true
            }
            if needsDraw {
                terminal.write(frame(encoder: encoder, size: size, cell: cell))
                message = nil
                needsDraw = false
            }
            guard let key = nextKey(terminal, timeout: 120) else {
                if source.pageCount == nil {
                    tick += 1
                    terminal.write("\u{1B}[\(size.rows);1H\u{1B}[7m" + statusLine(columns: size.columns) + "\u{1B}[0m")
                }
                continue
            }
            needsDraw = true
            let before = page
            defer { if page != before { moved() } }
            switch key {
            case .character(let digit) where digit.isASCII && digit.isNumber:
                pendingNumber.append(digit)
                message = strings.text(.goTo) + " " + pendingNumber
            case .enter where !pendingNumber.isEmpty:
                command(pendingNumber)
                pendingNumber = ""
            case .character(" "), .right, .character("l"), .character("j"), .pageDown, .down, .enter: turn(1)
            case .left, .character("h"), .character("k"), .pageUp, .up, .backspace: turn(-1)
            case .character("g"), .home: page = 1
            case .character("G"), .end:
                message = source.pageCount == nil ? strings.text(.settling) : nil
                terminal.write("\u{1B}[\(size.rows);1H\u{1B}[7m" + statusLine(columns: size.columns) + "\u{1B}[0m")
                if let last = try? source.resolve(.lastPage) { page = last }
                message = nil
            case .character("]"): chapter(forward: true)
            case .character("["): chapter(forward: false)
            case .character(":"):
                if let line = readLine(terminal, prompt: ":", size: size) { command(line) }
            case .character("/"):
                if let query = readLine(terminal, prompt: "/", size: size), !query.isEmpty {
                    terminal.write("\u{1B}[\(size.rows);1H\u{1B}[7m" + UIStrings.truncated(" " + strings.text(.searching), toCells: size.columns) + "\u{1B}[0m")
                    search(query, forward: true)
                }
            case .character("n"): if let query = lastQuery { search(query, forward: true) }
            case .character("N"): if let query = lastQuery { search(query, forward: false) }
            case .character("t"): pickTOC(terminal, size: size)
            case .character("i"):
                showLines(terminal, infoLines(), size: size)
                _ = waitForKey(terminal)
            case .character("?"):
                showLines(terminal, [strings.text(.helpTitle), ""] + strings.text(.help).split(separator: " · ", omittingEmptySubsequences: false).map(String.init), size: size)
                _ = waitForKey(terminal)
            case .character("d"):
                dark.toggle()
                message = strings.text(dark ? .darkOn : .darkOff)
            case .character("r"): frames.removeAll()  // the redraw retries a page that failed
            case .character("q"): return
            case .escape:
                pendingNumber = ""
                highlight = nil
            default: message = strings.text(.unknownKey)
            }
        }
    }

    /// After a move: the new anchor, and progress saved when the recorder says so.
    func moved() {
        guard let locator = try? source.anchor(ofPage: page) else { return }
        anchor = locator
        guard let progress, let later = try? source.locatorLater(ofPage: page) else { return }
        progress.moved(to: page, pageCount: source.pageCount, isLastPage: source.isLastPage(page), locator: later)
    }

    /// Lays the book out again and lands on the page holding the anchor.
    public func relayout(_ repaginate: () throws -> Void) {
        do {
            try repaginate()
            generation += 1
            if let anchor { page = try source.resolve(.locator(anchor)) } else { page = 1 }
            progress?.repaginated(source: source)
        } catch {
            message = "\(error)"
        }
    }

    /// The `i` screen: the reading position first, then the page's own positions.
    func infoLines() -> [String] {
        var lines: [String] = []
        if let anchor {
            lines.append("position: \(anchor.href)" + (anchor.locations.offset.map { " @ \($0)" } ?? ""))
        }
        return lines + source.info(ofPage: page)
    }

    /// A book that cannot be opened: one screen with the typed reason, until `q`.
    public static func showFailure(_ error: QuireError, terminal: Terminal, strings: UIStrings) {
        let kind: UIString
        switch error {
        case .drmProtected, .passwordRequired: kind = .failureDRM
        case .unsupported, .limitExceeded: kind = .failureUnsupported
        case .notFound, .cannotOpen, .missingResource: kind = .failureMissing
        default: kind = .failureCorrupt
        }
        var queued: [Key] = []
        while true {
            let size = Terminal.size() ?? TerminalSize(columns: 80, rows: 24)
            let top = max(1, size.rows / 2 - 2)
            var output = "\u{1B}[0m\u{1B}[2J"
            output += "\u{1B}[\(top);3H\u{1B}[1m" + UIStrings.truncated(strings.text(kind), toCells: size.columns - 4) + "\u{1B}[0m"
            for (index, line) in wrapped("\(error)", toCells: size.columns - 4).prefix(max(1, size.rows - top - 3)).enumerated() {
                output += "\u{1B}[\(top + 2 + index);3H" + line
            }
            output += "\u{1B}[\(size.rows);1H\u{1B}[7m" + UIStrings.truncated(" " + strings.text(.quitKey), toCells: size.columns) + "\u{1B}[0m"
            terminal.write(output)
            if queued.isEmpty { queued = keys(terminal.read(timeout: 1000)) }
            while !queued.isEmpty {
                if [.character("q"), .escape, .enter].contains(queued.removeFirst()) { return }
            }
        }
    }

    /// Text cut into lines of at most `cells` terminal cells, at spaces where it can be.
    static func wrapped(_ text: String, toCells cells: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if UIStrings.cellWidth(candidate) <= cells || line.isEmpty {
                line = candidate
            } else {
                lines.append(line)
                line = String(word)
            }
            while UIStrings.cellWidth(line) > cells {
                var head = ""
                for character in line {
                    if UIStrings.cellWidth(head + String(character)) > cells { break }
                    head.append(character)
                }
                lines.append(head)
                line = String(line.dropFirst(head.count))
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    func waitForKey(_ terminal: Terminal) -> Key {
        while true {
            if let key = nextKey(terminal, timeout: 1000) { return key }
        }
    }
}
