import Foundation
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import QuirePositions
import QuireText
import XCTest

/// Vertical text (`writing-mode: vertical-rl`): columns from the right edge leftward, upright CJK
/// in its vertical forms, Latin set sideways, tate-chu-yoko, ruby and emphasis on the right. All
/// read from the display lists of laid-out pages, whose coordinates are the physical page's.
final class VerticalWritingTests: XCTestCase {
    /// One drawn glyph: where it stands on the page and the text offset it comes from.
    struct Glyph {
        var id: UInt32
        var x: Double
        var y: Double
        var source: Int
        var orientation: GlyphOrientation
        var size: Double
    }

    /// The glyphs of the page's text runs (not ruby, marks or list markers, which have no sources).
    static func glyphs(_ page: Page) -> [Glyph] {
        var result: [Glyph] = []
        for case .glyphs(let run) in page.items where run.sources.count == run.glyphs.count {
            for index in run.glyphs.indices {
                result.append(
                    Glyph(
                        id: run.glyphs[index], x: run.origin.x + Double(run.xs[index]),
                        y: run.origin.y + Double(run.ys[index]),
                        source: Int(run.sources[index]), orientation: run.orientation, size: run.size))
            }
        }
        return result
    }

    static func runs(_ page: Page) -> [GlyphRun] {
        page.items.compactMap { item in
            if case .glyphs(let run) = item { return run }
            return nil
        }
    }

    static func text(_ chapter: ChapterLayout) throws -> [UInt16] {
        DocumentText(try XCTUnwrap(chapter.document)).units
    }

    /// Columns run from the right edge leftward, and each column's characters top to bottom:
    /// successive lines (in text order) have decreasing x, successive upright characters of a
    /// line increasing y, and every line lies in the content box.
    static func checkColumns(
        _ page: Page, content: Rect, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertTrue(page.vertical, file: file, line: line)
        let lines = page.lines.sorted { $0.start < $1.start }
        XCTAssertGreaterThan(lines.count, 3, "a page of columns", file: file, line: line)
        let glyphs = glyphs(page)
        for (previous, next) in zip(lines, lines.dropFirst()) {
            XCTAssertLessThan(
                next.rect.midX, previous.rect.midX, "line \(next.start) is left of line \(previous.start)",
                file: file, line: line)
        }
        for record in lines {
            XCTAssertGreaterThan(
                record.rect.height, record.rect.width, "a column is taller than wide", file: file,
                line: line)
            XCTAssertGreaterThanOrEqual(record.rect.x, content.x - 0.5, file: file, line: line)
            XCTAssertLessThanOrEqual(record.rect.maxX, content.maxX + 0.5, file: file, line: line)
            XCTAssertGreaterThanOrEqual(record.rect.y, content.y - 0.5, file: file, line: line)
            XCTAssertLessThanOrEqual(record.rect.maxY, content.maxY + 0.5, file: file, line: line)
            let upright = glyphs.filter {
                $0.orientation == .upright && $0.source >= record.start && $0.source < record.end
            }
            .sorted { $0.source < $1.source }
            var lastSource = -1
            var lastY = -Double.infinity
            // (Tate-chu-yoko's characters stand side by side, on one baseline.)
            for glyph in upright where glyph.source != lastSource {
                XCTAssertGreaterThanOrEqual(
                    glyph.y, lastY, "offset \(glyph.source) is below the one before it", file: file,
                    line: line)
                XCTAssertTrue(
                    glyph.x >= record.rect.x - 1 && glyph.x <= record.rect.maxX + 1,
                    "offset \(glyph.source) is in its column", file: file, line: line)
                lastSource = glyph.source
                lastY = glyph.y
            }
        }
        // The first column stands at the right edge of the content box.
        if let first = lines.first {
            XCTAssertLessThan(
                content.maxX - first.rect.maxX, first.rect.width, "the first column is at the right edge",
                file: file, line: line)
        }
    }

    func testKusamakuraIsSetInColumnsFromTheRight() throws {
        let book = try TestSupport.corpusFile(
            "idpf-epub3-samples/kusamakura-japanese-vertical-writing.epub")
        let (layout, result) = try LayoutTests.layout(book.path)
        let chapter = try XCTUnwrap(result.chapters.first { $0.href.hasSuffix("一.xhtml") })
        XCTAssertEqual(chapter.missingGlyphs, 0)
        XCTAssertGreaterThan(chapter.pages.count, 5)
        let content = layout.settings.contentRect
        for page in chapter.pages.dropFirst().prefix(3) { Self.checkColumns(page, content: content) }
        // Its text is Japanese: every text glyph stands upright (none turned on its side).
        let first = try XCTUnwrap(chapter.pages.dropFirst().first)
        let glyphs = Self.glyphs(first)
        XCTAssertGreaterThan(glyphs.count, 100)
        XCTAssertTrue(
            glyphs.allSatisfy { $0.orientation == .upright }, "upright, none turned on its side")
        // Ruby (runs with no text of their own) stands to the right of its base, in its own column.
        let text = try Self.text(chapter)
        var rubyChecked = 0
        for page in chapter.pages.prefix(4) {
            let bases = Self.glyphs(page)
            for run in Self.runs(page)
            where run.sources.isEmpty && run.size < bases.first.map(\.size) ?? 0 {
                let rubyLeft = run.origin.x + Double(run.xs.min() ?? 0)
                let rubyTop = run.origin.y + Double(run.ys.min() ?? 0)
                // The base: the glyphs beside the ruby's first glyph, in the column just left of it.
                let beside = bases.filter {
                    abs($0.y - rubyTop) < $0.size * 1.5 && $0.x < rubyLeft && rubyLeft - $0.x < $0.size * 1.6
                }
                guard !beside.isEmpty else { continue }
                XCTAssertTrue(
                    beside.allSatisfy { $0.x + $0.size * 0.9 <= rubyLeft + 1 },
                    "ruby to the right of its base")
                rubyChecked += 1
            }
        }
        XCTAssertGreaterThan(rubyChecked, 5, "ruby found beside its base")
        XCTAssertFalse(text.isEmpty)
    }

