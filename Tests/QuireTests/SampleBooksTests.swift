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

/// The second sample book (pictures, Japanese, Hebrew, Arabic, greetings in eight more scripts,
/// Japanese in columns)
/// and the sample PDF, built by `Samples/build.sh` beside the first sample.
final class SampleBooksTests: XCTestCase {
    static func scriptsBook() throws -> URL {
        try LayoutTests.sampleBook().deletingLastPathComponent().appendingPathComponent("quire-scripts.epub")
    }

    static func samplePDF() throws -> URL {
        try LayoutTests.sampleBook().deletingLastPathComponent().appendingPathComponent("quire-sample.pdf")
    }

    func testEveryScriptIsSetWithRealGlyphs() throws {
        let (_, result) = try LayoutTests.layout(Self.scriptsBook().path)
        XCTAssertEqual(result.chapters.count, 6)
        for chapter in result.chapters {
            XCTAssertEqual(chapter.missingGlyphs, 0, "\(chapter.href) has .notdef glyphs")
            XCTAssertFalse(chapter.pages.isEmpty)
        }
        // Pictures: the PNG (no width/height in the markup) and the floated SVG are measured.
        let pictures = result.chapters[0]
        XCTAssertEqual(pictures.settle.images, 2)
        XCTAssertEqual(pictures.settle.measured, 2)
        XCTAssertEqual(pictures.settle.unresolved.count, 0)
        let boxes = pictures.pages.flatMap(\.items).compactMap { item -> Rect? in
            if case .image(let box, _) = item { return box.rect } else { return nil }
        }
        XCTAssertTrue(boxes.contains { abs($0.width / $0.height - 480.0 / 300.0) < 0.01 }, "the harbour keeps its 480×300 shape: \(boxes)")
        XCTAssertTrue(boxes.contains { abs($0.width / $0.height - 1) < 0.01 }, "the compass rose stays round: \(boxes)")

        // Hebrew: the last line of the last paragraph is short and starts at the right edge.
        let hebrew = try XCTUnwrap(result.chapters[2].pages.last)
        let line = try XCTUnwrap(hebrew.lines.last)
        let xs = hebrew.items.flatMap { item -> [Double] in
            guard case .glyphs(let run) = item, run.origin.y >= line.rect.y, run.origin.y <= line.rect.maxY else { return [] }
            return run.xs.map { run.origin.x + Double($0) }
        }
        let left = try XCTUnwrap(xs.min()) - line.rect.x
        let right = line.rect.maxX - (try XCTUnwrap(xs.max()))
        XCTAssertGreaterThan(left, right * 3, "right-to-left text starts at the right: left gap \(left), right gap \(right)")

        // Japanese: no line starts with a closing mark (kinsoku).
        let japanese = result.chapters[1]
        let text = DocumentText(try XCTUnwrap(japanese.document)).units
        let closing = Set("、。」』）〕・".utf16)
        for page in japanese.pages {
            for line in page.lines where line.start < text.count {
                XCTAssertFalse(closing.contains(text[line.start]), "a line starts with \(String(decoding: [text[line.start]], as: UTF16.self))")
            }
        }
    }

