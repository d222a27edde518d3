import Foundation
import Quire
import QuirePositions
import QuireViewer
import XCTest

/// `quire view`, driven the way a person does: in a real tmux (send-keys, capture-pane), and
/// non-interactively with `--once`.
final class ViewerTests: XCTestCase {
    // MARK: Without a terminal

    func testEveryStringInEveryLanguageFitsTheStatusLine() {
        for language in UIStrings.languages {
            let strings = UIStrings(language: language)
            XCTAssertEqual(strings.language, language)
            for key in UIString.allCases {
                XCTAssertNotNil(UIStrings.rawText(language, key), "\(key) in \(language)")
                guard key != .help else { continue }  // shown as its own screen, one key per line
                let text = strings.text(key, "12", "reason")
                // 80 columns, less " 1234/5678 100%" on the right.
                XCTAssertLessThanOrEqual(UIStrings.cellWidth(text), 80 - 16, "\(key) in \(language): \(text)")
            }
        }
        XCTAssertEqual(UIStrings(language: nil, environment: ["LANG": "zh_TW.UTF-8"]).language, "zh-Hant")
        XCTAssertEqual(UIStrings(language: nil, environment: ["LC_ALL": "ja_JP.UTF-8", "LANG": "en_US.UTF-8"]).language, "ja")
        XCTAssertEqual(UIStrings.cellWidth("已是第一页"), 10)
    }

    func testProbeAnswersAreRead() {
        let answer = "\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?62;4;22c\u{1B}[6;20;10t\u{1B}[4;480;800t\u{1B}[0n"
        let probe = TerminalProbe.parse(answer)
        XCTAssertTrue(probe.kittyGraphics)
        XCTAssertTrue(probe.sixel)
        XCTAssertEqual(probe.cellPixels?.width, 10)
        XCTAssertEqual(probe.cellPixels?.height, 20)
        XCTAssertEqual(probe.windowPixels?.width, 800)
        XCTAssertTrue(probe.answered)
        let silent = TerminalProbe.parse("\u{1B}[?1;2c\u{1B}[0n")
        XCTAssertFalse(silent.sixel)
        XCTAssertFalse(silent.kittyGraphics)
        XCTAssertNil(silent.cellPixels)
        // Answers that come after the probe's timeout (kitty under a software renderer is that
        // slow) are not keys: before this, kitty's "\e_Gi=31;OK\e\\" turned into G (last page) and i.
        XCTAssertEqual(Viewer.keys(Array("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?62;4c\u{1B}[4;800;1200t\u{1B}P1$r0m\u{1B}\\\u{1B}[0n j\u{1B}[6~".utf8)), [.character(" "), .character("j"), .pageDown])
        XCTAssertEqual(Tmux.wrap("\u{1B}_Ga=d\u{1B}\\"), "\u{1B}Ptmux;\u{1B}\u{1B}_Ga=d\u{1B}\u{1B}\\\u{1B}\\")
    }

