import Foundation
import XCTest

/// The memory bound of painting a whole book: each worker holds one chapter's display lists, its
/// page surface, PNG buffers and shaped-word cache, so peak RSS grows with the workers and the
/// largest chapter, not with the number of pages. At kobo-clara with 2 workers a book stays under
/// 200 MB: War and Peace (3,786 pages) peaks near 110 MB, Mahabharata (16,881 pages, 2,014
/// documents, whose positions are kept until the map is written) near 170 MB.
final class RenderMemoryTests: XCTestCase {
    static let boundKB = 200 * 1024

    func testWholeBookRendersUnderTheBound() throws {
        if ProcessInfo.processInfo.environment["QUIRE_SANITIZER"] != nil {
            // A sanitizer's shadow memory is most of the RSS it reports: the bound is of Quire's own.
            throw XCTSkip("peak RSS bound not checked under a sanitizer")
        }
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = [
            ("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub", 3_786),
            ("idpf-epub3-samples/mahabharata.epub", 16_881),
        ]
        for (path, pages) in books {
            let book = try TestSupport.corpusFile(path)
            let out = directory.appendingPathComponent("out")
            let rss = directory.appendingPathComponent("rss")
            let result = try TestSupport.run(
                URL(fileURLWithPath: "/usr/bin/time"),
                ["-f", "%M", "-o", rss.path, TestSupport.quireBinary.path, "render", book.path, "--out", out.path,
                 "--profile", "kobo-clara", "--jobs", "2", "--quiet"])
            XCTAssertEqual(result.status, 0, "\(path): \(result.stderr)")
            let written = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path)
            XCTAssertEqual(written.count, pages, "\(path): every page painted")
            let peakKB = Int(try String(contentsOf: rss, encoding: .utf8).split(separator: "\n").last.map(String.init) ?? "") ?? -1
            XCTAssertGreaterThan(peakKB, 0, "\(path): peak RSS measured")
            XCTAssertLessThan(peakKB, Self.boundKB, "\(path): painting every page peaked at \(peakKB) KB")
            try FileManager.default.removeItem(at: out)
        }
    }
}