    /// 、。「」ー take their vertical glyphs in a column (the font's `vert` forms), in Noto Serif
    /// CJK JP: the ids differ from horizontal shaping's, and the laid-out page uses the vertical ones.
    func testPunctuationTakesItsVerticalForms() throws {
        let face = try FontFace(
            source: .file(path: "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc", index: 0))
        XCTAssertEqual(face.familyName, "Noto Serif CJK JP")
        let shaper = Shaper()
        var vertical: [UInt16: UInt32] = [:]
        for character in "、。「」ー".utf16 {
            let across = shaper.shape(
                [character][...], ShapingParameters(face: face, size: 40, language: "ja"))
            let down = shaper.shape(
                [character][...], ShapingParameters(face: face, size: 40, language: "ja", vertical: true))
            XCTAssertEqual(across.glyphs.count, 1)
            XCTAssertEqual(down.glyphs.count, 1)
            XCTAssertNotEqual(
                across.glyphs[0].id, down.glyphs[0].id, String(decoding: [character], as: UTF16.self))
            XCTAssertEqual(down.advance, 40, accuracy: 0.01, "one em down the column")
            vertical[character] = down.glyphs[0].id
        }
        // In the sample's vertical chapter, each of them is drawn with its vertical glyph.
        let (_, result) = try LayoutTests.layout(SampleBooksTests.scriptsBook().path)
        let chapter = try XCTUnwrap(result.chapters.first { $0.href.hasSuffix("vertical.xhtml") })
        let text = try Self.text(chapter)
        var seen = Set<UInt16>()
        for page in chapter.pages {
            for glyph in Self.glyphs(page) where glyph.source < text.count {
                guard let expected = vertical[text[glyph.source]] else { continue }
                XCTAssertEqual(glyph.id, expected, "offset \(glyph.source)")
                seen.insert(text[glyph.source])
            }
        }
        XCTAssertEqual(seen, Set("、。「」ー".utf16))
    }

