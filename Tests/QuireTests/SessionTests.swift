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
import QuireLayout
import QuirePaint
import QuirePDF
import QuirePositions
import XCTest

/// The session API: chapters on demand, the full-extent guard, the window of laid-out chapters,
/// and re-pagination that restores a reading position by its place in the text.
final class SessionTests: XCTestCase {
    static func pagination(_ path: String, profile: String) throws -> Pagination {
        try Pagination(Book.open(path), settings: PaginationSettings(profile: profile))
    }

    /// Page 0 comes back at once while every image measurement is blocked; the chapter's last
    /// page waits for settling and is then the true last page (the book with sizes agrees).
    func testLastPageWaitsForSettlingAndFirstPageDoesNot() throws {
        let url = try SettlingTests.book(withSizes: false, for: self)
        let book = try Book.open(url.path)
        let container = try EPUBContainer.open(path: url.path)
        let blocking = SettlingTests.BlockingMeasurer(inner: ArchiveImageMeasurer(container: container))
        var settings = try PaginationSettings(profile: "eink-6")
        settings.imageMeasurer = blocking
        let pagination = try Pagination(book, settings: settings)
        let chapter = try pagination.resolve(.progression(href: "chapter1.xhtml", 0)).spineIndex
        // Page 0, at once: painted from the provisional layout while the measurer is blocked.
        let first = try pagination.render(PageAddress(spineIndex: chapter, index: 0), provisional: true)
        XCTAssertGreaterThan(first.width, 0)
        XCTAssertEqual(blocking.calls, 0, "page 0 never asked the measurer")
        XCTAssertFalse(pagination.isSettled(chapter: chapter))
        final class Box: @unchecked Sendable { var last: PageAddress? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.last = try? pagination.resolve(.lastPage)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 0.5), .timedOut, "the last page must wait for settling")
        XCTAssertGreaterThan(blocking.calls, 0)
        blocking.gate.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let reference = try Pagination(Book.open(SettlingTests.book(withSizes: true, for: self).path), settings: PaginationSettings(profile: "eink-6"))
        let expected = try reference.resolve(.lastPage)
        XCTAssertEqual(box.last, expected)
        XCTAssertEqual(try pagination.pageCount(ofChapter: chapter), try reference.pageCount(ofChapter: chapter))
        // (SettlingTests shows that the provisional layout has another page count, so this can fail.)
    }

    /// War and Peace, 200 pages forward and 50 back, each painted: never more than 3 chapters
    /// laid out at once.
    func testChapterWindowOnWarAndPeace() throws {
        let path = try TestSupport.corpusFile("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub").path
        let pagination = try Self.pagination(path, profile: "eink-6")
        var address = pagination.firstAddress
        var chapters = Set<Int>()
        func visit() throws {
            let bitmap = try pagination.render(address, paint: PaintSettings())
            XCTAssertEqual(bitmap.width, 758)
            chapters.insert(address.spineIndex)
            XCTAssertLessThanOrEqual(pagination.laidOutChapters.now, 3)
        }
        for _ in 0..<200 {
            try visit()
            address = try XCTUnwrap(pagination.address(after: address))
        }
        for _ in 0..<50 {
            try visit()
            address = try XCTUnwrap(pagination.address(before: address))
        }
        XCTAssertGreaterThan(chapters.count, 5, "the walk crossed several chapters")
        XCTAssertLessThanOrEqual(pagination.laidOutChapters.peak, 3, "never more than 3 chapters laid out at once")
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        print("note: War and Peace walk: \(chapters.count) chapters visited, peak \(pagination.laidOutChapters.peak) laid out; process peak RSS \(usage.ru_maxrss / 1024) MB")
    }

    /// 100 random positions over three books (pictures without sizes, Japanese, Arabic): the page
    /// shown after re-paginating holds the same place in the text. Restoring by page number or by
    /// progression through the pages would fail this (checked: both miss for some positions).
    func testRepaginationRestoresByIdentity() throws {
        let books = [
            "standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub", "idpf-epub3-samples/jlreq-in-japanese.epub",
            "idpf-epub3-samples/regime-anticancer-arabic.epub",
        ]
        var random = SplitMix(seed: 42)
        var byIndexMisses = 0
        var byProgressMisses = 0
        var checked = 0
        for (bookIndex, relative) in books.enumerated() {
            let a = try Self.pagination(TestSupport.corpusFile(relative).path, profile: "kobo-clara")
            var phone = try PaginationSettings(profile: "phone")
            phone.layout.fontSizePt = 14
            let b = try a.repaginated(phone)
            let countA = a.pageCount()
            let countB = b.pageCount()
            XCTAssertNotEqual(countA, countB, "\(relative): the geometries paginate differently")
            let samples = bookIndex == 0 ? 34 : 33
            for _ in 0..<samples {
                let number = Int(random.next() % UInt64(countA)) + 1
                let pageA = try a.resolve(.page(number))
                let locator = try a.startLocator(of: pageA)
                let offset = try XCTUnwrap(locator.locations.offset)
                let pageB = try b.resolve(.locator(locator))
                XCTAssertTrue(try Self.page(pageB, of: b, holds: pageA.spineIndex, offset), "\(relative): page \(number) → \(pageB)")
                if try !Self.page(b.resolve(.page(min(number, countB))), of: b, holds: pageA.spineIndex, offset) { byIndexMisses += 1 }
                let byProgress = min(countB, max(1, Int((Double(number) / Double(countA) * Double(countB)).rounded())))
                if try !Self.page(b.resolve(.page(byProgress)), of: b, holds: pageA.spineIndex, offset) { byProgressMisses += 1 }
                checked += 1
            }
        }
        XCTAssertEqual(checked, 100)
        print("note: identity restore: \(checked) positions restored; by page number \(byIndexMisses) would miss, by progression through the pages \(byProgressMisses)")
        XCTAssertGreaterThan(byIndexMisses, 10, "restoring by page number would have failed")
        XCTAssertGreaterThan(byProgressMisses, 5, "restoring by progression through the pages would have failed")
    }

    /// Whether a page holds a text offset of a spine item: it starts at or before it, and the next
    /// page of that item starts after it.
    static func page(_ address: PageAddress, of pagination: Pagination, holds spineIndex: Int, _ offset: Int) throws -> Bool {
        guard address.spineIndex == spineIndex else { return false }
        let start = try pagination.startPosition(of: address).offset
        guard start <= offset else { return false }
        guard let next = try pagination.address(after: address), next.spineIndex == spineIndex else { return true }
        let nextStart = try pagination.startPosition(of: next).offset
        return offset < nextStart || nextStart == start
    }

    /// A position that names nothing is an error, never a nearby page.
    func testUnresolvableTargetsAreErrors() throws {
        let pagination = try Self.pagination(LayoutTests.sampleBook().path, profile: "kobo-clara")
        let total = pagination.pageCount()
        for target: Target in [
            .page(total + 1), .page(0), .cfi("epubcfi(/6/400!/4/2/1:0)"), .xpointer("/body/DocFragment[999]/body/p[1]/text().0"),
            .locator(Locator(href: "nowhere.xhtml", type: "application/xhtml+xml")), .tocTitle("No Such Chapter"), .label("no such label"),
            .totalProgression(1.5), .position(100_000, .readium),
        ] {
            XCTAssertThrowsError(try pagination.resolve(target), "\(target)") { error in
                XCTAssertEqual((error as? QuireError)?.exitCode, 3, "\(target): \(error)")
            }
        }
    }

    /// The session's pages and map are the CLI's: the same map bytes, the same PNG bytes.
    func testSessionMatchesTheCLI() throws {
        let book = try LayoutTests.sampleBook().path
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try TestSupport.quire("render", book, "--out", directory.path, "--profile", "kobo-clara", "--pages", "1-3,9", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        // `quire render` arranges pages as the book asks (spreads, flow); so does this session.
        var settings = try PaginationSettings(profile: "kobo-clara")
        settings.spreads = .auto
        settings.flow = .auto
        let pagination = try Pagination(Book.open(book), settings: settings)
        for number in [1, 2, 3, 9] {
            let png = try pagination.png(pagination.resolve(.page(number)))
            let file = try Data(contentsOf: directory.appendingPathComponent(String(format: "pages/%04d.png", number)))
            XCTAssertEqual(Data(png), file, "page \(number)")
        }
        let cliMap = try PositionMap(path: directory.appendingPathComponent("positions.json").path)
        var sessionMap = try pagination.positionMap()
        // The CLI's map names the images it wrote (only the pages --pages selected have one).
        for index in sessionMap.pages.indices {
            sessionMap.pages[index].image = cliMap.pages[index].image
        }
        XCTAssertNil(Self.firstDifference(sessionMap.serializedBytes(), cliMap.serializedBytes()))
        // Typed read and write give back the file's bytes.
        XCTAssertNil(Self.firstDifference(cliMap.serializedBytes(), Array(try Data(contentsOf: directory.appendingPathComponent("positions.json")))))
    }

    /// The first line where two JSON texts differ, or nil when they are the same bytes.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String? {
        guard a != b else { return nil }
        let left = String(decoding: a, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let right = String(decoding: b, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(left.count, right.count) where index >= left.count || index >= right.count || left[index] != right[index] {
            return "line \(index + 1): \(index < left.count ? String(left[index]) : "<end>") ≠ \(index < right.count ? String(right[index]) : "<end>")"
        }
        return "same lines, different bytes"
    }

    /// A book that cannot be opened gives its reason as a typed value.
    func testBookFailuresAreTyped() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        XCTAssertThrowsError(try Book.open(directory.appendingPathComponent("absent.epub").path)) { error in
            guard case .missing = BookFailure(error) else { return XCTFail("\(error)") }
        }
        let garbage = directory.appendingPathComponent("garbage.epub")
        try Data("not a zip at all".utf8).write(to: garbage)
        XCTAssertThrowsError(try Book.open(garbage.path)) { error in
            guard case .corrupt = BookFailure(error) else { return XCTFail("\(error)") }
        }
    }

    /// `/` in the viewer rests on these: the match's page (never the page before it), every match
    /// on that page marked in the painted image, and nothing marked where nothing matches.
    func testSearchLandsOnTheMatchAndMarksIt() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var book = TestBook()
        let filler = String(repeating: "<p>The quick brown fox jumps over the lazy dog, and again the fox runs.</p>", count: 80)
        book.chapter = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head>
            <body>\(filler)<p>Être ou ne pas être, said the needle.</p>\(filler)</body></html>
            """
        let url = directory.appendingPathComponent("search.epub")
        try book.write(to: url)
        let pagination = try Pagination(Book.open(url.path), settings: PaginationSettings(profile: "eink-6"))
        let found = try XCTUnwrap(try pagination.search("etre", from: nil, forward: true))
        XCTAssertGreaterThan(found.page.index, 0, "the match is past the first page")
        XCTAssertTrue(found.match.context.contains("Être ou ne pas"), found.match.context)
        XCTAssertTrue(try pagination.pageText(found.page).contains("Être"))
        XCTAssertNil(try pagination.search("ZEBRA", from: nil, forward: true))
        // Forward from the match's page finds "être" only if it is on a later page; backward from the end finds the last one.
        let last = try pagination.resolve(.lastPage)
        let back = try XCTUnwrap(try pagination.search("etre", from: last, forward: false))
        XCTAssertTrue(try pagination.pageText(back.page).lowercased().contains("tre, said"))
        let ranges = try pagination.highlights(of: "ETRE", on: found.page)
        XCTAssertEqual(ranges.map(\.count), [4, 4], "both Être and être, case and accent folded")

        func markerPixels(_ bitmap: Bitmap) -> Int {
            var count = 0
            for pixel in stride(from: 0, to: bitmap.bytes.count, by: bitmap.channels) {
                let (r, g, b) = (bitmap.bytes[pixel], bitmap.bytes[pixel + 1], bitmap.bytes[pixel + 2])
                if r > 240, g > 200, g < 235, b < 90 { count += 1 }
            }
            return count
        }
        var paint = PaintSettings()
        paint.highlights = ranges
        let marked = try pagination.render(found.page, paint: paint)
        let plain = try pagination.render(found.page)
        // Two words of ~4 letters at eink-6's body size: well over 200 pixels of marker, under 5% of the page.
        let pixels = markerPixels(marked)
        XCTAssertGreaterThan(pixels, 200)
        XCTAssertLessThan(pixels, marked.width * marked.height / 20)
        XCTAssertEqual(markerPixels(plain), 0)
        // A page without a match paints the same bytes with or without the (empty) marks.
        let other = PageAddress(spineIndex: found.page.spineIndex, index: 0)
        paint.highlights = try pagination.highlights(of: "etre", on: other)
        XCTAssertEqual(paint.highlights, [])
        XCTAssertEqual(try pagination.render(other, paint: paint).bytes, try pagination.render(other).bytes)
    }

}
