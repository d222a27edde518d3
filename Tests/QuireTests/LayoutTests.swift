import Foundation
import Quire
import QuireCore
import QuireXML
import QuireContainer
import QuireDocument
import QuireStyle
import QuireText
import QuireImages
import QuirePreparation
import QuireLayout
import QuirePaint
import QuirePDF
import QuirePositions
import XCTest

final class LayoutTests: XCTestCase {
    static func sampleBook() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("quire-sample-\(getpid())")
        let book = directory.appendingPathComponent("quire-sample.epub")
        if !FileManager.default.fileExists(atPath: book.path) {
            let build = try TestSupport.run(
                URL(fileURLWithPath: "/bin/sh"), [TestSupport.packageRoot.appendingPathComponent("Samples/build.sh").path, directory.path])
            XCTAssertEqual(build.status, 0, build.stderr)
        }
        return book
    }

    static func layout(_ path: String, profile: String = "kobo-clara", jobs: Int = 1) throws -> (BookLayout, BookLayout.Result) {
        let container = try EPUBContainer.open(path: path)
        let layout = try BookLayout(container: container, settings: LayoutSettings(profile: PageProfile.named(profile)!))
        return (layout, layout.layout(jobs: jobs))
    }

    /// Lays out a one-chapter book whose chapter is `xhtml` (a whole document).
    static func layoutChapter(_ xhtml: String, profile: String = "kobo-clara", name: String = #function) throws -> (BookLayout, ChapterLayout) {
        let directory = try TestSupport.temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        var book = TestBook()
        book.chapter = xhtml
        let url = directory.appendingPathComponent("book.epub")
        try book.write(to: url)
        let (layout, result) = try Self.layout(url.path, profile: profile)
        return (layout, try XCTUnwrap(result.chapters.last))
    }

    /// Pages partition each chapter's text: the first starts at 0, each ends where the next begins,
    /// the last ends at the chapter's length, and every line lies inside its page.
    /// A new word with punctuation around it is measured from its parts and the characters either
    /// side of each seam; the width must be the one HarfBuzz gives the whole word, to the bit.
    func testComposedWordWidthsEqualShapedWidths() throws {
        let fonts = try FontCollection()
        let text = """
            “Call me Ishmael.” Some years ago—never mind how long precisely—having little or no money in my purse, \
            and nothing particular to interest me on shore, I thought I would sail about a little… “off?” (whale-ship); \
            ‘don’t’ [sic] ¡Hola! ¿Qué? «Oui» Plat\u{2060}—” word, words; Affluent— “We’ll “AVAST!” T., “—Yes.” 1851; (p. 42). V.
            """
        let faces = [
            fonts.bundledFace(generic: "serif", bold: false, italic: false), fonts.bundledFace(generic: "serif", bold: false, italic: true),
            fonts.bundledFace(generic: "serif", bold: true, italic: false), fonts.bundledFace(generic: "sans-serif", bold: false, italic: false),
            fonts.bundledFace(generic: "monospace", bold: false, italic: false),
        ]
        var composedWords = 0
        for face in faces {
            let composing = Shaper(keepsGlyphs: false)
            let whole = Shaper(keepsGlyphs: false)
            let id = composing.parameterID(ShapingParameters(face: face, size: 16))
            let wholeID = whole.parameterID(ShapingParameters(face: face, size: 16))
            for token in text.split(separator: " ") {
                let units = Array(token.utf16)[...]
                let measured = composing.measure(units, parameterID: id)
                XCTAssertEqual(measured.advance, whole.shape(units, parameterID: wholeID).advance, "\(token) in \(face.familyName)")
                if units.count <= 12, let first = units.first, let last = units.last, Shaper.isPunctuation(first) || Shaper.isPunctuation(last) {
                    composedWords += 1
                }
            }
        }
        XCTAssertGreaterThan(composedWords, 60)
    }

    func testPagesPartitionTheText() throws {
        let (_, result) = try Self.layout(Self.sampleBook().path)
        XCTAssertGreaterThan(result.pageCount, 10)
        for chapter in result.chapters {
            XCTAssertEqual(chapter.pages.first?.start, 0)
            XCTAssertEqual(chapter.pages.last?.end, chapter.textLength)
            for (page, next) in zip(chapter.pages, chapter.pages.dropFirst()) { XCTAssertEqual(page.end, next.start) }
            for page in chapter.pages {
                for line in page.lines {
                    XCTAssertGreaterThanOrEqual(line.start, page.start, "\(chapter.href) page \(page.indexInChapter)")
                    XCTAssertLessThanOrEqual(line.end, max(page.end, line.start), "\(chapter.href) page \(page.indexInChapter)")
                }
            }
        }
    }

    /// No text outside the content box: every line rectangle lies within the page less its margins.
    func testLinesStayInsideTheContentBox() throws {
        let path = try Self.sampleBook().path
        let container = try EPUBContainer.open(path: path)
        let settings = LayoutSettings(profile: PageProfile.named("phone")!)
        let layout = try BookLayout(container: container, settings: settings)
        let content = settings.contentRect
        for page in layout.layout(jobs: 2).chapters.flatMap(\.pages) {
            for line in page.lines {
                XCTAssertGreaterThanOrEqual(line.rect.y, content.y - 0.5)
                XCTAssertLessThanOrEqual(line.rect.maxY, content.maxY + 0.5, "page \(page.spineIndex)/\(page.indexInChapter)")
                XCTAssertGreaterThanOrEqual(line.rect.x, content.x - 0.5)
                XCTAssertLessThanOrEqual(line.rect.maxX, content.maxX + 0.5)
            }
        }
    }

    /// Same input, same output: display lists do not depend on the number of workers.
    func testDisplayListsAreDeterministic() throws {
        let path = try Self.sampleBook().path
        let one = try Self.layout(path, jobs: 1).1.chapters.flatMap(\.pages).map { $0.displayListJSON().serialized() }
        let two = try Self.layout(path, jobs: 2).1.chapters.flatMap(\.pages).map { $0.displayListJSON().serialized() }
        XCTAssertEqual(one, two)
    }

    /// Golden display lists for two sample pages (a chapter opening and the poem). Regenerate with
    /// QUIRE_UPDATE_GOLDEN=1 after an intended layout change, and look at the renders before committing.
    func testGoldenDisplayLists() throws {
        let (_, result) = try Self.layout(Self.sampleBook().path)
        let pages = result.chapters.flatMap(\.pages)
        let golden = TestSupport.packageRoot.appendingPathComponent("Tests/QuireTests/Golden")
        // By chapter and page in it: chapter one's opening, and the poem's page in chapter four.
        for (name, spineIndex, indexInChapter) in [("sample-kobo-clara-p3", 2, 0), ("sample-kobo-clara-p33", 5, 1)] {
            let page = try XCTUnwrap(pages.first { $0.spineIndex == spineIndex && $0.indexInChapter == indexInChapter })
            let actual = page.displayListJSON().serialized() + "\n"
            let file = golden.appendingPathComponent(name + ".json")
            if ProcessInfo.processInfo.environment["QUIRE_UPDATE_GOLDEN"] != nil {
                try actual.write(to: file, atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOf: file, encoding: .utf8)
            XCTAssertEqual(actual, expected, "\(name): display list changed (QUIRE_UPDATE_GOLDEN=1 regenerates)")
        }
    }

    /// PNG bytes are identical across runs and thread counts (the library's `Pagination.write`).
    func testRenderedBytesAreIdenticalAcrossJobs() throws {
        let path = try Self.sampleBook().path
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var paint = PaintSettings()
        paint.gray = true
        for (name, jobs) in [("a", 1), ("b", 2), ("c", 2)] {
            var request = WriteRequest(directory: directory.appendingPathComponent(name).path, paint: paint)
            request.jobs = jobs
            _ = try Pagination(Book.open(path), settings: PaginationSettings(profile: "eink-6")).write(request)
        }
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("a/pages").path).sorted()
        XCTAssertGreaterThan(pages.count, 10)
        for file in pages + ["../positions.json"] {
            let a = try Data(contentsOf: directory.appendingPathComponent("a/pages/" + file))
            XCTAssertEqual(a, try Data(contentsOf: directory.appendingPathComponent("b/pages/" + file)), file)
            XCTAssertEqual(a, try Data(contentsOf: directory.appendingPathComponent("c/pages/" + file)), file)
        }
    }

    /// A painted page has ink inside the content box and none in the margins.
    func testPaintedPageInkStaysInTheContentBox() throws {
        let path = try Self.sampleBook().path
        let (layout, result) = try Self.layout(path)
        let page = result.chapters[2].pages[1]
        let surface = Painter().paint(page, settings: PaintSettings())
        defer { PainterSurface.destroy(surface) }
        let ink = PainterSurface.inkBounds(surface)
        let content = layout.settings.contentRect
        XCTAssertNotNil(ink)
        if let ink {
            XCTAssertGreaterThanOrEqual(Double(ink.minX), content.x - 2)
            XCTAssertLessThanOrEqual(Double(ink.maxX), content.maxX + 2)
            XCTAssertGreaterThanOrEqual(Double(ink.minY), content.y - 2)
            XCTAssertLessThanOrEqual(Double(ink.maxY), content.maxY + 2)
        }
    }
}

