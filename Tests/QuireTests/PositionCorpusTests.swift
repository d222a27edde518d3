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

final class PositionCorpusTests: XCTestCase {
    static func reflowableBooks() throws -> [URL] {
        try TestSupport.corpusEPUBs().filter { book in
            guard let container = try? EPUBContainer.open(path: book.path) else { return false }
            return container.publication.metadata.layout == .reflowable
        }
    }

    /// For every page of every reflowable corpus book at two geometries: page → Locator, CFI and
    /// XPointer → page; and page → the other geometry → back lands within one page.
    func testRoundTripsOnEveryReflowableBook() throws {
        let books = try Self.reflowableBooks()
        XCTAssertGreaterThan(books.count, 40)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for book in books {
            let (kobo, _) = try PositionTests.map(book.path, profile: "kobo-clara", directory: directory)
            let (phone, _) = try PositionTests.map(book.path, profile: "phone", directory: directory)
            try PositionTests.checkRoundTrips(map: kobo, book: book.path)
            try PositionTests.checkRoundTrips(map: phone, book: book.path)
            let a = try MapIndex(path: kobo.path)
            let b = try MapIndex(path: phone.path)
            // Cross-geometry, both ways round: there and back lands within one page of the start.
            // (MapIndex.page(matching:in:) can only fail that where a page of one map is related to
            // four or more of the other's; the message says when that is the cause.)
            for (from, to, names) in [(a, b, "kobo→phone→kobo"), (b, a, "phone→kobo→phone")] {
                var far: [String] = []
                for page in 1...from.pageCount {
                    // A page without text shares its start with the page after it (canonical).
                    let canonical = try from.page(of: from.startPosition(ofPage: page))
                    XCTAssertEqual(try from.page(matching: page, in: from), canonical, "same geometry is exact")
                    let there = try to.page(matching: page, in: from)
                    let back = try from.page(matching: there, in: to)
                    // A page without text (a plate as tall as the page) may come back as the page
                    // before it: within one page of itself, if not of its canonical page.
                    guard abs(back - canonical) > 1, abs(back - page) > 1 else { continue }
                    // Where one page of the other geometry holds three of these (text, a page-tall
                    // plate, its caption), the way back is to the first of them. Both the page and
                    // the way back then hold text of the page gone to.
                    let thereStart = try to.startPosition(ofPage: there)
                    let thereEnd = Position(spineIndex: thereStart.spineIndex, offset: max(to.pageEnds[there - 1] - 1, thereStart.offset))
                    let holding = try from.page(of: thereStart)...from.page(of: thereEnd)
                    if holding.count <= 3, holding.contains(back), holding.contains(canonical) { continue }
                    let related = try from.pagesRelated(toPage: there, of: to).count
                    far.append("\(page)→\(there)→\(back)" + (related >= 4 ? " (page \(there) is related to \(related) pages)" : ""))
                }
                print("cross-geometry \(book.lastPathComponent) \(names): \(from.pageCount - far.count)/\(from.pageCount) pages within one page")
                XCTAssertEqual(far, [], "\(book.lastPathComponent) \(names): " + far.prefix(5).joined(separator: ", "))
            }
            try? FileManager.default.removeItem(at: kobo.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: phone.deletingLastPathComponent())
        }
    }

    /// georgia-cfi's page-list targets are CFIs: every one resolves to a page.
    func testGeorgiaCFIPageList() throws {
        let corpus = try TestSupport.requireCorpus()
        let book = corpus.appendingPathComponent("idpf-epub3-samples/georgia-cfi.epub")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, json) = try PositionTests.map(book.path, directory: directory)
        let container = try EPUBContainer.open(path: book.path)
        let entries = Navigation.total(container.publication.navigation.pageList)
        XCTAssertEqual(entries, 7)
        XCTAssertTrue(container.publication.navigation.pageList.allSatisfy { $0.target?.fragment?.hasPrefix("epubcfi(") ?? false })
        let pageList = try XCTUnwrap(json["pageList"] as? [[String: Any]])
        XCTAssertEqual(pageList.count, entries, "every CFI target resolved")
        let warnings = (json["warnings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        XCTAssertFalse(warnings.contains("unresolved-page-list"))
        for entry in pageList {
            let result = try TestSupport.quire("locate", url.path, "--label", entry["label"] as! String)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stdoutText.split(separator: "\n").first.map(String.init), "\(entry["page"] as! Int)")
        }
    }

    /// Print page labels from page-lists (and pagebreak markers) are exposed through --label.
    func testPrintPageLabels() throws {
        let corpus = try TestSupport.requireCorpus()
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for path in [
            "idpf-epub3-samples/childrens-literature.epub", "idpf-epub3-samples/page-blanche.epub",
            "idpf-epub3-samples/haruko-html-jpeg.epub", "jagat-epub-css-test/epubrealpagelinktest.epub",
        ] {
            let (url, json) = try PositionTests.map(corpus.appendingPathComponent(path).path, directory: directory)
            let pageList = try XCTUnwrap(json["pageList"] as? [[String: Any]], path)
            XCTAssertFalse(pageList.isEmpty, "\(path) has print page labels")
            for entry in pageList.prefix(20) {
                let label = entry["label"] as! String
                let result = try TestSupport.quire("locate", url.path, "--label", label)
                XCTAssertEqual(result.status, 0, "\(path) label \(label): \(result.stderr)")
                XCTAssertEqual(result.stdoutText.split(separator: "\n").first.map(String.init), "\(entry["page"] as! Int)")
            }
        }
    }
}
