import Foundation
import XCTest

/// A render's output appears whole or not at all: it is built beside `--out` and swapped in, so a
/// reader of the directory (a client, a later run) never sees pages the map beside them does not
/// describe, and files Quire did not write are never deleted.
final class OutputTests: XCTestCase {
    /// Every file under a directory, by relative path (nil when the directory is absent).
    static func snapshot(_ directory: URL) throws -> [String: Data]? {
        guard FileManager.default.fileExists(atPath: directory.path) else { return nil }
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            files[String(url.path.dropFirst(directory.path.count + 1))] = try Data(contentsOf: url)
        }
        return files
    }

    /// The names a directory holds besides `out` and the references: a run's leftovers.
    static func leftovers(in directory: URL, besides kept: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !kept.contains($0) }.sorted()
    }

    /// Renders a book whole into `out` (a reference to compare with).
    static func render(_ book: URL, _ out: URL, _ extra: [String]) throws {
        let result = try TestSupport.run(TestSupport.quireBinary, ["render", book.path, "--out", out.path, "--quiet"] + extra)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testRenderingOverALongerRenderLeavesOnlyTheNewBook() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bookA = try LayoutTests.sampleBook()
        let bookB = try SampleBooksTests.scriptsBook()
        let out = directory.appendingPathComponent("out")
        let referenceB = directory.appendingPathComponent("reference-b")
        try Self.render(bookA, out, [])
        try Self.render(bookB, referenceB, [])
        let pagesA = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path).count
        let pagesB = try FileManager.default.contentsOfDirectory(atPath: referenceB.appendingPathComponent("pages").path).count
        XCTAssertGreaterThan(pagesA, pagesB, "book A's render is the longer one")

        try Self.render(bookB, out, [])
        let written = try XCTUnwrap(Self.snapshot(out))
        XCTAssertEqual(written.keys.sorted(), try XCTUnwrap(Self.snapshot(referenceB)).keys.sorted(), "exactly B's pages and map")
        XCTAssertEqual(written, try Self.snapshot(referenceB))
        XCTAssertEqual(try Self.leftovers(in: directory, besides: ["out", "reference-b"]), [], "no partial left beside --out")
    }

    func testOutputWithOtherFilesIsRefusedUnlessForced() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try SampleBooksTests.scriptsBook()
        let out = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out.appendingPathComponent("notes"), withIntermediateDirectories: true)
        try Data("mine\n".utf8).write(to: out.appendingPathComponent("notes/todo.txt"))
        try Data("also mine\n".utf8).write(to: out.appendingPathComponent("cover.png"))

        let refused = try TestSupport.quire("render", book.path, "--out", out.path, "--quiet")
        XCTAssertEqual(refused.status, 73, refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1)
        XCTAssertTrue(refused.stderr.hasPrefix("quire: error: "), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--force"), refused.stderr)
        XCTAssertEqual(try Self.snapshot(out)?.keys.sorted(), ["cover.png", "notes/todo.txt"], "nothing written, nothing removed")
        XCTAssertEqual(try Self.leftovers(in: directory, besides: ["out"]), [])

        // Forced: the render lands beside the other files, which are all still there, twice over.
        for _ in 0..<2 {
            let forced = try TestSupport.quire("render", book.path, "--out", out.path, "--quiet", "--force")
            XCTAssertEqual(forced.status, 0, forced.stderr)
            let files = try XCTUnwrap(Self.snapshot(out))
            XCTAssertEqual(files["notes/todo.txt"], Data("mine\n".utf8))
            XCTAssertEqual(files["cover.png"], Data("also mine\n".utf8))
            XCTAssertNotNil(files["positions.json"])
            XCTAssertNotNil(files["pages/0001.png"])
        }

        // An --out that is a file is refused, and the file is left alone.
        let file = directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let notDirectory = try TestSupport.quire("render", book.path, "--out", file.path, "--quiet", "--force")
        XCTAssertEqual(notDirectory.status, 73, notDirectory.stderr)
        XCTAssertEqual(try Data(contentsOf: file), Data("x".utf8))
    }

    /// `kill -9` at 20 moments spread over a render: the directory holds the earlier render whole
    /// or the new one whole (byte for byte the references), or, for a first render, nothing.
    /// The moments come from a fixed seed; where they land in the run depends on the machine.
    func testKilledRenderLeavesTheOldOutputOrTheNewOne() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A's render (47 pages) is the longer one; B's (20 pages) runs on one worker, so it is
        // killed while some of its pages are written and others are not.
        let bookA = try LayoutTests.sampleBook()
        let bookB = try SampleBooksTests.scriptsBook()
        let referenceA = directory.appendingPathComponent("reference-a")
        let referenceB = directory.appendingPathComponent("reference-b")
        let argumentsA: [String] = []
        let argumentsB = ["--font-size", "20", "--jobs", "1"]
        try Self.render(bookA, referenceA, argumentsA)
        let started = Date()
        try Self.render(bookB, referenceB, argumentsB)
        let duration = Date().timeIntervalSince(started)
        let expectedA = try XCTUnwrap(Self.snapshot(referenceA))
        let expectedB = try XCTUnwrap(Self.snapshot(referenceB))

        var generator = SplitMix64(seed: 21)
        var outcomes: [String: Int] = [:]
        for attempt in 0..<20 {
            let out = directory.appendingPathComponent("out-\(attempt % 2)")
            // Even attempts render over A's output; odd ones into a directory that does not exist.
            let overA = attempt % 2 == 0
            try? FileManager.default.removeItem(at: out)
            if overA { try FileManager.default.copyItem(at: referenceA, to: out) }
            let delay = Double(generator.next() % 1000) / 1000 * duration * 1.6
            let process = Process()
            process.executableURL = TestSupport.quireBinary
            process.arguments = ["render", bookB.path, "--out", out.path, "--quiet"] + argumentsB
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(useconds_t(delay * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            let found = try Self.snapshot(out)
            let outcome: String
            if found == expectedB {
                outcome = "new"
            } else if overA && found == expectedA {
                outcome = "old"
            } else if !overA && found == nil {
                outcome = "none"
            } else {
                outcome = "mixed"
                XCTFail("attempt \(attempt), killed after \(delay) s: \(found?.keys.sorted() ?? []) is neither render")
            }
            outcomes[outcome, default: 0] += 1
        }
        XCTAssertNil(outcomes["mixed"])
        // The next complete run clears what the killed ones left beside the directories.
        for index in 0..<2 {
            try Self.render(bookB, directory.appendingPathComponent("out-\(index)"), argumentsB)
            XCTAssertEqual(try Self.snapshot(directory.appendingPathComponent("out-\(index)")), expectedB)
        }
        XCTAssertEqual(try Self.leftovers(in: directory, besides: ["out-0", "out-1", "reference-a", "reference-b"]), [])
        print("killed renders: \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
    }

    /// A book long enough that painting it takes several seconds.
    static func longBook(in directory: URL) throws -> URL {
        var book = TestBook()
        let paragraph = "<p>" + String(repeating: "The quick brown fox jumps over the lazy dog, and the dog sleeps on. ", count: 12) + "</p>\n"
        book.chapter = book.chapter.replacingOccurrences(of: "<p>Hello.</p>", with: String(repeating: paragraph, count: 3000))
        let url = directory.appendingPathComponent("long.epub")
        try book.write(to: url)
        return url
    }

    /// `--timeout`: the run ends with one limit error (65) when its time is up, and the output it
    /// was building goes with it, though workers were still writing pages into it.
    func testTimeoutEndsTheRunAndLeavesNothing() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try Self.longBook(in: directory)
        let out = directory.appendingPathComponent("out")
        let result = try TestSupport.quire("render", book.path, "--out", out.path, "--timeout", "1")
        XCTAssertEqual(result.status, 65, result.stderr)
        XCTAssertEqual(result.stderr, "quire: error: limit exceeded (timeout): \(book.path) took more than 1 s (raise it with --timeout SECONDS, 0 for none)\n")
        XCTAssertEqual(try Self.leftovers(in: directory, besides: ["long.epub"]), [], "no output and no partial")
        XCTAssertEqual(try TestSupport.quire("render", book.path, "--out", out.path, "--timeout", "-1").status, 64)
    }

    /// SIGTERM and SIGINT stop a render as the signal would, taking its unfinished output with it.
    func testSignalledRenderLeavesNothing() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try Self.longBook(in: directory)
        for signal in [SIGTERM, SIGINT] {
            let process = Process()
            process.executableURL = TestSupport.quireBinary
            process.arguments = ["render", book.path, "--out", directory.appendingPathComponent("out").path, "--quiet"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(700_000)
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal)
            XCTAssertEqual(process.terminationStatus, signal)
            XCTAssertEqual(try Self.leftovers(in: directory, besides: ["long.epub"]), [], "no output and no partial after signal \(signal)")
        }
    }

    /// `--pages` lays out only the chapters holding the selected pages (one per worker at a time):
    /// the pages are the full render's, byte for byte, and the map names an image only for them.
    func testSelectedPagesAreTheFullRendersAndTheMapNamesOnlyThem() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try LayoutTests.sampleBook()
        let all = directory.appendingPathComponent("all")
        let some = directory.appendingPathComponent("some")
        try Self.render(book, all, [])
        try Self.render(book, some, ["--pages", "3,10-12,40-"])
        let full = try XCTUnwrap(Self.snapshot(all))
        let selected = try XCTUnwrap(Self.snapshot(some))
        let count = full.keys.filter { $0.hasPrefix("pages/") }.count
        let expected = [3, 10, 11, 12] + Array(40...count)
        XCTAssertEqual(selected.keys.filter { $0.hasPrefix("pages/") }.sorted(), expected.map { String(format: "pages/%04d.png", $0) })
        for (name, bytes) in selected where name.hasPrefix("pages/") { XCTAssertEqual(bytes, full[name], name) }
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: XCTUnwrap(selected["positions.json"])) as? [String: Any])
        let images = try XCTUnwrap(map["pages"] as? [[String: Any]]).map { $0["image"] as? String }
        XCTAssertEqual(images.count, count)
        for (index, image) in images.enumerated() {
            XCTAssertEqual(image, expected.contains(index + 1) ? String(format: "pages/%04d.png", index + 1) : nil, "page \(index + 1)")
        }
    }
}