    func testScriptsSampleRoundTripsAtTwoGeometries() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try Self.scriptsBook().path
        for profile in ["kobo-clara", "phone"] {
            let (url, json) = try PositionTests.map(book, profile: profile, directory: directory)
            try PositionTests.checkRoundTrips(map: url, book: book)
            let toc = try XCTUnwrap(json["toc"] as? [[String: Any]])
            XCTAssertEqual(toc.count, 6)
            XCTAssertTrue(toc.allSatisfy { $0["page"] is Int }, "every TOC entry has a page")
            XCTAssertEqual((json["warnings"] as? [Any])?.count, 0, "\(json["warnings"] ?? [])")
        }
    }

    /// The sample PDF: labels i, 1, 2, 3; an outline; page 2 stored landscape with /Rotate 90 comes
    /// out portrait; the 840 pt spread splits into two halves in reading order.
    func testSamplePDF() throws {
        let pdf = try Self.samplePDF()
        let info = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/pdfinfo"), [pdf.path]).stdoutText
        XCTAssertTrue(info.contains("Pages:           4"), info)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("pdf")
        let result = try TestSupport.quire("render", pdf.path, "--out", out.path, "--dpi", "72", "--split", "ltr", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
        let pages = try XCTUnwrap(map["pages"] as? [[String: Any]])
        XCTAssertEqual(pages.map { $0["label"] as? String }, ["i", "1", "2", "2", "3"])
        XCTAssertEqual(pages.map { $0["sourcePage"] as? Int }, [1, 2, 3, 3, 4])
        XCTAssertEqual(pages.map { $0["half"] as? String }, ["whole", "whole", "first", "second", "whole"])
        let toc = try XCTUnwrap(map["toc"] as? [[String: Any]])
        XCTAssertEqual(toc.map { $0["title"] as? String }, ["Harbour Lights", "Tide Table", "The Chart", "Colophon"])
        XCTAssertEqual(toc.map { $0["page"] as? Int }, [1, 2, 3, 5])
        for page in 1...5 {
            let png = try Data(contentsOf: out.appendingPathComponent(String(format: "pages/%04d.png", page)))
            // IHDR: width and height, big-endian, at bytes 16–23. Every output page is portrait.
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            XCTAssertLessThan(width, height, "page \(page) is \(width)×\(height)")
        }
    }

    /// `--open-at` answers a page for a number, `last`, or a Locator, whatever way the Locator
    /// writes its numbers (a progression of 1 written as an integer is the chapter's end).
    func testOpenAtAnswersThePageOfALocator() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try LayoutTests.sampleBook().path
        func openAt(_ target: String) throws -> String {
            let result = try TestSupport.quire(
                "render", book, "--out", directory.appendingPathComponent("out").path, "--map-only", "--quiet", "--open-at", target)
            XCTAssertEqual(result.status, 0, result.stderr)
            return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try openAt("5"), "5")
        let pages = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("out/positions.json"))) as? [String: Any])
        let pageList = try XCTUnwrap(pages["pages"] as? [[String: Any]])
        XCTAssertEqual(try openAt("last"), String(pageList.count))
        // Chapter one (spine item 2) runs over the pages whose spineIndex is 2.
        let chapterPages = pageList.enumerated().filter { $0.element["spineIndex"] as? Int == 2 }.map { $0.offset + 1 }
        let first = try XCTUnwrap(chapterPages.first)
        let last = try XCTUnwrap(chapterPages.last)
        XCTAssertGreaterThan(last, first)
        let href = "text/chapter01.xhtml"
        XCTAssertEqual(try openAt(#"{"href":"\#(href)","locations":{"progression":0}}"#), String(first))
        XCTAssertEqual(try openAt(#"{"href":"\#(href)","locations":{"progression":1}}"#), String(last))
        XCTAssertEqual(try openAt(#"{"href":"\#(href)","locations":{"progression":1.0}}"#), String(last))
        let middle = Int(try openAt(#"{"href":"\#(href)","locations":{"progression":0.5}}"#)) ?? 0
        XCTAssertTrue(middle > first && middle < last, "\(middle) is inside \(first)…\(last)")
    }

    /// `--pages` past the end of the book: a range is cut at the end; nothing left is one usage error.
    func testPagesPastTheEnd() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try LayoutTests.sampleBook().path
        let count = try Pagination(Book.open(book), settings: PaginationSettings(profile: "kobo-clara")).pageCount()
        let out = directory.appendingPathComponent("out")
        let cut = try TestSupport.quire("render", book, "--out", out.path, "--pages", "\(count - 2)-500", "--quiet")
        XCTAssertEqual(cut.status, 0, cut.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path).count, 3)
        let beyond = try TestSupport.quire("render", book, "--out", directory.appendingPathComponent("beyond").path, "--pages", "500", "--quiet")
        XCTAssertEqual(beyond.status, 64, beyond.stderr)
        XCTAssertEqual(beyond.stderr.split(separator: "\n").count, 1, beyond.stderr)
        XCTAssertTrue(beyond.stderr.hasPrefix("quire: error: ") && beyond.stderr.contains("\(count) pages"), beyond.stderr)
    }
}
