import Foundation
import Quire
import QuireCore
import XCTest

/// The layout cache through the session API: a pagination from cached chapters is the pagination
/// of a fresh layout (the map byte for byte, every page's PNG byte for byte), with book fonts
/// (obfuscated ones too) and inline SVG found again, and nothing laid out.
final class LayoutCacheTests: XCTestCase {
    func paginate(_ book: Book, cache: LayoutCache?) throws -> Pagination {
        var settings = try PaginationSettings(profile: "kobo-clara")
        settings.layoutCache = cache
        return try Pagination(book, settings: settings)
    }

    func pages(_ pagination: Pagination) throws -> [[UInt8]] {
        var images: [[UInt8]] = []
        var address: PageAddress? = pagination.firstAddress
        while let page = address {
            images.append(try pagination.png(page, paint: PaintSettings()))
            address = try pagination.address(after: page)
        }
        return images
    }

    func testCachedChaptersPaintAndMapAsAFreshLayout() throws {
        for name in ["idpf-epub3-samples/wasteland-otf-obf.epub", "idpf-epub3-samples/sous-le-vent.epub", "misc-epubs/epubjs-alice.epub"] {
            let book = try Book.open(try TestSupport.corpusFile(name).path)
            let directory = try TestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = try LayoutCache(directory: directory.path, maxBytes: 1 << 30)

            let fresh = try paginate(book, cache: nil)
            let freshMap = try fresh.positionMap(jobs: 2).json.serializedBytes(pretty: false)
            let freshPages = try pages(fresh)

            // The map alone stores chapters without display lists: painting can't use them.
            let mapOnly = try paginate(book, cache: cache)
            XCTAssertEqual(try mapOnly.positionMap(jobs: 2).json.serializedBytes(pretty: false), freshMap, name)
            XCTAssertEqual(mapOnly.chapterCounts.laidOut, mapOnly.chapterCount, name)
            let painting = try paginate(book, cache: cache)
            XCTAssertEqual(try pages(painting), freshPages, name)
            XCTAssertEqual(painting.chapterCounts.fromCache, 0, "\(name): map-only entries carry no display lists")

            // Now every chapter is there with its display lists.
            let cached = try paginate(book, cache: cache)
            XCTAssertEqual(try pages(cached), freshPages, name)
            XCTAssertEqual(try cached.positionMap(jobs: 2).json.serializedBytes(pretty: false), freshMap, name)
            XCTAssertEqual(cached.chapterCounts.laidOut, 0, name)
            XCTAssertEqual(cached.chapterCounts.fromCache, cached.chapterCount, name)
        }
    }

    /// Every truncation of an entry is a miss (the chapter is laid out again), never a trap or a wrong map.
    func testDamagedEntriesAreMisses() throws {
        let book = try Book.open(try TestSupport.corpusFile("misc-epubs/epubjs-alice.epub").path)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try LayoutCache(directory: directory.path, maxBytes: 1 << 30)
        let first = try paginate(book, cache: cache)
        _ = try pages(first)
        let expected = try first.positionMap(jobs: 2).json.serializedBytes(pretty: false)
        let entries = try XCTUnwrap(FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String]).filter { $0.hasSuffix(".qlc") }.sorted()
        XCTAssertFalse(entries.isEmpty)
        let victim = directory.appendingPathComponent(entries[entries.count / 2])
        let whole = try Data(contentsOf: victim)
        for length in stride(from: 0, to: whole.count, by: max(1, whole.count / 40)) {
            try whole.prefix(length).write(to: victim)
            let pagination = try paginate(book, cache: cache)
            XCTAssertEqual(try pagination.positionMap(jobs: 2).json.serializedBytes(pretty: false), expected, "truncated to \(length) of \(whole.count) bytes")
            XCTAssertEqual(pagination.chapterCounts.laidOut, 1, "truncated to \(length)")
        }
    }
}
