import Dispatch
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
import QuirePaint
import QuirePDF
import QuirePositions
@testable import QuireLayout
import XCTest

/// The full-extent guard, proven on books the tests make: images without width/height, some
/// `loading="lazy"`, and a marked paragraph near the end of the chapter.
final class SettlingTests: XCTestCase {
    static let sizes = [(400, 600), (600, 300), (300, 900), (500, 500), (800, 400), (350, 700)]

    /// A book whose chapter has the six images; `withSizes` writes correct width/height attributes.
    /// The file is removed when `test` ends.
    static func book(
        withSizes: Bool, extraImages: String = "", extraEntries: [ZipWriter.Entry] = [], extraManifest: String = "", for test: XCTestCase
    ) throws -> URL {
        var book = TestBook()
        var manifest = ""
        var entries: [ZipWriter.Entry] = []
        var body = "<h1>The Guarded Chapter</h1>"
        for (index, (width, height)) in sizes.enumerated() {
            let rgb = [UInt8]((0..<(width * height)).flatMap { [UInt8(($0 * 7 + index * 40) & 0xFF), UInt8(index * 30), 128] })
            entries.append(.init(name: "OEBPS/images/i\(index).png", data: try ImageFixtures.writtenPNG(width: width, height: height, rgb: rgb)))
            manifest += #"<item id="i\#(index)" href="images/i\#(index).png" media-type="image/png"/>"#
            let attributes = withSizes ? #" width="\#(width)" height="\#(height)""# : ""
            let lazy = index % 2 == 1 ? #" loading="lazy""# : ""
            body += "<p>Paragraph \(index) before its picture, long enough to wrap across a couple of lines on a small page.</p>"
            body += #"<p><img src="images/i\#(index).png" alt="picture \#(index)"\#(attributes)\#(lazy)/></p>"#
        }
        body += extraImages
        body += String(repeating: "<p>Filler text so that the chapter runs over several pages after the images.</p>", count: 6)
        body += #"<p id="marked">The marked paragraph near the end.</p><p>The last words.</p>"#
        book.chapter = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>Guarded</title></head><body>\(body)</body></html>
            """
        book.extraManifest = manifest + extraManifest
        book.extraEntries = entries + extraEntries
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("quire-guard-\(withSizes)-\(UUID().uuidString).epub")
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        try book.write(to: url)
        return url
    }

    static func layout(_ url: URL, measurer: ImageMeasurer? = nil, limits: SettleLimits = SettleLimits()) throws -> BookLayout {
        try BookLayout(container: try EPUBContainer.open(path: url.path), settings: LayoutSettings(profile: PageProfile.named("eink-6")!), settleLimits: limits, measurer: measurer)
    }

    /// The spine index of the chapter and the text offset of the marked paragraph.
    static func marked(_ layout: BookLayout) throws -> (Int, Int) {
        let spineIndex = layout.container.publication.spine.firstIndex { layout.container.publication.item(for: $0)?.href == "chapter1.xhtml" }!
        let text = try BookAnchors(container: layout.container).position(spineIndex: spineIndex, id: "marked")
        return (spineIndex, text.offset)
    }

    func testSettledLayoutMatchesTheBookWithSizes() throws {
        let bare = try Self.layout(Self.book(withSizes: false, for: self))
        let sized = try Self.layout(Self.book(withSizes: true, for: self))
        let (spine, offset) = try Self.marked(bare)
        let settled = ChapterHandle(layout: bare, spineIndex: spine)
        let reference = ChapterHandle(layout: sized, spineIndex: spine)
        XCTAssertEqual(settled.pageCount, reference.pageCount, "last page")
        XCTAssertEqual(settled.pageIndex(containing: offset), reference.pageIndex(containing: offset), "page of the marked paragraph")
        XCTAssertEqual(settled.settled().settle.measured, 6)
        XCTAssertEqual(settled.settled().settle.passes, 1, "images measured from the box tree before lines are set")
        // Control: the provisional (first-pass) layout answers differently, so the test can fail.
        let provisional = bare.layoutChapter(spine, worker: LayoutWorker())
        XCTAssertNotEqual(provisional.pages.count, reference.pageCount, "without settling the last page would be wrong")
        let provisionalMarked = provisional.pages.lastIndex { $0.start <= offset }
        XCTAssertNotEqual(provisionalMarked, reference.pageIndex(containing: offset))
    }

    /// A measurer that blocks until released, recording when it was first asked.
    final class BlockingMeasurer: ImageMeasurer, @unchecked Sendable {
        let gate = DispatchSemaphore(value: 0)
        let inner: ImageMeasurer
        let lock = NSLock()
        private var callCount = 0
        /// Read under the lock the measuring threads write it under.
        var calls: Int {
            lock.lock()
            defer { lock.unlock() }
            return callCount
        }

        init(inner: ImageMeasurer) { self.inner = inner }

        func measure(_ path: String) -> ImageMeasurement {
            lock.lock()
            callCount += 1
            lock.unlock()
            gate.wait()
            gate.signal()
            return inner.measure(path)
        }
    }

    func testFirstPageDoesNotWaitForTheMeasurer() throws {
        let url = try Self.book(withSizes: false, for: self)
        let container = try EPUBContainer.open(path: url.path)
        let blocking = BlockingMeasurer(inner: ArchiveImageMeasurer(container: container))
        let layout = try BookLayout(container: container, settings: LayoutSettings(profile: PageProfile.named("eink-6")!), measurer: blocking)
        let (spine, offset) = try Self.marked(layout)
        let handle = ChapterHandle(layout: layout, spineIndex: spine)
        // Page 0 answers while every measurement is blocked.
        let first = handle.firstPage()
        XCTAssertEqual(first.start, 0)
        XCTAssertEqual(blocking.calls, 0, "page 0 never asked the measurer")
        // The full extent waits: it completes only after the measurer is released.
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var pages = 0 }
        let box = Box()
        DispatchQueue.global().async {
            box.pages = handle.pageCount
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 0.5), .timedOut, "the page count must wait for settling")
        XCTAssertGreaterThan(blocking.calls, 0)
        blocking.gate.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let reference = ChapterHandle(layout: try Self.layout(Self.book(withSizes: true, for: self)), spineIndex: spine)
        XCTAssertEqual(box.pages, reference.pageCount)
        XCTAssertEqual(handle.pageIndex(containing: offset), reference.pageIndex(containing: offset))
    }

    /// The wait is bounded: a measurer that never answers costs the time budget, not a hang.
    func testSettlingIsBoundedWhenTheMeasurerHangs() throws {
        let url = try Self.book(withSizes: false, for: self)
        let container = try EPUBContainer.open(path: url.path)
        let blocking = BlockingMeasurer(inner: ArchiveImageMeasurer(container: container))
        var limits = SettleLimits()
        limits.timeBudget = 0.3
        let layout = try BookLayout(container: container, settings: LayoutSettings(profile: PageProfile.named("eink-6")!), settleLimits: limits, measurer: blocking)
        let (spine, _) = try Self.marked(layout)
        let chapter = ChapterHandle(layout: layout, spineIndex: spine).settled()
        XCTAssertEqual(chapter.settle.measured, 0)
        XCTAssertEqual(chapter.settle.unresolved.count, 6)
        XCTAssertTrue(chapter.settle.unresolved.allSatisfy { $0.reason.contains("time budget") })
        XCTAssertTrue(chapter.warnings.contains { $0.code == "image" })
        blocking.gate.signal()
    }

    /// A corrupt image, a missing one and a header claiming 60000×60000: the chapter settles,
    /// renders with placeholders, the map lists the three with reasons, exit 0.
    func testBrokenImagesSettleWithReasons() throws {
        var huge = ImageFixtures.chunk("IHDR", ImageFixtures.ihdr(width: 60000, height: 60000, depth: 8, color: 2, interlaced: false))
        huge = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + huge + ImageFixtures.chunk("IEND", [])
        let extra = #"<p><img src="images/corrupt.png" alt="corrupt"/></p><p><img src="images/missing.png" alt="missing"/></p><p><img src="images/huge.png" alt="huge"/></p>"#
        // Listed in the manifest (missing.png has no entry in the archive): an unlisted image is
        // not shown at all, so it would never be measured.
        let listed = ["corrupt", "missing", "huge"].map { #"<item id="x-\#($0)" href="images/\#($0).png" media-type="image/png"/>"# }.joined()
        let url = try Self.book(
            withSizes: false, extraImages: extra,
            extraEntries: [
                .init(name: "OEBPS/images/corrupt.png", data: Array("not an image at all".utf8)),
                .init(name: "OEBPS/images/huge.png", data: huge),
            ], extraManifest: listed, for: self)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try TestSupport.quire("render", url.path, "--out", directory.path, "--profile", "eink-6", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("positions.json"))) as? [String: Any])
        let settle = try XCTUnwrap(map["settle"] as? [[String: Any]])
        let unresolved = settle.flatMap { $0["unresolved"] as? [[String: Any]] ?? [] }
        let reasons = Dictionary(uniqueKeysWithValues: unresolved.map { (($0["path"] as? String ?? "").split(separator: "/").last.map(String.init) ?? "", $0["reason"] as? String ?? "") })
        XCTAssertEqual(Set(reasons.keys), ["corrupt.png", "missing.png", "huge.png"])
        XCTAssertTrue(reasons["missing.png"]?.contains("not in the book") ?? false, reasons.description)
        XCTAssertTrue(reasons["huge.png"]?.contains("limit") ?? false, reasons.description)
        XCTAssertEqual(settle.map { $0["measured"] as? Int ?? 0 }.reduce(0, +), 6)
        // The three show as boxes with their alt text.
        let layout = try Self.layout(url)
        let (spine, _) = try Self.marked(layout)
        var alts: [String] = []
        for page in ChapterHandle(layout: layout, spineIndex: spine).settled().pages {
            for case .image(let box, let alt) in page.items where box.state == .missing {
                XCTAssertNotNil(alt, "alt text drawn for \(box.resource ?? "?")")
                alts.append(box.alt)
            }
        }
        XCTAssertEqual(Set(alts), ["corrupt", "missing", "huge"])
    }
}