    /// The sample's vertical chapter: columns from the right, a Latin word set sideways,
    /// two-digit numbers upright in one em, ruby and emphasis marks on the right.
    func testSampleVerticalChapter() throws {
        let (layout, result) = try LayoutTests.layout(SampleBooksTests.scriptsBook().path)
        let chapter = try XCTUnwrap(result.chapters.first { $0.href.hasSuffix("vertical.xhtml") })
        XCTAssertEqual(chapter.missingGlyphs, 0)
        let content = layout.settings.contentRect
        Self.checkColumns(try XCTUnwrap(chapter.pages.first), content: content)
        let text = try Self.text(chapter)
        let string = String(decoding: text, as: UTF16.self)
        func offset(of needle: String) throws -> Int {
            let range = try XCTUnwrap(string.range(of: needle), needle)
            return string.utf16.distance(from: string.startIndex, to: range.lowerBound)
        }
        let page = try XCTUnwrap(chapter.pages.first)
        let runs = Self.runs(page)
        // The paragraphs' text size (the heading's is larger).
        let size = try XCTUnwrap(Self.glyphs(page).first { $0.source == (try? offset(of: "灯台の光")) })
            .size

        // "Aurora": one run turned on its side, drawn down the column (the pen moves down the page).
        let aurora = try offset(of: "Aurora")
        let latin = try XCTUnwrap(runs.first { $0.sources.contains(Int32(aurora)) })
        XCTAssertEqual(latin.orientation, .sideways)
        XCTAssertEqual(latin.glyphs.count, 6)
        XCTAssertTrue(
            zip(latin.xs, latin.xs.dropFirst()).allSatisfy { $0 < $1 },
            "its letters follow each other down the column")

        // "12": upright, side by side across the column, within one em; the next character starts one em down.
        let twelve = try offset(of: "12")
        let combined = try XCTUnwrap(runs.first { $0.sources.contains(Int32(twelve)) })
        XCTAssertEqual(combined.orientation, .upright)
        XCTAssertEqual(combined.glyphs.count, 2)
        let xs = combined.xs.map { combined.origin.x + Double($0) }
        let ys = combined.ys.map { combined.origin.y + Double($0) }
        XCTAssertLessThan(xs[0], xs[1], "1 is left of 2")
        XCTAssertEqual(ys[0], ys[1], accuracy: 0.01, "on one baseline")
        // Set at the run's size, the two digits are at most one em wide, centred across the column.
        let width = Shaper().shape(
            Array("12".utf16)[...], ShapingParameters(face: combined.face, size: combined.size)
        ).advance
        XCTAssertLessThanOrEqual(width, size + 0.01, "both digits fit one em")
        let after = try XCTUnwrap(Self.glyphs(page).first { $0.source == twelve + 2 })
        let before = try XCTUnwrap(Self.glyphs(page).first { $0.source == twelve - 1 })
        XCTAssertEqual(
            after.y - before.y, 2 * size, accuracy: 1, "the number takes one em between its neighbours")
        XCTAssertEqual(xs[0] + width / 2, before.x + size / 2, accuracy: 1, "centred in the column")

        // Ruby for 灯台守: upright, to the right of its base.
        let base = try offset(of: "灯台守")
        let baseGlyphs = Self.glyphs(page).filter { (base..<(base + 3)).contains($0.source) }
        XCTAssertEqual(baseGlyphs.count, 3)
        let ruby = try XCTUnwrap(
            runs.first { $0.sources.isEmpty && $0.glyphs.count == 6 && $0.size < size })
        let rubyXs = ruby.xs.map { ruby.origin.x + Double($0) }
        let rubyYs = ruby.ys.map { ruby.origin.y + Double($0) }
        XCTAssertGreaterThan(
            try XCTUnwrap(rubyXs.min()), try XCTUnwrap(baseGlyphs.map { $0.x + size }.max()) - 1,
            "ruby right of its base")
        XCTAssertTrue(
            zip(rubyYs, rubyYs.dropFirst()).allSatisfy { $0 < $1 }, "ruby runs down its own column")
        XCTAssertLessThan(
            abs((rubyYs.first! + rubyYs.last!) / 2 - (baseGlyphs.first!.y + baseGlyphs.last!.y) / 2),
            size, "centred on its base")

        // Sesame marks over 遠い北の港: to the right of each character.
        let dots = try offset(of: "遠い北の港")
        let emphasized = Self.glyphs(page).filter { (dots..<(dots + 5)).contains($0.source) }
        let marks = try XCTUnwrap(runs.first { $0.sources.isEmpty && $0.glyphs.count == 5 })
        XCTAssertTrue(
            marks.xs.allSatisfy { marks.origin.x + Double($0) > emphasized[0].x + size * 0.9 },
            "marks right of the text")
    }

    /// The corpus's vertical books render at kobo-clara and phone with no glyph missing, their
    /// maps the same on one worker and two.
    static let verticalCorpusBooks = [
        "idpf-epub3-samples/kusamakura-japanese-vertical-writing.epub", "idpf-epub3-samples/mymedia_lite.epub",
        "jagat-epub-css-test/02_EPUB_exprssn_test_03ver.epub", "jagat-epub-css-test/epubhontobiratest_V.epub",
        "jagat-epub-css-test/epubitalictest.epub", "jagat-epub-css-test/epubmojitsumetest.epub",
        "jagat-epub-css-test/epubrealpagelinktest.epub", "jagat-epub-css-test/epubcsstest_v2.epub",
        "tdpf-epub3guide-zh-hant/02_Reflow_Text_Vertical.epub", "tdpf-epub3guide-zh-hant/07_Reflow_FXL_Mixed.epub",
    ]

