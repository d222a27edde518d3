import Foundation
import XCTest

/// Every corpus EPUB lays out at two device profiles and paints its first pages; books in the
/// scripts we cover show no .notdef boxes.
final class CorpusRenderTests: XCTestCase {
    /// Books whose text must come out with no missing glyphs (English, French, Hebrew, Arabic,
    /// Devanagari, Chinese and horizontal Japanese).
    static let fullyCovered = [
        "standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub", "standardebooks/herman-melville_moby-dick.epub",
        "standardebooks/walt-whitman_leaves-of-grass.epub", "standardebooks/jane-austen_pride-and-prejudice.epub",
        "standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub", "idpf-epub3-samples/moby-dick.epub",
        "idpf-epub3-samples/wasteland.epub", "idpf-epub3-samples/childrens-literature.epub", "idpf-epub3-samples/georgia-cfi.epub",
        "idpf-epub3-samples/GhV-oeb-page.epub", "idpf-epub3-samples/israelsailing.epub",
        "idpf-epub3-samples/regime-anticancer-arabic.epub", "idpf-epub3-samples/mahabharata.epub",
        "tdpf-epub3guide-zh-hant/01_Reflow_Text_Horizontal.epub", "idpf-epub3-samples/jlreq-in-japanese.epub",
    ]

    func testEveryEPUBRendersAtTwoProfiles() throws {
        let books = try TestSupport.corpusEPUBs()
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var missingGlyphs: [String: [String]] = [:]
        for book in books {
            let name = book.lastPathComponent
            for profile in ["kobo-clara", "phone"] {
                let out = directory.appendingPathComponent(profile)
                // Lay out the whole book; paint its first three pages.
                let result = try TestSupport.quire("render", book.path, "--out", out.path, "--profile", profile, "--pages", "1-3", "--quiet")
                XCTAssertEqual(result.status, 0, "\(name) at \(profile): \(result.stderr)")
                guard result.status == 0 else { continue }
                let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
                let pageCount = try XCTUnwrap(map["pageCount"] as? Int)
                XCTAssertGreaterThan(pageCount, 0, name)
                let pages = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path)
                XCTAssertEqual(pages.count, min(3, pageCount), "\(name): painted pages")
                let warnings = (map["warnings"] as? [[String: Any]]) ?? []
                missingGlyphs[book.path.components(separatedBy: "/corpus/").last!, default: []] += warnings.filter { $0["code"] as? String == "missing-glyphs" }.compactMap { $0["message"] as? String }
                try? FileManager.default.removeItem(at: out)
            }
        }
        for book in Self.fullyCovered {
            XCTAssertEqual(missingGlyphs[book] ?? [], [], "\(book) has .notdef glyphs")
        }
    }

    /// `--stats` names each measured image once, even when several chapters show it (Moby-Dick's
    /// Standard Ebooks logo is on the imprint and the colophon): a JSON object never repeats a key.
    func testStatsNameEachImageOnce() throws {
        let book = try TestSupport.corpusFile("standardebooks/herman-melville_moby-dick.epub")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stats = directory.appendingPathComponent("stats.json")
        let result = try TestSupport.quire(
            "render", book.path, "--out", directory.appendingPathComponent("out").path, "--map-only", "--quiet", "--stats", stats.path)
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = try String(contentsOf: stats, encoding: .utf8)
        XCTAssertEqual(text.components(separatedBy: "\"epub/images/logo.svg\"").count - 1, 1, text)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let sizes = try XCTUnwrap(object["imageSizes"] as? [String: [Double]])
        XCTAssertEqual(sizes["epub/images/logo.svg"], [220, 140])
        XCTAssertEqual(object["imagesMeasured"] as? Int, 4, "four measurements, three distinct images")
        XCTAssertEqual(sizes.count, 3)
    }
}
