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

final class FixedLayoutTests: XCTestCase {
    static func render(_ path: String, pages: String = "1-20") throws -> (URL, [String: Any]) {
        let corpus = try TestSupport.requireCorpus()
        let directory = try TestSupport.temporaryDirectory(path.replacingOccurrences(of: "/", with: "-"))
        var request = WriteRequest(directory: directory.path, paint: PaintSettings())
        request.pages = try PageRanges(parsing: pages)
        _ = try Pagination(Book.open(corpus.appendingPathComponent(path).path), settings: PaginationSettings(profile: "kobo-clara")).write(request)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("positions.json"))) as? [String: Any])
        return (directory, map)
    }

    /// Share of pixels that are not background (white) in a rendered page.
    static func ink(_ file: URL) throws -> Double {
        let bytes = [UInt8](try Data(contentsOf: file))
        let decoded = try ImageDecoder.decode(bytes, info: ImageInfo.measure(bytes), maxWidth: 200, maxHeight: 200)
        var inked = 0
        for y in 0..<decoded.height {
            for x in 0..<decoded.width where decoded.pixel(x: x, y: y) & 0xFFFFFF < 0xF0F0F0 { inked += 1 }
        }
        return Double(inked) / Double(decoded.width * decoded.height)
    }

    /// Manga, right to left: one page per fixed-layout item, spreads recorded, pictures drawn.
    func testHarukoMangaPages() throws {
        let (directory, map) = try Self.render("idpf-epub3-samples/haruko-html-jpeg.epub")
        defer { try? FileManager.default.removeItem(at: directory) }
        XCTAssertEqual((map["book"] as? [String: Any])?["pageProgression"] as? String, "rtl")
        let spine = try XCTUnwrap(map["spine"] as? [[String: Any]])
        XCTAssertEqual(spine.count, 13)
        let fixed = spine.filter { $0["layout"] as? String == "pre-paginated" }
        XCTAssertEqual(fixed.count, 12)
        XCTAssertTrue(fixed.allSatisfy { $0["pageCount"] as? Int == 1 }, "one page per fixed-layout item")
        let pages = try XCTUnwrap(map["pages"] as? [[String: Any]])
        let spreads = pages.prefix(12).compactMap { $0["spread"] as? String }
        XCTAssertEqual(spreads.count, 12)
        XCTAssertEqual(Set(spreads), ["page-spread-left", "page-spread-right"])
        for page in 1...12 {
            XCTAssertGreaterThan(try Self.ink(directory.appendingPathComponent(String(format: "pages/%04d.png", page))), 0.05, "page \(page) shows its picture")
        }
        // The colophon is reflowable in a pre-paginated book: reflowable content, set at the
        // device's page and the reader's font size (W3C lay-page-layout-both), on four pages.
        XCTAssertEqual(map["pageCount"] as? Int, pages.count)
        XCTAssertEqual(pages.count, 16)
        let colophon = pages[12]
        XCTAssertTrue(pages[12...].allSatisfy { $0["spineIndex"] as? Int == 12 })
        XCTAssertEqual(colophon["spread"] as? String, "page-spread-left")
        XCTAssertEqual((pages.last?["end"] as? [String: Any])?["progression"] as? Double, 1, "the whole colophon is on its pages")
        XCTAssertGreaterThan(try Self.ink(directory.appendingPathComponent("pages/0013.png")), 0.02, "the colophon's text is drawn")
        let warnings = (map["warnings"] as? [Any] ?? []).map { "\($0)" }
        XCTAssertFalse(warnings.contains { $0.contains("overflows") }, "\(warnings)")
    }

    /// A reflowable item in a pre-paginated book flows onto as many device pages as it needs at
    /// the reader's font size; nothing is cut.
    func testReflowableItemInFixedBookFlows() throws {
        let corpus = try TestSupport.requireCorpus()
        let directory = try TestSupport.temporaryDirectory("haruko-large")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try TestSupport.quire(
            "render", corpus.appendingPathComponent("idpf-epub3-samples/haruko-html-jpeg.epub").path, "--out", directory.path,
            "--profile", "kobo-clara", "--font-size", "24", "--map-only", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("positions.json"))) as? [String: Any])
        let pages = try XCTUnwrap(map["pages"] as? [[String: Any]])
        XCTAssertGreaterThan(pages.count, 13)
        let colophon = pages.dropFirst(12)
        XCTAssertTrue(colophon.allSatisfy { $0["spineIndex"] as? Int == 12 })
        let starts = colophon.compactMap { ($0["start"] as? [String: Any])?["offset"] as? Int }
        XCTAssertEqual(starts, starts.sorted())
        XCTAssertEqual(Set(starts).count, starts.count, "each frame page starts further on")
        XCTAssertEqual((colophon.last?["end"] as? [String: Any])?["progression"] as? Double, 1)
    }

    /// SVG pages: inline SVG (sous-le-vent) and SVG documents in the spine (svg-in-spine) draw their art.
    func testSVGPages() throws {
        let (vent, ventMap) = try Self.render("idpf-epub3-samples/sous-le-vent.epub")
        defer { try? FileManager.default.removeItem(at: vent) }
        XCTAssertEqual(ventMap["pageCount"] as? Int, 13)
        XCTAssertGreaterThan(try Self.ink(vent.appendingPathComponent("pages/0001.png")), 0.001)
        let (spine, spineMap) = try Self.render("idpf-epub3-samples/svg-in-spine.epub")
        defer { try? FileManager.default.removeItem(at: spine) }
        XCTAssertEqual(spineMap["pageCount"] as? Int, 6)
        for page in 1...6 {
            XCTAssertGreaterThan(try Self.ink(spine.appendingPathComponent(String(format: "pages/%04d.png", page))), 0.01, "svg-in-spine page \(page)")
        }
    }
}
