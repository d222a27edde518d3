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
}