    func testVerticalCorpusBooksRenderAlikeOnAnyNumberOfWorkers() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for relative in Self.verticalCorpusBooks {
            let book = try TestSupport.corpusFile(relative)
            for profile in ["kobo-clara", "phone"] {
                var maps: [Data] = []
                for jobs in ["1", "2"] {
                    let out = directory.appendingPathComponent("out-\(jobs)")
                    let run = try TestSupport.quire("render", book.path, "--out", out.path, "--profile", profile, "--map-only", "--quiet", "--jobs", jobs)
                    XCTAssertEqual(run.status, 0, "\(relative): \(run.stderr)")
                    maps.append(try Data(contentsOf: out.appendingPathComponent("positions.json")))
                }
                XCTAssertEqual(maps[0], maps[1], "\(relative) at \(profile): the map of --jobs 1 and --jobs 2")
                let map = try XCTUnwrap(JSONSerialization.jsonObject(with: maps[0]) as? [String: Any])
                let codes = (map["warnings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
                XCTAssertFalse(codes.contains("missing-glyphs"), "\(relative) at \(profile) has .notdef glyphs")
            }
        }
    }

    /// CJK text takes the glyph forms of its language's region: Traditional Chinese (centred
    /// punctuation), Simplified, Korean and Japanese each from their own Noto CJK face.
    func testCJKFallbackFollowsTheLanguagesRegion() throws {
        let fonts = try FontCollection()
        for (language, family) in [
            ("zh-TW", "Noto Serif CJK TC"), ("zh-Hant", "Noto Serif CJK TC"), ("zh-HK", "Noto Serif CJK HK"), ("zh-CN", "Noto Serif CJK SC"),
            ("zh", "Noto Serif CJK SC"), ("ko", "Noto Serif CJK KR"), ("ja", "Noto Serif CJK JP"), ("en", "Noto Serif CJK JP"),
        ] {
            let request = FontRequest(families: ["serif"], bold: false, italic: false, language: language)
            XCTAssertEqual(fonts.fallbackFace(for: "，", request: request)?.familyName, family, language)
        }
    }

    /// `--writing-mode horizontal` sets the vertical chapter in lines again, and says so in the map.
    func testHorizontalOnRequest() throws {
        let book = try SampleBooksTests.scriptsBook().path
        let container = try EPUBContainer.open(path: book)
        var settings = LayoutSettings(profile: PageProfile.named("kobo-clara")!)
        settings.writingMode = .horizontal
        let layout = try BookLayout(container: container, settings: settings)
        let chapter = try XCTUnwrap(
            layout.layout(jobs: 1).chapters.first { $0.href.hasSuffix("vertical.xhtml") })
        for page in chapter.pages {
            XCTAssertFalse(page.vertical)
            XCTAssertTrue(Self.runs(page).allSatisfy { $0.orientation == .horizontal })
            for line in page.lines { XCTAssertGreaterThan(line.rect.width, line.rect.height) }
        }
        XCTAssertEqual(PositionMap.profile(settings, name: nil).writingMode, "horizontal")
        XCTAssertNil(
            PositionMap.profile(LayoutSettings(profile: settings.profile), name: nil).writingMode)
    }

    // MARK: vertical-lr, and the sides of underlines and emphasis marks

    /// A chapter of the sample's vertical text in `mode`, long enough for two pages, with an
    /// underline and emphasis marks placed by `underline` and `emphasis` (their CSS values).
    static func columnsChapter(mode: String, underline: String = "auto", emphasis: String = "over right", css: String = "") -> String {
        let paragraphs = """
            <p>灯台の光は<span class="tcy">12</span>秒ごとに一回まわる。<ruby>灯台守<rt>とうだいもり</rt></ruby>はその光を見あげて、<span class="u">今夜の日誌</span>をひらいた。</p>
            <p>「霧は<span class="tcy">15</span>時から出はじめた」と彼は書く。港に入った船の名前は「Aurora」。<span class="e">遠い北の港</span>から来た船だという。</p>
            <p>船長は<ruby>錨<rt>いかり</rt></ruby>をおろすと、古い海図をかかえて灯台の階段をのぼってきた。百二十段の石の階段は、夜になると冷たく、足音がよくひびく。</p>
            <p>二人はストーブのそばで、海図の上に指をすべらせながら、むかしの航路の話をした。北の海では、灯台の間隔を数えることが、そのまま船の命をまもることになる。</p>
            """
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="ja" lang="ja" style="-epub-writing-mode: \(mode); writing-mode: \(mode)">
            <head><title>縦書き</title><style>
            .tcy { text-combine-upright: all; }
            .u { text-decoration: underline; text-underline-position: \(underline); }
            .e { text-emphasis-style: filled sesame; text-emphasis-position: \(emphasis); }
            \(css)
            </style></head>
            <body><h1>灯台日誌</h1>\(String(repeating: paragraphs, count: 6))</body></html>
            """
    }

    /// vertical-lr is vertical-rl with its columns taken in the other order: the same lines on the
    /// same pages, each column moved whole to the mirrored place across the content box (its ruby
    /// still on its right), the heading's start border on its left, and pages turning left to right.
    func testVerticalLeftToRightMirrorsTheColumnsNotTheirContent() throws {
        let (layout, rl) = try LayoutTests.layoutChapter(Self.columnsChapter(mode: "vertical-rl"), name: "rl")
        let (_, lr) = try LayoutTests.layoutChapter(Self.columnsChapter(mode: "vertical-lr"), name: "lr")
        let content = layout.settings.contentRect
        XCTAssertGreaterThan(rl.pages.count, 1)
        XCTAssertEqual(lr.pages.count, rl.pages.count)
        for (right, left) in zip(rl.pages, lr.pages) {
            XCTAssertTrue(left.vertical && left.columnsLeftToRight)
            XCTAssertFalse(right.columnsLeftToRight)
            XCTAssertEqual(left.lines.map(\.start), right.lines.map(\.start))
            XCTAssertEqual(left.lines.map(\.end), right.lines.map(\.end))
            // Each column at the mirrored place: as far from the left edge as it was from the right.
            var shifts: [Double] = []
            for (r, l) in zip(right.lines, left.lines) {
                XCTAssertEqual(l.rect.x - content.x, content.maxX - r.rect.maxX, accuracy: 0.01)
                XCTAssertEqual(l.rect.y, r.rect.y, accuracy: 0.01)
                XCTAssertEqual(l.rect.width, r.rect.width, accuracy: 0.01)
                shifts.append(l.rect.x - r.rect.x)
            }
            // Successive columns from the left edge rightward.
            let ordered = left.lines.sorted { $0.start < $1.start }
            for (previous, next) in zip(ordered, ordered.dropFirst()) { XCTAssertGreaterThan(next.rect.midX, previous.rect.midX) }
            if let first = ordered.first { XCTAssertLessThan(first.rect.x - content.x, first.rect.width) }
            // Every run (text, ruby, marks) moves with its column, unturned, unmirrored.
            XCTAssertEqual(left.items.count, right.items.count)
            var moved = 0
            for (r, l) in zip(right.items, left.items) {
                guard case .glyphs(let a) = r, case .glyphs(let b) = l else { continue }
                XCTAssertEqual(a.glyphs, b.glyphs)
                XCTAssertEqual(a.orientation, b.orientation)
                XCTAssertEqual(b.origin.y, a.origin.y, accuracy: 0.01)
                XCTAssertTrue(
                    shifts.contains { abs($0 - (b.origin.x - a.origin.x)) < 0.01 }, "the run moved as its column did")
                moved += 1
            }
            XCTAssertGreaterThan(moved, 0)
        }
        // Physical properties stay physical: the heading's border-right is on its right in both
        // modes (its block-start side in vertical-rl, its block-end side in vertical-lr).
        func border(_ page: Page) -> (x: Double, heading: Rect)? {
            guard let heading = page.lines.min(by: { $0.start < $1.start })?.rect else { return nil }
            for item in page.items {
                switch item {
                case .stroke(let from, let to, let width, _, _) where abs(from.x - to.x) < 0.01 && width >= 4: return (from.x, heading)
                case .fill(let rect, _) where rect.width < 12 && rect.height > 40: return (rect.midX, heading)
                case .box(let box) where box.borderWidths.right > 0: return (box.box.maxX, heading)
                default: continue
                }
            }
            return nil
        }
        for mode in ["vertical-rl", "vertical-lr"] {
            let css = "h1 { border-right: 5px solid black; padding-right: 1em; }"
            let (_, chapter) = try LayoutTests.layoutChapter(Self.columnsChapter(mode: mode, css: css), name: "border-\(mode)")
            let (x, heading) = try XCTUnwrap(border(chapter.pages[0]))
            XCTAssertGreaterThan(x, heading.maxX)
            XCTAssertLessThan(x - heading.maxX, heading.width * 2, "beside the heading")
        }
        // Pages follow the columns: right to left for vertical-rl, left to right for vertical-lr.
        for (chapter, progression) in [(rl, "rtl"), (lr, "ltr")] {
            let directory = try TestSupport.temporaryDirectory("progression-\(progression)")
            defer { try? FileManager.default.removeItem(at: directory) }
            var book = TestBook()
            book.chapter = Self.columnsChapter(mode: chapter.pages[0].columnsLeftToRight ? "vertical-lr" : "vertical-rl")
            let url = directory.appendingPathComponent("book.epub")
            try book.write(to: url)
            let (bookLayout, result) = try LayoutTests.layout(url.path)
            let map = PositionMap(layout: bookLayout, result: result, identity: try .of(file: url.path), profileName: nil, withImages: false)
            XCTAssertEqual(map.book.readingProgression, progression)
        }
    }

    /// `text-underline-position: right` puts a column's underline on its right (over) side; auto
    /// and `under left` on its left. `text-emphasis-position: over left` puts the marks on the left;
    /// the initial `over right` on the right. In both writing modes.
    func testUnderlineAndEmphasisMarksTakeTheSideAsked() throws {
        for mode in ["vertical-rl", "vertical-lr"] {
            for (underline, emphasis, rightSide) in [("auto", "over right", (false, true)), ("under right", "over left", (true, false)), ("under left", "under right", (false, true))] {
                let (_, chapter) = try LayoutTests.layoutChapter(
                    Self.columnsChapter(mode: mode, underline: underline, emphasis: emphasis), name: "sides-\(mode)-\(underline)")
                let page = try XCTUnwrap(chapter.pages.first)
                let bases = Self.glyphs(page)
                let what = "\(mode), underline \(underline), emphasis \(emphasis)"
                // Underlines: strokes down a column.
                var underlines = 0
                for case .stroke(let from, let to, _, _, _) in page.items where abs(from.x - to.x) < 0.01 {
                    let line = try XCTUnwrap(page.lines.first { $0.rect.x <= from.x && from.x <= $0.rect.maxX && $0.rect.y <= from.y + 1 && from.y <= $0.rect.maxY }, what)
                    XCTAssertGreaterThanOrEqual(line.start, 4, "not in the heading")
                    let size = try XCTUnwrap(bases.first { $0.source >= line.start && $0.source < line.end }).size
                    if rightSide.0 {
                        XCTAssertGreaterThan(from.x, line.rect.midX + size * 0.4, what)
                    } else {
                        XCTAssertLessThan(from.x, line.rect.midX - size * 0.4, what)
                    }
                    underlines += 1
                }
                XCTAssertGreaterThan(underlines, 0, what)
                // Emphasis marks: runs of ﹅ at half size, with no text of their own.
                var marks = 0
                for run in Self.runs(page) where run.sources.isEmpty && run.glyphs.count >= 5 && Set(run.glyphs).count == 1 {
                    guard let line = page.lines.first(where: { $0.rect.x <= run.origin.x && run.origin.x <= $0.rect.maxX && $0.rect.y <= run.origin.y + 1 && run.origin.y <= $0.rect.maxY }) else { continue }
                    let column = bases.filter { $0.source >= line.start && $0.source < line.end && abs($0.y - run.origin.y) < run.size * 12 }
                    guard let base = column.first else { continue }
                    if rightSide.1 {
                        XCTAssertGreaterThan(run.origin.x, base.x + base.size * 0.5, what)
                    } else {
                        XCTAssertLessThan(run.origin.x + run.size, base.x + base.size * 0.5, what)
                    }
                    marks += 1
                }
                XCTAssertGreaterThan(marks, 0, what)
            }
        }
    }

    static func hangingChapter(_ body: String, hanging: String) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="ja" lang="ja" style="writing-mode: vertical-rl">
        <head><title>ぶら下げ</title><style>
        p { margin: 0; text-indent: 0; text-align: justify; hanging-punctuation: \(hanging); }
        </style></head><body>\(body)</body></html>
        """
    }

    /// `hanging-punctuation: allow-end` lets a stop or comma that would not fit stand past the
    /// column's foot, and only then (a mark that fits stays inside); without it the column breaks a
    /// character early, since a stop may not start a column.
    func testStopsAndCommasHangPastTheColumnOnlyWhenTheyWouldNotFit() throws {
        let (layout, measured) = try LayoutTests.layoutChapter(
            Self.hangingChapter("<p>" + String(repeating: "永", count: 300) + "</p>", hanging: "none"), name: "hang-measure")
        let content = layout.settings.contentRect
        let firstLine = try XCTUnwrap(measured.pages.first?.lines.min { $0.start < $1.start })
        let capacity = firstLine.end - firstLine.start
        XCTAssertGreaterThan(capacity, 10)
        // A full column then a stop; a column then ends in a comma that fits as its last character.
        let body = "<p>" + String(repeating: "永", count: capacity) + "。" + String(repeating: "永", count: capacity - 1) + "、"
            + String(repeating: "永", count: 20) + "</p>"
        for hanging in ["none", "allow-end"] {
            let (_, chapter) = try LayoutTests.layoutChapter(Self.hangingChapter(body, hanging: hanging), name: "hang-\(hanging)")
            let page = try XCTUnwrap(chapter.pages.first)
            let text = try Self.text(chapter)
            let stop = try XCTUnwrap(text.firstIndex(of: 0x3002)), comma = try XCTUnwrap(text.firstIndex(of: 0x3001))
            let lines = page.lines.sorted { $0.start < $1.start }
            let glyphs = Self.glyphs(page)
            func glyph(_ source: Int) throws -> Glyph { try XCTUnwrap(glyphs.first { $0.source == source }, "offset \(source)") }
            if hanging == "none" {
                XCTAssertEqual(lines[0].end, stop - 1, "the column's last 永 goes down with the stop")
                continue
            }
            XCTAssertEqual(lines[0].end, stop + 1, "the stop ends the first column")
            let mark = try glyph(stop), before = try glyph(stop - 1)
            XCTAssertEqual(mark.x, before.x, accuracy: 0.01, "in the same column")
            XCTAssertEqual(mark.y - before.y, mark.size, accuracy: 0.5, "set solid after the character before it")
            XCTAssertLessThanOrEqual(before.y - 0.01, content.maxY, "the characters before it stand in the column")
            XCTAssertGreaterThan(mark.y, content.maxY + 0.01, "the stop stands past the column's foot")
            // The comma fits: it ends its column inside the content box, the column set solid.
            XCTAssertEqual(lines[1].end, comma + 1)
            let fitting = try glyph(comma)
            XCTAssertLessThanOrEqual(fitting.y, content.maxY + 0.01, "a comma that fits stays inside")
            XCTAssertEqual(fitting.y - (try glyph(comma - 1)).y, fitting.size, accuracy: 0.5)
        }
    }

    /// A justified column that kinsoku breaks short (」。 may not start a column, so the 永 before
    /// them goes down too) is spread over the whole measure: its characters are spaced evenly and
    /// its last one ends where a full column's does (the breaker counted the stretch between CJK
    /// characters; it used to be dropped when the line was set, leaving the column short).
    func testJustifiedColumnsBrokenShortFillTheMeasure() throws {
        let (_, measured) = try LayoutTests.layoutChapter(
            Self.hangingChapter("<p>" + String(repeating: "永", count: 300) + "</p>", hanging: "none"), name: "justify-measure")
        let firstLine = try XCTUnwrap(measured.pages.first?.lines.min { $0.start < $1.start })
        let capacity = firstLine.end - firstLine.start
        XCTAssertGreaterThan(capacity, 10)
        let body = "<p>" + String(repeating: "永", count: capacity - 1) + "」。" + String(repeating: "永", count: capacity * 2) + "</p>"
        let (_, chapter) = try LayoutTests.layoutChapter(Self.hangingChapter(body, hanging: "none"), name: "justify-short")
        let page = try XCTUnwrap(chapter.pages.first)
        let lines = page.lines.sorted { $0.start < $1.start }
        XCTAssertEqual(lines[0].end - lines[0].start, capacity - 2, "the column breaks two characters short")
        XCTAssertEqual(lines[1].end - lines[1].start, capacity, "the next column is full")
        let glyphs = Self.glyphs(page)
        func glyph(_ source: Int) throws -> Glyph { try XCTUnwrap(glyphs.first { $0.source == source }, "offset \(source)") }
        let short = try (lines[0].start..<lines[0].end).map(glyph)
        let full = try (lines[1].start..<lines[1].end).map(glyph)
        XCTAssertEqual(short.first!.y, full.first!.y, accuracy: 0.01, "both columns start at the top")
        XCTAssertEqual(short.last!.y, full.last!.y, accuracy: 0.5, "the short column ends where the full one does")
        let steps = zip(short, short.dropFirst()).map { $1.y - $0.y }
        let size = short[0].size
        XCTAssertGreaterThan(steps.min()!, size + 0.05, "its characters are spread apart")
        XCTAssertEqual(steps.max()! - steps.min()!, 0, accuracy: 0.01, "evenly")
        // A full column takes up the measure's remainder (less than one character) between its
        // 永 (」 and 。 stay set solid to the character before them: no break, no space).
        let fullSteps = zip(full, full.dropFirst()).map { $1.y - $0.y }
        XCTAssertLessThan(fullSteps.max()! - size, steps.min()! - size, "a full column is spread less")
        XCTAssertLessThan((fullSteps.max()! - size) * Double(full.count - 1), size, "by less than one character in all")
    }

    /// JAGAT's CSS test book (p-019, CSS Text 3): a justified box 10.1 em wide whose eleventh
    /// character is a comma and whose twenty-first from there a stop; under `allow-end` each hangs
    /// at the end of its line, past the box, instead of taking the character before it down.
    func testJAGATHangingPunctuationTest() throws {
        let book = try TestSupport.corpusFile("jagat-epub-css-test/epubcsstest_v2.epub")
        let (_, result) = try LayoutTests.layout(book.path)
        let chapter = try XCTUnwrap(result.chapters.first { $0.href.hasSuffix("p-019-css-text-3.xhtml") })
        let text = try Self.text(chapter)
        let sample = Array("あいうえおかきくけこ、さしすせそたちつてとなにぬねのはひふへほ。".utf16)
        let start = try XCTUnwrap((0...(text.count - sample.count)).first { Array(text[$0..<($0 + sample.count)]) == sample })
        let lines = chapter.pages.flatMap(\.lines).filter { $0.start >= start && $0.start < start + sample.count }.sorted { $0.start < $1.start }
        XCTAssertEqual(lines.map { $0.start - start }, [0, 11, 21], "こ、 and と stay on their lines")
        XCTAssertEqual(lines.map { $0.end - start }, [11, 21, 32])
        let page = try XCTUnwrap(chapter.pages.first { $0.lines.contains { $0.start == start } })
        let glyphs = Self.glyphs(page)
        for offset in [10, 31] {
            let mark = try XCTUnwrap(glyphs.first { $0.source == start + offset })
            let before = try XCTUnwrap(glyphs.first { $0.source == start + offset - 1 })
            let first = try XCTUnwrap(glyphs.first { $0.source == start + (offset == 10 ? 0 : 21) })
            // The box is 10.1 em wide from the line's first character: the mark starts at 10 em.
            XCTAssertEqual(mark.x - first.x, 10 * mark.size, accuracy: mark.size * 0.15, "offset \(offset) is set solid past ten characters")
            XCTAssertEqual(before.x - first.x, 9 * mark.size, accuracy: mark.size * 0.15)
        }
    }

    /// A chapter in columns holding a table and a colophon set horizontally (`writing-mode:
    /// horizontal-tb`), between two paragraphs.
    static func orthogonalChapter(mode: String) -> String {
        let paragraph = "<p>灯台の光は十二秒ごとに一回まわる。灯台守はその光を見あげた。</p>"
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="ja" lang="ja" style="writing-mode: \(mode)">
            <head><title>横組の表</title><style>
            table { writing-mode: horizontal-tb; border-collapse: collapse; }
            td { border: 1px solid black; padding: 2px 6px; }
            .colophon { writing-mode: horizontal-tb; border: 2px solid black; padding: 4px; }
            </style></head>
            <body>\(paragraph)
            <table><tr><td>Tide</td><td>12:40</td></tr><tr><td>Wind</td><td>NW 5</td></tr></table>
            <div class="colophon"><p>Printed at sea.</p><p>Second copy.</p></div>
            \(paragraph)</body></html>
            """
    }

    /// A table and a block set horizontally inside a chapter in columns stand upright, in the
    /// column flow at the columns' start, as wide as their content: their text is horizontal runs
    /// in lines across the page, one under the other, with the columns before them on one side
    /// and those after on the other (right and left in vertical-rl, the reverse in vertical-lr).
    func testHorizontalBlocksStandUprightAmongTheColumns() throws {
        for mode in ["vertical-rl", "vertical-lr"] {
            let (layout, chapter) = try LayoutTests.layoutChapter(Self.orthogonalChapter(mode: mode), name: "orthogonal-\(mode)")
            let content = layout.settings.contentRect
            let page = try XCTUnwrap(chapter.pages.first)
            XCTAssertEqual(chapter.pages.count, 1, mode)
            let text = try Self.text(chapter)
            func offset(_ word: String) throws -> Int {
                let units = Array(word.utf16)
                return try XCTUnwrap((0...(text.count - units.count)).first { Array(text[$0..<($0 + units.count)]) == units }, word)
            }
            let tide = try offset("Tide"), wind = try offset("Wind"), printed = try offset("Printed"), second = try offset("Second")
            XCTAssertEqual(page.lines.map(\.start), page.lines.map(\.start).sorted(), "\(mode): the page's lines in text order")
            let lines = page.lines
            func line(holding offset: Int) throws -> LineRecord {
                try XCTUnwrap(lines.first { $0.start <= offset && offset < $0.end }, "a line holds \(offset)")
            }
            let glyphs = Self.glyphs(page)
            // Their text: horizontal runs, left to right along lines across the page.
            for word in [tide, wind, printed, second] {
                let record = try line(holding: word)
                XCTAssertGreaterThan(record.rect.width, record.rect.height, "\(mode): a line across the page")
                let letters = glyphs.filter { $0.source >= word && $0.source < word + 4 }.sorted { $0.source < $1.source }
                XCTAssertEqual(letters.count, 4, mode)
                XCTAssertTrue(letters.allSatisfy { $0.orientation == .horizontal }, "\(mode): set upright, not turned")
                for (a, b) in zip(letters, letters.dropFirst()) {
                    XCTAssertGreaterThan(b.x, a.x, "\(mode): left to right")
                    XCTAssertEqual(b.y, a.y, accuracy: 0.01)
                }
                XCTAssertGreaterThanOrEqual(record.rect.x, content.x - 0.5)
                XCTAssertLessThanOrEqual(record.rect.maxX, content.maxX + 0.5)
            }
            // Rows and paragraphs one under the other; the table at the columns' start (the top).
            XCTAssertGreaterThan(try line(holding: wind).rect.y, try line(holding: tide).rect.y, mode)
            XCTAssertGreaterThan(try line(holding: second).rect.y, try line(holding: printed).rect.y, mode)
            XCTAssertLessThan(try line(holding: tide).rect.y - content.y, 20, "\(mode): at the top of the content box")
            // The table is as wide as its content, far narrower than the page.
            let tableLines = [try line(holding: tide), try line(holding: wind)]
            let tableLeft = tableLines.map(\.rect.x).min()!, tableRight = tableLines.map(\.rect.maxX).max()!
            XCTAssertLessThan(tableRight - tableLeft, content.width / 3, mode)
            // The columns before and after stand either side of the table and the colophon.
            let columnsBefore = lines.filter { $0.end <= tide }, columnsAfter = lines.filter { $0.start > second }
            XCTAssertFalse(columnsBefore.isEmpty || columnsAfter.isEmpty, mode)
            let colophon = [try line(holding: printed), try line(holding: second)]
            for record in columnsBefore + columnsAfter { XCTAssertGreaterThan(record.rect.height, record.rect.width, "\(mode): a column") }
            if mode == "vertical-rl" {
                XCTAssertLessThanOrEqual(tableRight, columnsBefore.map(\.rect.x).min()! + 0.5, "right of it, the columns before")
                XCTAssertLessThanOrEqual(colophon.map(\.rect.maxX).max()!, tableLeft + 0.5, "the colophon left of the table")
                XCTAssertGreaterThanOrEqual(colophon.map(\.rect.x).min()!, columnsAfter.map(\.rect.maxX).max()! - 0.5, "left of it, the columns after")
            } else {
                XCTAssertGreaterThanOrEqual(tableLeft, columnsBefore.map(\.rect.maxX).max()! - 0.5, "left of it, the columns before")
                XCTAssertGreaterThanOrEqual(colophon.map(\.rect.x).min()!, tableRight - 0.5, "the colophon right of the table")
                XCTAssertLessThanOrEqual(colophon.map(\.rect.maxX).max()!, columnsAfter.map(\.rect.x).min()! + 0.5, "right of it, the columns after")
            }
            // The cells' borders: strokes or boxes around the table's text, unturned.
            XCTAssertTrue(
                page.items.contains { item in
                    if case .box(let box) = item { return box.box.x <= tableLeft && box.box.maxX >= tableRight - 1 && box.box.height > 0 }
                    return false
                } || page.items.contains { item in
                    if case .stroke(let from, let to, _, _, _) = item { return abs(from.y - to.y) < 0.01 && to.x - from.x > 10 && from.x >= tableLeft - 20 }
                    return false
                }, "\(mode): the table's borders drawn across the page")
        }
    }
}