    func rendered(_ book: URL, pages: String = "1-40") throws -> URL {
        let directory = try TestSupport.temporaryDirectory()
        let out = directory.appendingPathComponent("render")
        let result = try TestSupport.quire("render", book.path, "--out", out.path, "--profile", "phone", "--pages", pages, "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        return out
    }

    /// `--writing-mode horizontal` sets a book viewed live in lines (the sample's vertical chapter
    /// looks otherwise); a render's pages are set already, so there it is a usage error.
    func testWritingModeForALiveBook() throws {
        let book = try SampleBooksTests.scriptsBook().path
        let size = ["--once", "--graphics", "symbols", "--cols", "80", "--rows", "40", "--search", "航路"]
        let columns = try TestSupport.quire(["view", book] + size)
        let lines = try TestSupport.quire(["view", book, "--writing-mode", "horizontal"] + size)
        XCTAssertEqual(columns.status, 0, columns.stderr)
        XCTAssertEqual(lines.status, 0, lines.stderr)
        XCTAssertNotEqual(columns.stdout, lines.stdout)
        let explicit = try TestSupport.quire(["view", book, "--writing-mode", "auto"] + size)
        XCTAssertEqual(explicit.stdout, columns.stdout, "auto is the default")
        let wrong = try TestSupport.quire(["view", book, "--writing-mode", "sideways"] + size)
        XCTAssertEqual(wrong.status, 64)
        let out = try rendered(LayoutTests.sampleBook(), pages: "1")
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let rendered = try TestSupport.quire("view", out.path, "--once", "--writing-mode", "horizontal")
        XCTAssertEqual(rendered.status, 64)
        XCTAssertTrue(rendered.stderr.contains("--writing-mode"), rendered.stderr)
    }

    func testOnceIsDeterministicAndShowsTheStatusLine() throws {
        let out = try rendered(LayoutTests.sampleBook(), pages: "1-3")
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let first = try TestSupport.quire("view", out.path, "--page", "2", "--once", "--graphics", "symbols", "--cols", "80", "--rows", "30")
        XCTAssertEqual(first.status, 0, first.stderr)
        let second = try TestSupport.quire("view", out.path, "--page", "2", "--once", "--graphics", "symbols", "--cols", "80", "--rows", "30")
        XCTAssertEqual(first.stdout, second.stdout, "the same page at the same size prints the same bytes")
        let lines = first.stdoutText.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 10)
        XCTAssertTrue(lines.last?.contains("2/") ?? false, String(lines.last ?? ""))
        // A page the render left out is a typed message, not a crash.
        let missing = try TestSupport.quire("view", out.path, "--page", "5", "--once", "--graphics", "symbols")
        XCTAssertEqual(missing.status, 0, missing.stderr)
        XCTAssertTrue(missing.stdoutText.contains("cannot be shown"), missing.stdoutText)
        // Without a terminal and without --once: one usage error.
        let noTerminal = try TestSupport.quire("view", out.path)
        XCTAssertEqual(noTerminal.status, 64)
        XCTAssertTrue(noTerminal.stderr.contains("needs a terminal"), noTerminal.stderr)
        // A directory that is no render.
        let empty = try TestSupport.quire("view", out.appendingPathComponent("pages").path, "--once")
        XCTAssertEqual(empty.status, 66, empty.stderr)
    }

