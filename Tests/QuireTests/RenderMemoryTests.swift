import Foundation
import XCTest

/// The memory bound of painting a whole book: each worker holds one chapter's display lists, its
/// page surface, PNG buffers and shaped-word cache, so peak RSS grows with the workers and the
/// largest chapter, not with the number of pages. At kobo-clara with 2 workers a book stays under
/// 200 MB: War and Peace (3,786 pages) peaks near 110 MB, Mahabharata (16,881 pages, 2,014
/// documents, whose positions are kept until the map is written) near 170 MB.
final class RenderMemoryTests: XCTestCase {
    /// 200 MB, times the shadow memory of a sanitizer build.
    static let boundKB = 200 * 1024 * TestSupport.sanitizerMemoryFactor

    func testWholeBookRendersUnderTheBound() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = [
            ("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub", 3_786),
            ("idpf-epub3-samples/mahabharata.epub", 16_881),
        ]
        for (path, pages) in books {
            let book = try TestSupport.corpusFile(path)
            let out = directory.appendingPathComponent("out")
            let (result, peakKB) = try TestSupport.quireMeasuringPeak(
                ["render", book.path, "--out", out.path, "--profile", "kobo-clara", "--jobs", "2", "--quiet"])
            XCTAssertEqual(result.status, 0, "\(path): \(result.stderr)")
            let written = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path)
            XCTAssertEqual(written.count, pages, "\(path): every page painted")
            XCTAssertGreaterThan(peakKB, 0, "\(path): peak RSS measured")
            XCTAssertLessThan(peakKB, Self.boundKB, "\(path): painting every page peaked at \(peakKB) KB")
            try FileManager.default.removeItem(at: out)
        }
    }
}