final class PaginationTests: XCTestCase {
    /// Widows and orphans in War and Peace: no page ends with the first line of a paragraph alone
    /// (orphan) or starts with its last line alone (widow), in body paragraphs.
    func testNoWidowsOrOrphansInWarAndPeace() throws {
        let corpus = try TestSupport.requireCorpus()
        let path = corpus.appendingPathComponent("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub").path
        let container = try EPUBContainer.open(path: path)
        let layout = try BookLayout(container: container, settings: LayoutSettings(profile: PageProfile.named("kobo-clara")!))
        let result = layout.layout(jobs: 2, buildItems: false)
        var checked = 0
        var problems: [String] = []
        for chapter in result.chapters {
            for page in chapter.pages.dropLast() {
                guard let last = page.lines.last else { continue }
                // The last paragraph on the page continues onto the next one.
                if last.lineIndex < last.lineCount - 1 {
                    checked += 1
                    let onThisPage = page.lines.filter { $0.paragraph == last.paragraph }.count
                    if onThisPage < 2 && last.lineIndex + 1 == onThisPage { problems.append("orphan: \(chapter.href) page \(page.indexInChapter)") }
                }
            }
            for page in chapter.pages.dropFirst() {
                guard let first = page.lines.first, first.lineIndex > 0 else { continue }
                let onThisPage = page.lines.filter { $0.paragraph == first.paragraph }.count
                if onThisPage < 2 && first.lineIndex + onThisPage == first.lineCount { problems.append("widow: \(chapter.href) page \(page.indexInChapter)") }
            }
        }
        XCTAssertGreaterThan(checked, 1000, "paragraphs split across pages were examined")
        XCTAssertEqual(problems, [], problems.prefix(10).joined(separator: "\n"))
    }
}