    /// `--search` lands on the first match in a live book and in a rendered one (whose text comes
    /// from `--book`): the same page at the same profile, the match quoted on the status line,
    /// and in live mode the match marked (the page's output differs from the unmarked page).
    func testSearchInLiveAndRenderedBooks() throws {
        let book = try TestSupport.corpusFile("standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub")
        let out = try rendered(book)
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let size = ["--once", "--graphics", "symbols", "--cols", "80", "--rows", "40"]
        let live = try TestSupport.run(TestSupport.quireBinary, ["view", book.path, "--profile", "phone", "--search", "marmalade"] + size)
        XCTAssertEqual(live.status, 0, live.stderr)
        let status = try XCTUnwrap(live.stdoutText.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(status.contains("Orange Marmalade"), status)
        let page = try XCTUnwrap(status.split(separator: " ").last { $0.contains("/") }.flatMap { Int($0.split(separator: "/")[0]) }, status)
        XCTAssertGreaterThan(page, 1)
        let fromMap = try TestSupport.run(TestSupport.quireBinary, ["view", out.path, "--book", book.path, "--search", "marmalade"] + size)
        XCTAssertEqual(fromMap.status, 0, fromMap.stderr)
        XCTAssertTrue(fromMap.stdoutText.contains(" \(page)/"), fromMap.stdoutText.suffix(200).description)
        let unmarked = try TestSupport.run(TestSupport.quireBinary, ["view", book.path, "--profile", "phone", "--page", "\(page)"] + size)
        XCTAssertNotEqual(unmarked.stdoutText.split(separator: "\n").dropLast(), live.stdoutText.split(separator: "\n").dropLast(), "the match is marked")
        // Nothing found, no text to search, the wrong book: each one clear error.
        let absent = try TestSupport.run(TestSupport.quireBinary, ["view", book.path, "--search", "zzyzx"] + size)
        XCTAssertEqual(absent.status, 3)
        XCTAssertTrue(absent.stderr.contains("no match for 'zzyzx'"), absent.stderr)
        let noText = try TestSupport.run(TestSupport.quireBinary, ["view", out.path, "--search", "marmalade"] + size)
        XCTAssertEqual(noText.status, 3)
        XCTAssertTrue(noText.stderr.contains("--book"), noText.stderr)
        let wrongBook = try TestSupport.run(TestSupport.quireBinary, ["view", out.path, "--book", LayoutTests.sampleBook().path, "--search", "a"] + size)
        XCTAssertEqual(wrongBook.status, 64)
        XCTAssertTrue(wrongBook.stderr.contains("SHA-256"), wrongBook.stderr)
    }

    /// The live viewer on War and Peace: once the reader is on a chapter, the next one is laid
    /// out in the background (its first page then paints without a layout), and a walk across
    /// eight chapters never holds more than three.
    func testLiveViewerPreloadsTheNextChapterAndHoldsThree() throws {
        let path = try TestSupport.corpusFile("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub").path
        let source = try LivePages(book: Book.open(path), settings: PaginationSettings(profile: "eink-6"))
        let pagination = source.pagination
        let reader = Viewer(source: source, options: ViewerOptions(), startPage: 1)
        let encoder = PageEncoder(mode: .symbols)
        let size = TerminalSize(columns: 80, rows: 40)
        func show(_ page: Int) throws -> Int {
            reader.setPage(page)
            let frame = reader.frame(encoder: encoder, size: size, cell: (8, 16))
            XCTAssertFalse(frame.contains("cannot be shown"), "page \(page)")
            return try pagination.resolve(.page(page)).spineIndex
        }
        var chapter = try show(1)
        for _ in 0..<8 {
            let next = chapter + 1
            let deadline = Date().addingTimeInterval(60)
            while !pagination.isReadyToPaint(chapter: next), Date() < deadline { usleep(20_000) }
            XCTAssertTrue(pagination.isReadyToPaint(chapter: next), "chapter \(next) preloaded while the reader is on \(chapter)")
            XCTAssertLessThanOrEqual(pagination.laidOutChapters.now, 3)
            let first = try pagination.pageNumber(of: PageAddress(spineIndex: next, index: 0))
            XCTAssertEqual(try show(first), next)
            chapter = next
        }
        XCTAssertLessThanOrEqual(pagination.laidOutChapters.peak, 3, "never more than the current chapter and its two neighbours")
    }

    /// `G` in a live book whose pictures have no sizes in the markup waits for the chapter to
    /// settle and lands on the true last page: the page count `quire render --map-only` writes at
    /// the same profile.
    func testLastPageKeyWaitsForSettling() throws {
        let book = try SettlingTests.book(withSizes: false, for: self)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory); try? FileManager.default.removeItem(at: book) }
        let out = directory.appendingPathComponent("map")
        let render = try TestSupport.quire("render", book.path, "--out", out.path, "--profile", "eink-6", "--map-only", "--quiet")
        XCTAssertEqual(render.status, 0, render.stderr)
        let map = try PositionMap(path: out.appendingPathComponent("positions.json").path)
        XCTAssertGreaterThan(map.pageCount, 2)
        let exitFile = directory.appendingPathComponent("exit")
        let session = try TmuxSession(
            command: "env LANG=en_US.UTF-8 \(TestSupport.quireBinary.path) view \(book.path) --profile eink-6 --graphics symbols; echo $? > \(exitFile.path); sleep 30")
        defer { session.kill() }
        _ = try session.wait(for: "1/", seconds: 30)
        try session.send("G")
        let last = try session.wait(for: "\(map.pageCount)/\(map.pageCount)", seconds: 30)
        XCTAssertEqual(Self.status(last), "\(map.pageCount)/\(map.pageCount)", last)
        try session.send("q")
        XCTAssertEqual(TmuxSession.exitStatus(exitFile), "0")
    }

    // MARK: In tmux

    /// A shell line through popen, its stdout and exit status. Foundation's Process is not used
    /// for commands that leave servers behind (tmux, Xvfb, kitty): it never saw such a shell exit.
    @discardableResult
    static func shell(_ line: String) -> (status: Int32, output: String) {
        guard let pipe = popen(line, "r") else { return (-1, "") }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count <= 0 { break }
            output += buffer.prefix(count)
        }
        let status = pclose(pipe)
        return (status == -1 ? -1 : (status >> 8) & 0xFF, String(decoding: output, as: UTF8.self))
    }

    /// A tmux server of the test's own (its own socket), one window of the given size. tmux is run
    /// through popen: its server keeps what descriptors it inherits, and Foundation's Process
    /// never saw the client exit once the server had forked from it.
    final class TmuxSession {
        let socket: String
        let state: String
        let name = "viewer"

        init(command: String, columns: Int = 100, rows: Int = 40) throws {
            socket = "quire-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            // Reading progress goes to a state directory of the session's own, never the user's.
            state = NSTemporaryDirectory() + socket + "-state"
            let result = tmux(["new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)", "XDG_STATE_HOME=\(state) " + command])
            XCTAssertEqual(result.status, 0, "tmux new-session")
        }

        static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

        @discardableResult
        func tmux(_ arguments: [String]) -> (status: Int32, output: String) {
            ViewerTests.shell((["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + arguments).map(Self.quoted).joined(separator: " ") + " </dev/null 2>/dev/null")
        }

        func send(_ keys: String...) throws { try send(keys) }
        func send(_ keys: [String]) throws { tmux(["send-keys", "-t", name] + keys) }

        func screen() throws -> String { tmux(["capture-pane", "-p", "-t", name]).output }

        func flags(_ format: String) -> String {
            tmux(["display-message", "-p", "-t", name, format]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Waits (up to `seconds`) until the screen holds `text`.
        func wait(for text: String, seconds: Double = 20) throws -> String {
            let deadline = Date().addingTimeInterval(seconds)
            var last = ""
            while Date() < deadline {
                last = (try? screen()) ?? ""
                if last.contains(text) { return last }
                usleep(50_000)
            }
            XCTFail("'\(text)' never appeared; the screen was:\n\(last)")
            return last
        }

        /// Waits (up to 20 s) for the file the shell writes the viewer's exit status to; "none" if it never comes.
        static func exitStatus(_ file: URL) -> String {
            // `echo $? > file` creates the file before it writes the status: wait for the line.
            let deadline = Date().addingTimeInterval(20)
            func read() -> String? { (try? String(contentsOf: file, encoding: .utf8)).flatMap { $0.hasSuffix("\n") ? $0 : nil } }
            while read() == nil && Date() < deadline { usleep(50_000) }
            return read()?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "none"
        }

        /// Waits (up to 60 s) until the status line shows a final total (no spinner), and returns the screen.
        func waitForTotal(from screen: String) throws -> String {
            var screen = screen
            let deadline = Date().addingTimeInterval(60)
            while ViewerTests.status(screen).map({ $0.hasSuffix("/") || $0.last?.isNumber == false }) ?? true, Date() < deadline {
                usleep(100_000)
                screen = try self.screen()
            }
            return screen
        }

        func kill() {
            tmux(["kill-server"])
            try? FileManager.default.removeItem(atPath: state)
        }
    }

    /// The `i` screen's reading position ("position: HREF @ OFFSET").
    static func positionLine(_ screen: String) -> String? {
        screen.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("position: ") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The status line's "PAGE/TOTAL".
    static func status(_ screen: String) -> String? {
        screen.split(separator: "\n").last { $0.contains("/") && $0.contains("%") }.flatMap { line in
            line.split(separator: " ").first { $0.contains("/") && $0.first?.isNumber == true }.map(String.init)
        }
    }

    func checkNavigation(_ session: TmuxSession, total: Int) throws {
        _ = try session.wait(for: "1/\(total)")
        try session.send("Space")
        _ = try session.wait(for: "2/\(total)")
        try session.send("G")
        _ = try session.wait(for: "\(total)/\(total)")
        try session.send(":", "12", "Enter")
        _ = try session.wait(for: "12/\(total)")
        try session.send("g")
        _ = try session.wait(for: "1/\(total)")
        try session.send("Left")
        _ = try session.wait(for: "first page")
    }

    func testRenderedBookInTmux() throws {
        let book = try TestSupport.corpusFile("standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub")
        let out = try rendered(book)
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
        let total = try XCTUnwrap(map["pageCount"] as? Int)
        let exitFile = out.deletingLastPathComponent().appendingPathComponent("exit")
        let session = try TmuxSession(
            command: "env LANG=en_US.UTF-8 \(TestSupport.quireBinary.path) view \(out.path) --graphics symbols; echo $? > \(exitFile.path); sleep 30")
        defer { session.kill() }
        try checkNavigation(session, total: total)
        // The TOC picker lists the book's entries; Enter jumps.
        try session.send("t")
        let toc = try session.wait(for: "Down the Rabbit-Hole")
        XCTAssertTrue(toc.contains("The Pool of Tears"), toc)
        try session.send("Down", "Down", "Enter")
        let after = try session.wait(for: "/\(total)")
        XCTAssertNotEqual(Self.status(after), "1/\(total)", after)
        // A resize redraws: the status line moves to the new last row.
        session.tmux(["resize-window", "-t", session.name, "-x", "80", "-y", "30"])
        let resized = try session.wait(for: "/\(total)")
        XCTAssertEqual(resized.split(separator: "\n", omittingEmptySubsequences: false).prefix(30).last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.contains("/\(total)") }, true, resized)
        // q quits with 0, leaves the alternate screen and shows the cursor again.
        try session.send("q")
        XCTAssertEqual(TmuxSession.exitStatus(exitFile), "0")
        XCTAssertEqual(session.flags("#{alternate_on} #{cursor_flag}"), "0 1", "no alternate screen left, cursor visible")
    }

    func testLiveBookInTmux() throws {
        let book = try TestSupport.corpusFile("standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let exitFile = directory.appendingPathComponent("exit")
        let session = try TmuxSession(
            command: "env LANG=en_US.UTF-8 \(TestSupport.quireBinary.path) view \(book.path) --graphics symbols --cell 8x16; echo $? > \(exitFile.path); sleep 30")
        defer { session.kill() }
        // The total appears once every chapter has settled in the background.
        let screen = try session.waitForTotal(from: session.wait(for: "1/", seconds: 30))
        let total = try XCTUnwrap(Self.status(screen)?.split(separator: "/").last.flatMap { Int($0) }, screen)
        try checkNavigation(session, total: total)
        // Search lands on a page holding the word.
        try session.send("/", "Cheshire", "Enter")
        let found = try session.wait(for: "/\(total)")
        XCTAssertNotEqual(Self.status(found), "1/\(total)", found)
        try session.send("i")
        let info = try session.wait(for: "XPointer")
        XCTAssertTrue(info.contains("CFI: epubcfi("), info)
        let position = try XCTUnwrap(Self.positionLine(info), info)
        let pageBefore = Self.status(try session.screen())
        try session.send("q")
        _ = try session.wait(for: "/\(total)")
        // A resize re-paginates and lands on the page holding the same Locator: the `i` screen
        // shows the same reading position, and the new page starts at or before it.
        session.tmux(["resize-window", "-t", session.name, "-x", "70", "-y", "30"])
        let resized = try session.waitForTotal(from: session.wait(for: "/"))
        XCTAssertNotEqual(Self.status(resized)?.split(separator: "/").last.map(String.init), "\(total)", "70×30 cells is another pagination: \(resized)")
        try session.send("i")
        let infoAfter = try session.wait(for: "XPointer")
        XCTAssertEqual(Self.positionLine(infoAfter), position, "the same Locator after the resize (before: \(pageBefore ?? "?"))")
        let offsetAfter = infoAfter.split(separator: "\n").first { $0.contains("Locator: ") }
        XCTAssertNotNil(offsetAfter, infoAfter)
        try session.send("q")
        _ = try session.wait(for: "/")
        try session.send("q")
        XCTAssertEqual(TmuxSession.exitStatus(exitFile), "0")
    }

    func testTerminalRestoredAfterSIGTERM() throws {
        let out = try rendered(LayoutTests.sampleBook(), pages: "1-3")
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let session = try TmuxSession(command: "\(TestSupport.quireBinary.path) view \(out.path) --graphics symbols; sleep 30")
        defer { session.kill() }
        _ = try session.wait(for: "1/")
        XCTAssertEqual(session.flags("#{alternate_on}"), "1")
        // The viewer itself, not the shell around it (whose command line holds the same words).
        _ = system("pkill -TERM -f " + TmuxSession.quoted("^\(TestSupport.quireBinary.path) view \(out.path)"))
        let deadline = Date().addingTimeInterval(10)
        var flags = ""
        while Date() < deadline {
            flags = session.flags("#{alternate_on} #{cursor_flag}")
            if flags == "0 1" { break }
            usleep(50_000)
        }
        XCTAssertEqual(flags, "0 1", "after SIGTERM: the alternate screen left, the cursor shown")
    }

    // MARK: Progress, failures, resize

    /// Runs `quire view ARGUMENTS` in tmux: waits for `first`, sends each step's keys and waits for
    /// its text, then `q`. Returns the exit status and the screen the terminal was left with.
    func view(
        _ arguments: [String], environment: [String: String], first: String = "1/", steps: [(keys: [String], expect: String)] = [], quit: Bool = true
    ) throws -> (status: String, screen: String) {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let exitFile = directory.appendingPathComponent("exit")
        let settings = (["LANG": "en_US.UTF-8"].merging(environment) { $1 }).sorted { $0.key < $1.key }.map { "\($0.key)=\(TmuxSession.quoted($0.value))" }
        let line = (["env"] + settings + [TestSupport.quireBinary.path, "view"] + arguments.map(TmuxSession.quoted)).joined(separator: " ")
        let session = try TmuxSession(command: line + "; echo $? > \(exitFile.path); sleep 30")
        defer { session.kill() }
        _ = try session.wait(for: first, seconds: 60)
        for step in steps {
            try session.send(step.keys)
            _ = try session.wait(for: step.expect, seconds: 60)
        }
        if quit { try session.send(["q"]) }
        let status = TmuxSession.exitStatus(exitFile)
        XCTAssertEqual(session.flags("#{alternate_on} #{cursor_flag}"), "0 1", "the terminal restored after \(arguments)")
        return (status, try session.screen())
    }

    /// The saved entry for the only book in a progress file.
    func savedEntry(_ file: URL) throws -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["format"] as? String, "quire-progress")
        let books = try XCTUnwrap(object["books"] as? [String: Any])
        XCTAssertEqual(books.count, 1)
        return books.values.first as? [String: Any]
    }

    func testProgressIsRecordedAfterTheThreshold() throws {
        let out = try rendered(LayoutTests.sampleBook(), pages: "1-8")
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let state = out.deletingLastPathComponent().appendingPathComponent("state")
        let file = state.appendingPathComponent("quire/progress.json")
        let environment = ["XDG_STATE_HOME": state.path]
        let arguments = [out.path, "--graphics", "symbols"]
        // Open and quit: nothing on disk.
        XCTAssertEqual(try view(arguments, environment: environment).status, "0")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), "opening and quitting records nothing")
        // An unread book, two pages turned: still nothing.
        XCTAssertEqual(try view(arguments, environment: environment, steps: [(["Space"], "2/"), (["Space"], "3/")]).status, "0")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), "two pages of an unread book record nothing")
        // Three: recorded, as a Locator with KOReader's document id and the XPointer.
        XCTAssertEqual(try view(arguments, environment: environment, steps: [(["Space"], "2/"), (["Space"], "3/"), (["Space"], "4/")]).status, "0")
        var entry = try XCTUnwrap(savedEntry(file), "three pages record")
        XCTAssertEqual(entry["page"] as? Int, 4)
        let map = try PositionMap(path: out.appendingPathComponent("positions.json").path)
        XCTAssertEqual(entry["koreaderDocument"] as? String, map.book.partialMD5)
        XCTAssertEqual((entry["locator"] as? [String: Any])?["href"] as? String, Locate.startLocator(map.pages[3]).href)
        XCTAssertEqual(entry["xpointer"] as? String, Locate.startLocator(map.pages[3]).locations.xpointer)
        // In progress: it resumes on page 4, one turn records, and opening and quitting changes nothing.
        XCTAssertEqual(try view(arguments, environment: environment, first: "4/", steps: [(["Space"], "5/")]).status, "0")
        entry = try XCTUnwrap(savedEntry(file))
        XCTAssertEqual(entry["page"] as? Int, 5, "a book in progress records every turn")
        let before = try Data(contentsOf: file)
        let modified = try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
        XCTAssertEqual(try view(arguments, environment: environment, first: "5/").status, "0")
        XCTAssertEqual(try Data(contentsOf: file), before)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date, modified, "not even rewritten")
        // quire progress prints it.
        let printed = try TestSupport.run(TestSupport.quireBinary, ["progress", out.path, "--json"], environment: environment)
        XCTAssertEqual(printed.status, 0, printed.stderr)
        XCTAssertTrue(printed.stdoutText.contains("\"page\": 5"), printed.stdoutText)
        // A fresh state: jumping to the last page records at once (the book is finished).
        try FileManager.default.removeItem(at: state)
        XCTAssertEqual(try view(arguments, environment: environment, steps: [(["G"], "\(map.pageCount)/\(map.pageCount)")]).status, "0")
        entry = try XCTUnwrap(savedEntry(file), "the last page records")
        XCTAssertEqual(entry["finished"] as? Bool, true)
        XCTAssertEqual(entry["percentage"] as? Double, 1)
        // A finished book counts as unread again: leafing back two pages records nothing.
        let finished = try Data(contentsOf: file)
        XCTAssertEqual(try view(arguments, environment: environment, first: "\(map.pageCount)/", steps: [(["Left"], "\(map.pageCount - 1)/")]).status, "0")
        XCTAssertEqual(try Data(contentsOf: file), finished)
        // --record-after 0 records the first turn; --no-resume opens at the start.
        try FileManager.default.removeItem(at: state)
        XCTAssertEqual(try view(arguments + ["--record-after", "0"], environment: environment, steps: [(["Space"], "2/")]).status, "0")
        XCTAssertEqual(try savedEntry(file)?["page"] as? Int, 2)
        XCTAssertEqual(try view(arguments + ["--no-resume"], environment: environment, first: "1/").status, "0")
        // Nothing saved for another book: exit 3, said on stderr.
        let other = out.deletingLastPathComponent().appendingPathComponent("other.epub")
        try TestBook().write(to: other)
        let none = try TestSupport.run(TestSupport.quireBinary, ["progress", other.path], environment: environment)
        XCTAssertEqual(none.status, 3, none.stderr)
    }

    func testBooksThatCannotBeOpenedShowTheirReason() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let corrupt = directory.appendingPathComponent("corrupt.epub")
        try Data("This is plain text, not a book.\n".utf8).write(to: corrupt)
        let drm = directory.appendingPathComponent("drm.epub")
        try TestBook.drmProtected.write(to: drm)
        let cases: [(URL, String, String)] = [
            (corrupt, "damaged or not a book", "65"), (drm, "DRM-protected", "69"),
            (directory.appendingPathComponent("absent.epub"), "not there", "66"),
        ]
        for (book, reason, status) in cases {
            let result = try view([book.path, "--graphics", "symbols"], environment: [:], first: reason)
            XCTAssertEqual(result.status, status, "\(book.lastPathComponent) exits non-zero after q")
            XCTAssertTrue(result.screen.contains("quire: error:"), "the error is said again once the terminal is back: \(result.screen)")
        }
        // The same screen in Japanese.
        let japanese = try view([drm.path, "--graphics", "symbols", "--lang", "ja"], environment: [:], first: "DRM で保護")
        XCTAssertEqual(japanese.status, "69")
    }

    /// A real terminal: xterm emulating a VT340 (sixel graphics) on a virtual X display. The
    /// viewer detects sixel by its probe (device attribute 4) with no --graphics given, and the
    /// screenshot's page area must hold the page: text on white, not xterm's blank background.
    /// kitty (under Xvfb with Mesa's software renderer), driven through its remote control: the
    /// probe picks kitty graphics (the page rows hold no text cells, the screenshot shows the
    /// page), the start page is kept although kitty answers the probe late, space turns, q exits 0.
    func testKittyGraphicsInKitty() throws {
        for tool in ["/usr/bin/Xvfb", "/usr/bin/kitty", "/usr/bin/import", "/usr/bin/convert"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is installed by make setup")
        }
        let out = try rendered(LayoutTests.sampleBook(), pages: "1-12")
        let directory = out.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: directory) }
        let display = ":\(40 + (getpid() + 25) % 50)"
        let socket = directory.appendingPathComponent("kitty.sock").path
        let exitFile = directory.appendingPathComponent("exit")
        let shot = directory.appendingPathComponent("screen.png")
        let start = """
            Xvfb \(display) -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 & echo $! > \(directory.path)/xvfb.pid
            sleep 1
            DISPLAY=\(display) LIBGL_ALWAYS_SOFTWARE=1 XDG_STATE_HOME=\(directory.path)/state kitty --config NONE -o allow_remote_control=yes \\
              --listen-on unix:\(socket) -o font_size=9 -o initial_window_width=1000 -o initial_window_height=740 \\
              sh -c '\(TestSupport.quireBinary.path) view \(out.path) --page 10; echo $? > \(exitFile.path); sleep 20' >/dev/null 2>&1 &
            echo $! > \(directory.path)/kitty.pid
            """
        Self.shell("{\n\(start)\n} </dev/null")
        defer { Self.shell("kill $(cat \(directory.path)/kitty.pid) $(cat \(directory.path)/xvfb.pid) 2>/dev/null") }
        func kitty(_ arguments: String) -> String { Self.shell("kitty @ --to unix:\(socket) \(arguments) </dev/null 2>/dev/null").output }
        func screenText() -> String { kitty("get-text") }
        func waitFor(_ text: String) -> String {
            var screen = ""
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                screen = screenText()
                if Self.status(screen)?.hasPrefix(text) == true { return screen }
                usleep(100_000)
            }
            return screen
        }
        let first = waitFor("10/")
        let lines = first.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(Self.status(first)?.split(separator: "/").first, "10", "the start page, not a page the probe's late answers moved to: \(first)")
        XCTAssertTrue(lines.dropLast(2).allSatisfy { $0.trimmingCharacters(in: .whitespaces).isEmpty }, "pixels, not symbols, above the status line: \(first)")
        let measure = """
            DISPLAY=\(display) import -window root \(shot.path)
            convert \(shot.path) -crop 300x500+350+60 -colorspace gray -format '%[fx:mean] %[fx:standard_deviation]' info:
            """
        let result = Self.shell("{\n\(measure)\n} </dev/null 2>&1").output
        let numbers = result.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(numbers.count, 2, result)
        // The middle of the window, inside the page: a blank window is one colour (deviation 0).
        XCTAssertGreaterThan(numbers.last ?? 0, 0.08, "the kitty image shows in the screenshot: \(result)")
        XCTAssertGreaterThan(numbers.first ?? 0, 0.6, "light page, dark text: \(result)")
        _ = kitty("send-text ' '")
        XCTAssertEqual(Self.status(waitFor("11/"))?.split(separator: "/").first, "11")
        _ = kitty("send-text q")
        XCTAssertEqual(TmuxSession.exitStatus(exitFile), "0")
    }

    func testSixelPageIsVisibleInXterm() throws {
        for tool in ["/usr/bin/Xvfb", "/usr/bin/xterm", "/usr/bin/import", "/usr/bin/convert"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is installed by make setup")
        }
        let out = try rendered(LayoutTests.sampleBook(), pages: "1-12")
        let directory = out.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: directory) }
        let display = ":\(40 + getpid() % 50)"
        let shot = directory.appendingPathComponent("screen.png")
        let script = """
            Xvfb \(display) -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 & server=$!
            sleep 1
            DISPLAY=\(display) XDG_STATE_HOME=\(directory.path)/state xterm -ti vt340 -fa 'DejaVu Sans Mono' -fs 9 -xrm 'XTerm*numColorRegisters: 256' \\
              -geometry 110x45+0+0 -e \(TestSupport.quireBinary.path) view \(out.path) --page 10 & terminal=$!
            sleep 4
            DISPLAY=\(display) import -window root \(shot.path)
            kill $terminal $server 2>/dev/null; wait 2>/dev/null
            convert \(shot.path) -crop 880x640+0+0 -colorspace gray -format '%[fx:mean] %[fx:standard_deviation]' info:
            """
        let result = try TestSupport.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script])
        let numbers = result.stdoutText.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(numbers.count, 2, result.stdoutText + result.stderr)
        // A blank xterm is one colour (deviation 0); a text page is mostly white with dark glyphs.
        XCTAssertGreaterThan(numbers.last ?? 0, 0.08, "the sixel page shows in the screenshot: \(result.stdoutText)")
        XCTAssertGreaterThan(numbers.first ?? 0, 0.7, "light page, dark text: \(result.stdoutText)")
    }
}
