import Foundation
import XCTest

/// cairo, poppler-glib, librsvg, libavif and libjxl are opened on first use (Sources/CQuireDelayLoad), so map-only
/// layout never loads them, nor EPUB work poppler. A broken copy found first (here: zlib under their names, through LD_LIBRARY_PATH)
/// gives one clear error for a PDF, and a placeholder with a warning for an SVG image.
final class DelayLoadTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = try TestSupport.temporaryDirectory(name)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func testExecutableDoesNotLinkCairoPopplerRsvgAvifOrJxl() throws {
        let result = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/readelf"), ["-d", TestSupport.quireBinary.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let needed = result.stdoutText.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        XCTAssertTrue(needed.contains { $0.contains("libharfbuzz") }, "the dynamic section was read: \(needed)")
        XCTAssertFalse(
            needed.contains {
                $0.contains("poppler") || $0.contains("rsvg") || $0.contains("gobject") || $0.contains("cairo") || $0.contains("libavif")
                    || $0.contains("libjxl")
            }, "\(needed)")
    }

    /// A directory holding zlib under the given library names: a real shared object, but not the library.
    func brokenLibraries(_ names: [String]) throws -> [String: String] {
        // /proc files report size 0: read to the end rather than by size.
        let maps = String(decoding: try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile(), as: UTF8.self)
        let zlib = try XCTUnwrap(
            maps.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last }
                .first { $0.hasSuffix("/libz.so.1") || $0.contains("/libz.so.1.") }, "zlib is loaded (libzip needs it)")
        let libraries = directory.appendingPathComponent("broken-libraries")
        try FileManager.default.createDirectory(at: libraries, withIntermediateDirectories: true)
        for name in names {
            try FileManager.default.copyItem(atPath: String(zlib), toPath: libraries.appendingPathComponent(name).path)
        }
        return ["LD_LIBRARY_PATH": libraries.path]
    }

    func testBrokenPopplerIsOneClearErrorAndEPUBsNeverLoadIt() throws {
        let environment = try brokenLibraries(["libpoppler-glib.so.8", "libpoppler-glib.so"])
        let out = directory.appendingPathComponent("pdf-out")
        let result = try TestSupport.run(
            TestSupport.quireBinary, ["render", try SampleBooksTests.samplePDF().path, "--out", out.path], environment: environment)
        XCTAssertEqual(result.status, 69, result.stderr)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssertTrue(lines.first?.hasPrefix("quire: error: ") ?? false, result.stderr)
        XCTAssertTrue(result.stderr.contains("libpoppler-glib"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "nothing is written")

        let epub = try TestSupport.run(
            TestSupport.quireBinary,
            ["render", try LayoutTests.sampleBook().path, "--out", directory.appendingPathComponent("epub-out").path, "--map-only", "--quiet"],
            environment: environment)
        XCTAssertEqual(epub.status, 0, epub.stderr)
    }

    func testBrokenCairoStopsPaintingButNotMapOnlyLayout() throws {
        let environment = try brokenLibraries(["libcairo.so.2", "libcairo.so"])
        let book = try LayoutTests.sampleBook().path
        let mapOnly = try TestSupport.run(
            TestSupport.quireBinary, ["render", book, "--out", directory.appendingPathComponent("map").path, "--map-only", "--quiet"],
            environment: environment)
        XCTAssertEqual(mapOnly.status, 0, mapOnly.stderr)
        let out = directory.appendingPathComponent("pages")
        let painted = try TestSupport.run(TestSupport.quireBinary, ["render", book, "--out", out.path, "--quiet"], environment: environment)
        XCTAssertEqual(painted.status, 69, painted.stderr)
        let lines = painted.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, painted.stderr)
        XCTAssertTrue(lines.first?.hasPrefix("quire: error: ") ?? false, painted.stderr)
        XCTAssertTrue(painted.stderr.contains("libcairo"), painted.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("positions.json").path), "no map is written")
    }

    func testBrokenRsvgLeavesAPlaceholderAndAWarning() throws {
        let environment = try brokenLibraries(["librsvg-2.so.2", "librsvg-2.so"])
        let out = directory.appendingPathComponent("out")
        // The scripts sample's first chapter floats an SVG compass rose.
        let result = try TestSupport.run(
            TestSupport.quireBinary, ["render", try SampleBooksTests.scriptsBook().path, "--out", out.path, "--pages", "1-2", "--quiet"],
            environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
        let warnings = try XCTUnwrap(map["warnings"] as? [[String: Any]])
        let notDrawn = warnings.filter { $0["code"] as? String == "image-not-drawn" }.compactMap { $0["message"] as? String }
        XCTAssertEqual(notDrawn.count, 1, "\(warnings)")
        XCTAssertTrue(notDrawn.first?.contains(".svg: ") ?? false, "\(notDrawn)")
        XCTAssertTrue(notDrawn.first?.contains("librsvg") ?? false, "\(notDrawn)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path).count, 2)
    }

    /// A libcairo that has cairo_create (the probe) but none of the other functions Quire calls:
    /// refused when it is opened, with the missing function named; painting fails with exit 69
    /// and one line, and no stub ever runs into the missing function.
    func testLibraryWithoutAStubsFunctionIsRefusedWhenOpened() throws {
        let libraries = directory.appendingPathComponent("partial")
        try FileManager.default.createDirectory(at: libraries, withIntermediateDirectories: true)
        let source = libraries.appendingPathComponent("cairo.c")
        try "void *cairo_create(void *target) { (void)target; return 0; }\n".write(to: source, atomically: true, encoding: .utf8)
        let library = libraries.appendingPathComponent("libcairo.so.2")
        let compiled = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/cc"), ["-shared", "-fPIC", "-o", library.path, source.path])
        XCTAssertEqual(compiled.status, 0, compiled.stderr)
        // The development name too, or the real library would be found under it.
        try FileManager.default.copyItem(at: library, to: libraries.appendingPathComponent("libcairo.so"))
        let out = directory.appendingPathComponent("pages")
        let painted = try TestSupport.run(
            TestSupport.quireBinary, ["render", try LayoutTests.sampleBook().path, "--out", out.path, "--quiet"],
            environment: ["LD_LIBRARY_PATH": libraries.path])
        XCTAssertEqual(painted.status, 69, painted.stderr)
        XCTAssertEqual(painted.stderr.split(separator: "\n").count, 1, painted.stderr)
        XCTAssertTrue(painted.stderr.hasPrefix("quire: error: ") && painted.stderr.contains("has no cairo_"), painted.stderr)
    }
}