extension LayoutTests {
    /// The root's background (or else body's) covers the whole page, as browsers paint it on the
    /// canvas; the root element's box (margins, max-width) holds body's.
    func testRootBackgroundCoversThePage() throws {
        let (layout, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title>
            <style>html { max-width: 10em; margin: 0 auto } body { background-color: #fff4e7; margin: 0 }</style></head>
            <body><p>Hello, a paragraph long enough to wrap inside ten ems of width.</p></body></html>
            """)
        let page = try XCTUnwrap(chapter.pages.first)
        guard case .fill(let rect, let color)? = page.items.first else { return XCTFail("the page starts with a fill") }
        XCTAssertEqual(rect, Rect(x: 0, y: 0, width: Double(page.width), height: Double(page.height)))
        XCTAssertEqual(color, Color(red: 0xff, green: 0xf4, blue: 0xe7))
        XCTAssertEqual(page.items.dropFirst().filter { if case .fill = $0 { return true } else { return false } }.count, 0, "body's own box is not filled again")
        // max-width on html: every line is at most 10em (16 px each at the profile's scale) wide, centred.
        let scale = layout.settings.profile.pixelsPerCSSPixel
        for line in page.lines { XCTAssertLessThanOrEqual(line.rect.width, 160 * scale + 0.5) }
        XCTAssertGreaterThan(page.lines.first?.rect.x ?? 0, Double(page.width) / 4)
    }
}

extension LayoutTests {
    /// Ruby: the annotation is set at half size, centred above its base, and raises its line.
    func testRubyAnnotationSitsAboveItsBase() throws {
        let (_, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="ja"><head><title>One</title></head>
            <body><p>夕方に<ruby>灯台守<rp>(</rp><rt>とうだいもり</rt><rp>)</rp></ruby>は火をともす。</p><p>海は静かだ。</p></body></html>
            """)
        XCTAssertEqual(chapter.missingGlyphs, 0)
        let page = try XCTUnwrap(chapter.pages.first)
        let runs = page.items.compactMap { item -> GlyphRun? in if case .glyphs(let run) = item { return run } else { return nil } }
        let annotation = try XCTUnwrap(runs.first { run in run.glyphs.count == 6 && runs.contains { abs($0.size - 2 * run.size) < 0.01 } })
        let base = try XCTUnwrap(runs.first { abs($0.size - 2 * annotation.size) < 0.01 && $0.origin.y > annotation.origin.y })
        XCTAssertLessThan(annotation.origin.y, base.origin.y - base.size * 0.8, "the annotation sits above the base text")
        // The base 灯台守 is the 4th–6th glyphs of the first line; the annotation is centred on it.
        let lineXs = runs.filter { abs($0.origin.y - base.origin.y) < 0.5 && abs($0.size - base.size) < 0.01 }
            .flatMap { run in run.xs.map { run.origin.x + Double($0) } }.sorted()
        XCTAssertGreaterThan(lineXs.count, 7)
        let baseLeft = lineXs[3]
        let baseRight = lineXs[6]
        let annotationCentre = annotation.origin.x + (Double(annotation.xs.last!) + annotation.size) / 2
        XCTAssertEqual(annotationCentre, (baseLeft + baseRight) / 2, accuracy: annotation.size * 0.6)
        // rp is hidden; the first line is taller than the second (the annotation raises it).
        XCTAssertEqual(page.lines.count, 2)
        XCTAssertGreaterThan(page.lines[0].rect.height, page.lines[1].rect.height)
    }
}

extension LayoutTests {
    /// text-emphasis: one mark per character at half size over the text (none over punctuation),
    /// in the emphasis colour; line-break and word-break reach ICU; overflow-wrap breaks a long word.
    func testEmphasisMarksAndBreakingProperties() throws {
        let (_, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="ja"><head><title>One</title>
            <style>
            em { font-style: normal; -epub-text-emphasis-style: filled sesame; -epub-text-emphasis-color: #ff0000 }
            p.wrap { overflow-wrap: break-word } p.keep { word-break: keep-all }
            </style></head>
            <body><p>これは<em>大切、</em>です。</p>
            <p class="wrap" xml:lang="en">Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</p>
            <p xml:lang="en">Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</p></body></html>
            """)
        let page = try XCTUnwrap(chapter.pages.first)
        let runs = page.items.compactMap { item -> GlyphRun? in if case .glyphs(let run) = item { return run } else { return nil } }
        let red = Color(red: 255, green: 0, blue: 0)
        let marks = try XCTUnwrap(runs.first { $0.color == red })
        XCTAssertEqual(marks.glyphs.count, 2, "大 and 切 get a mark, 、 does not")
        let text = try XCTUnwrap(runs.first { $0.color != red && $0.origin.y > marks.origin.y })
        XCTAssertEqual(marks.size * 2, text.size, accuracy: 0.01)
        XCTAssertLessThan(marks.origin.y, text.origin.y - text.size * 0.8)
        // The long word breaks across lines only where overflow-wrap allows it.
        let lines = page.lines
        let wrapped = lines.filter { $0.paragraph == 1 }
        let unwrapped = lines.filter { $0.paragraph == 2 }
        XCTAssertGreaterThan(wrapped.count, 1, "overflow-wrap: break-word breaks the long word")
        XCTAssertEqual(unwrapped.count, 1, "without it the word stays whole")
    }
}

extension LayoutTests {
    /// ::first-line styles exactly the first line: bigger red small caps there, plain text after,
    /// and an `em` keeps its italics on the first line.
    func testFirstLine() throws {
        let (_, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title>
            <style>p::first-line { color: #ff0000; font-variant: small-caps; font-size: 1.1em; text-transform: lowercase }</style></head>
            <body><p>Call me <em>Ishmael</em>. Some years ago, never mind how long precisely, having little or no money in my
            purse, and nothing particular to interest me on shore, I thought I would sail about a little and see the
            watery part of the world.</p></body></html>
            """)
        let page = try XCTUnwrap(chapter.pages.first)
        XCTAssertGreaterThan(page.lines.count, 2)
        let runs = page.items.compactMap { item -> GlyphRun? in if case .glyphs(let run) = item { return run } else { return nil } }
        let firstLine = page.lines[0].rect
        let red = Color(red: 255, green: 0, blue: 0)
        for run in runs {
            let onFirstLine = run.origin.y >= firstLine.y && run.origin.y <= firstLine.maxY
            XCTAssertEqual(run.color == red, onFirstLine, "run at y \(run.origin.y)")
        }
        XCTAssertTrue(runs.contains { $0.color == red && $0.syntheticItalic || $0.color == red && $0.face.isItalic }, "the em keeps its italics")
        let sizes = Set(runs.map(\.size))
        XCTAssertEqual(sizes.count, 2, "the first line is 1.1 times the rest")
        // The lines still partition the text.
        for (line, next) in zip(page.lines, page.lines.dropFirst()) { XCTAssertLessThanOrEqual(line.end, next.start) }
    }
}

extension LayoutTests {
    /// Lists nested eight deep on a phone: indentation gives way so every line keeps 8 em.
    func testNestedIndentationKeepsAMinimumMeasure() throws {
        let open = String(repeating: "<ul><li>", count: 8)
        let close = String(repeating: "</li></ul>", count: 8)
        let (layout, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title><style>li { margin-left: 2em }</style></head>
            <body>\(open)Deep in the list, this item is long enough to wrap over several lines of a narrow phone page.\(close)</body></html>
            """, profile: "phone")
        let page = try XCTUnwrap(chapter.pages.first)
        let settings = layout.settings
        let em = settings.fontSizePt * 96 / 72 * settings.profile.pixelsPerCSSPixel
        let contentRight = Double(page.width) - settings.marginPixels
        XCTAssertGreaterThan(page.lines.count, 1)
        for line in page.lines { XCTAssertGreaterThanOrEqual(contentRight - line.rect.x, 8 * em - 1, "line at x \(line.rect.x)") }
    }
}

extension LayoutTests {
    /// A table whose columns cannot fit their longest words on the page: the words break inside
    /// their cells, so no text runs into the next column or off the page.
    func testTooWideTableKeepsTextInItsCells() throws {
        let words = ["Definitions", "Schema.org", "Correspondence", "Interoperability", "Bibliographic", "Characteristics", "Representation", "Classification"]
        let row = words.map { "<td>\($0)</td>" }.joined()
        let (layout, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head>
            <body><table><tr>\(row)</tr><tr>\(row)</tr></table></body></html>
            """, profile: "phone")
        let page = try XCTUnwrap(chapter.pages.first)
        let contentRight = Double(page.width) - layout.settings.marginPixels
        let runs = page.items.compactMap { item -> GlyphRun? in if case .glyphs(let run) = item { return run } else { return nil } }
        XCTAssertGreaterThan(runs.count, words.count)
        // Glyph starts in visual order along each row never step back: no cell overlaps the next.
        for run in runs { XCTAssertLessThanOrEqual(run.origin.x + Double(run.xs.last ?? 0), contentRight, "a glyph starts past the page's content edge") }
        let firstRow = runs.filter { abs($0.origin.y - runs[0].origin.y) < 0.5 }.sorted { $0.origin.x < $1.origin.x }
        for (left, right) in zip(firstRow, firstRow.dropFirst()) {
            XCTAssertLessThan(left.origin.x + Double(left.xs.last ?? 0), right.origin.x, "cells overlap")
        }
    }
}

extension LayoutTests {
    /// Text flows around a float line by line, even where lines are taller than the strut: a line
    /// beside the float starts after it, and the first line below it takes the full measure.
    func testLinesBesideAFloatAreExact() throws {
        let (_, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title>
            <style>svg { float: left } big { font-size: 2.2em }</style></head>
            <body><p><svg xmlns="http://www.w3.org/2000/svg" width="96" height="112" viewBox="0 0 96 112"><rect width="96" height="112" fill="#ccc"/></svg>Words <big>tall</big> and short, <big>tall</big> again and then short words for a while, <big>tall</big>
            once more, and a long run of ordinary words that keeps going past the bottom of the float so that the lines
            below it should come back to the full measure of the page, <big>tall</big> words and all, for a good few lines more.</p></body></html>
            """)
        let page = try XCTUnwrap(chapter.pages.first)
        let float = try XCTUnwrap(page.items.compactMap { item -> Rect? in if case .image(let box, _) = item { return box.rect } else { return nil } }.first)
        let lines = page.lines
        XCTAssertGreaterThan(lines.count, 6)
        let left = lines.map(\.rect.x).min()!
        var beside = 0
        var below = 0
        for line in lines {
            let overlaps = line.rect.y < float.maxY - 0.5 && line.rect.maxY > float.y + 0.5
            if overlaps {
                XCTAssertGreaterThanOrEqual(line.rect.x, float.maxX - 0.5, "a line beside the float at y \(line.rect.y)")
                beside += 1
            } else {
                XCTAssertEqual(line.rect.x, left, accuracy: 0.5, "a line clear of the float at y \(line.rect.y)")
                below += 1
            }
        }
        XCTAssertGreaterThan(beside, 1)
        XCTAssertGreaterThan(below, 1)
    }
}

extension LayoutTests {
    /// A floated span (a poem's line number) sits at the right edge beside its line, not on a line
    /// of its own; and backgrounds of floats and table cells are painted under their text.
    func testFloatedSpanAndBackgroundsUnderText() throws {
        let (layout, chapter) = try Self.layoutChapter(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title>
            <style>span.lnum { float: right; background-color: #eeeeee } td { background-color: #ffeecc }</style></head>
            <body><div>And went on in sunlight,<span class="lnum">10</span></div><div>And drank coffee.</div>
            <table><tr><td>cell</td></tr></table></body></html>
            """)
        let page = try XCTUnwrap(chapter.pages.first)
        let runs = page.items.enumerated().compactMap { index, item -> (Int, GlyphRun)? in
            if case .glyphs(let run) = item { return (index, run) } else { return nil }
        }
        let number = try XCTUnwrap(runs.first { $0.1.glyphs.count == 2 })
        let firstLine = try XCTUnwrap(runs.first { $0.1.glyphs.count > 2 })
        XCTAssertEqual(number.1.origin.y, firstLine.1.origin.y, accuracy: 1, "the number sits on its verse's line")
        let contentRight = Double(page.width) - layout.settings.marginPixels
        XCTAssertGreaterThan(number.1.origin.x, contentRight - 3 * number.1.size, "at the right edge")
        XCTAssertEqual(page.lines.filter { $0.end - $0.start == 2 }.count, 1, "the number is one line of its own box")
        XCTAssertEqual(page.lines.count, 4, "two verse lines, the number, the cell")
        // Each background comes before the text over it.
        let fills = page.items.enumerated().compactMap { index, item -> (Int, Rect)? in
            if case .fill(let rect, _) = item { return (index, rect) } else { return nil }
        }
        for (index, run) in runs {
            for (fillIndex, rect) in fills where rect.x <= run.origin.x && run.origin.x < rect.maxX && rect.y <= run.origin.y && run.origin.y <= rect.maxY {
                XCTAssertLessThan(fillIndex, index, "a background is painted over text")
            }
        }
    }
}
