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

/// Books built by the tests to attack the container reader. Each must be refused with one
/// `quire: error:` line and a documented exit code, without crashing and without writing anything.
final class HostileInputTests: XCTestCase {
    struct Case: Sendable {
        var name: String
        var expectedStatus: Int32
        var expectedMessage: String
        var make: @Sendable (URL) throws -> Void
    }

    static func book(_ change: @escaping @Sendable (inout TestBook) -> Void) -> @Sendable (URL) throws -> Void {
        { url in
            var book = TestBook()
            change(&book)
            try book.write(to: url)
        }
    }

    static let cases: [Case] = [
        Case(name: "zip bomb", expectedStatus: 65, expectedMessage: "zip bomb") { url in
            var book = TestBook()
            book.extraEntries = [.init(name: "OEBPS/zeros.xhtml", data: [UInt8](repeating: 0, count: 24 << 20))]
            try book.write(to: url)
        },
        // Twenty entries of 15 MiB each pass the per-entry check; together, 300 MiB from a few
        // hundred KB, they are a bomb all the same.
        Case(name: "zip bomb of many small entries", expectedStatus: 65, expectedMessage: "zip bomb") { url in
            var book = TestBook()
            book.extraEntries = (0..<20).map { .init(name: "OEBPS/zeros\($0).xhtml", data: [UInt8](repeating: 0, count: 15 << 20)) }
            try book.write(to: url)
        },
        Case(name: "entry escaping the root", expectedStatus: 65, expectedMessage: "unsafe archive entry name") { url in
            var book = TestBook()
            book.extraEntries = [.init(name: "../../evil.txt", data: Array("owned".utf8))]
            try book.write(to: url)
        },
        Case(name: "absolute entry", expectedStatus: 65, expectedMessage: "unsafe archive entry name") { url in
            var book = TestBook()
            book.extraEntries = [.init(name: "/tmp/evil.txt", data: Array("owned".utf8))]
            try book.write(to: url)
        },
        Case(
            name: "XXE external entity", expectedStatus: 65, expectedMessage: "external entity",
            make: book { book in
                book.package = """
                    <?xml version="1.0"?>
                    <!DOCTYPE package [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
                    <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
                      <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">x</dc:identifier>
                      <dc:title>&xxe;</dc:title><dc:language>en</dc:language></metadata>
                      <manifest><item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/></manifest>
                      <spine><itemref idref="c1"/></spine>
                    </package>
                    """
            }),
        Case(
            name: "billion laughs", expectedStatus: 65, expectedMessage: "entit",
            make: book { book in
                var entities = #"<!ENTITY lol "lol">"#
                for level in 1...9 {
                    let previous = level == 1 ? "lol" : "lol\(level - 1)"
                    entities += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
                }
                book.package = """
                    <?xml version="1.0"?>
                    <!DOCTYPE package [\(entities)]>
                    <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
                      <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">x</dc:identifier>
                      <dc:title>&lol9;</dc:title><dc:language>en</dc:language></metadata>
                      <manifest><item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/></manifest>
                      <spine><itemref idref="c1"/></spine>
                    </package>
                    """
            }),
        Case(name: "truncated zip", expectedStatus: 65, expectedMessage: "zip") { url in
            let whole = url.deletingLastPathComponent().appendingPathComponent("whole.epub")
            try TestBook().write(to: whole)
            let data = try Data(contentsOf: whole)
            try data.prefix(data.count / 2).write(to: url)
            try FileManager.default.removeItem(at: whole)
        },
        Case(name: "not a zip", expectedStatus: 65, expectedMessage: "not an EPUB") { url in
            try Data("This is plain text, not a book.\n".utf8).write(to: url)
        },
        Case(
            name: "no container.xml", expectedStatus: 65, expectedMessage: "missing container",
            make: book { $0.omit = ["META-INF/container.xml"] }),
        Case(
            name: "spine file missing", expectedStatus: 65, expectedMessage: "missing resource href",
            make: book { $0.omit = ["OEBPS/chapter1.xhtml"] }),
        Case(name: "encrypted chapter (encryption.xml)", expectedStatus: 69, expectedMessage: "DRM-protected") { url in
            try TestBook.drmProtected.write(to: url)
        },
        Case(name: "encrypted chapter (zip AES)", expectedStatus: 69, expectedMessage: "DRM-protected") { url in
            var book = TestBook()
            book.omit = ["OEBPS/chapter1.xhtml"]
            book.extraEntries = [.init(name: "OEBPS/chapter1.xhtml", data: Array(book.chapter.utf8), aesPassword: "secret")]
            try book.write(to: url)
        },
        Case(name: "missing file", expectedStatus: 66, expectedMessage: "not found") { _ in },
        // PDFs are read now: this one has no pages tree, so it is bad data.
        Case(name: "broken PDF", expectedStatus: 65, expectedMessage: "invalid PDF") { url in
            try Data("%PDF-1.4\n%\u{e2}\u{e3}\n1 0 obj\n<<>>\nendobj\n".utf8).write(to: url)
        },
        Case(name: "wrong mimetype", expectedStatus: 65, expectedMessage: "not an EPUB") { url in
            var book = TestBook()
            book.omit = ["mimetype"]
            book.extraEntries = [.init(name: "mimetype", data: Array("application/zip".utf8), store: true)]
            try book.write(to: url)
        },
    ]

    func testHostileBooksAreRefusedCleanly() throws {
        for hostile in Self.cases {
            let directory = try TestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = directory.appendingPathComponent("input")
            try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
            let work = directory.appendingPathComponent("work")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let book = input.appendingPathComponent("book.epub")
            try hostile.make(book)
            let before = try FileManager.default.contentsOfDirectory(atPath: input.path).sorted()

            for arguments in [["info", book.path], ["info", "--json", book.path]] {
                let result = try TestSupport.run(TestSupport.quireBinary, arguments, in: work)
                XCTAssertEqual(result.status, hostile.expectedStatus, "\(hostile.name): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
                XCTAssertEqual(lines.count, 1, "\(hostile.name): one line on stderr, got \(result.stderr)")
                XCTAssertTrue(lines.first?.hasPrefix("quire: error: ") ?? false, hostile.name)
                XCTAssertTrue(
                    result.stderr.localizedCaseInsensitiveContains(hostile.expectedMessage),
                    "\(hostile.name): expected '\(hostile.expectedMessage)' in \(result.stderr)")
                XCTAssertTrue(result.stdout.isEmpty, "\(hostile.name): no output on failure")
                XCTAssertFalse(result.stderr.contains("root:"), "\(hostile.name): nothing of /etc/passwd may leak")
            }
            // Nothing written: not in the working directory, not beside the input.
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work.path), [], hostile.name)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: input.path).sorted(), before, hostile.name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("evil.txt").path))
        }
    }

    /// The zip-bomb refusal comes from the central directory, before any byte is inflated,
    /// and raising the limits lets the same book through.
    /// A chapter whose deflated data is damaged is not laid out from wrong bytes: the book renders
    /// without it, and the map's warnings say which entry is damaged.
    func testDamagedChapterIsReportedNotRead() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("damaged.epub")
        var book = TestBook()
        book.chapter = book.chapter.replacingOccurrences(of: "<p>Hello.</p>", with: "<p>" + String(repeating: "Hello, world. ", count: 20) + "</p>")
        try book.write(to: url)
        var bytes = [UInt8](try Data(contentsOf: url))
        let name = Array("OEBPS/chapter1.xhtml".utf8)
        let at = (0...(bytes.count - name.count)).first { Array(bytes[$0..<($0 + name.count)]) == name }!
        let extraLength = Int(bytes[at - 30 + 28]) | Int(bytes[at - 30 + 29]) << 8
        bytes[at + name.count + extraLength + 10] ^= 0x55
        try Data(bytes).write(to: url)
        let out = directory.appendingPathComponent("out")
        let result = try TestSupport.quire("render", url.path, "--out", out.path, "--map-only", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
        let warnings = (map["warnings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        XCTAssertTrue(warnings.contains { $0.contains("OEBPS/chapter1.xhtml is damaged") }, "\(warnings)")
    }

    func testLimitsCanBeRaised() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("bomb.epub")
        try Self.cases[0].make(url)
        XCTAssertEqual(try TestSupport.quire("info", url.path).status, 65)
        let raised = try TestSupport.quire("info", "--max-compression-ratio", "5000", url.path)
        XCTAssertEqual(raised.status, 0, raised.stderr)
        let tooMany = try TestSupport.quire("info", "--max-entries", "3", url.path)
        XCTAssertEqual(tooMany.status, 65)
        XCTAssertTrue(tooMany.stderr.contains("max-entries"))
    }

    /// A stylesheet of about 1 MB that compresses 495:1 is only repetitive: the ratio check is for
    /// entries whose inflated size matters (16 MiB and more), so the book opens and renders.
    func testSmallRepetitiveEntryIsNotAZipBomb() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("repetitive.epub")
        var book = TestBook()
        let rule = "p { margin: 0; text-indent: 1.5em; }\n"
        let sheet = [UInt8](String(repeating: rule, count: (1 << 20) / rule.utf8.count).utf8)
        book.extraEntries = [.init(name: "OEBPS/style.css", data: sheet)]
        book.extraManifest = #"<item id="css" href="style.css" media-type="text/css"/>"#
        book.chapter = book.chapter.replacingOccurrences(of: "<head>", with: #"<head><link rel="stylesheet" href="style.css"/>"#)
        try book.write(to: url)
        let zip = try ZipArchive(path: url.path)
        let entry = try XCTUnwrap(zip.entries.first { $0.name == "OEBPS/style.css" })
        XCTAssertGreaterThan(entry.uncompressedSize / entry.compressedSize, 300, "the sheet compresses hundreds to one")
        let result = try TestSupport.quire("render", url.path, "--out", directory.appendingPathComponent("out").path, "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("out/pages").path)
        XCTAssertFalse(pages.isEmpty)
    }

    /// The image limits are the run's: lowered, the sample's pictures are placeholders with a
    /// warning that names the limit; by default they are drawn.
    func testImageLimitsComeFromTheRun() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try SampleBooksTests.scriptsBook()
        func warnings(_ extra: [String]) throws -> [String] {
            let out = directory.appendingPathComponent("out")
            let result = try TestSupport.run(TestSupport.quireBinary, ["render", book.path, "--out", out.path, "--quiet"] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
            return (map["warnings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        }
        XCTAssertFalse(try warnings([]).contains { $0.contains("a side") })
        let lowered = try warnings(["--max-image-side", "8"])
        XCTAssertTrue(lowered.contains { $0.contains("more than 8 a side") }, "\(lowered)")
        XCTAssertEqual(try TestSupport.quire("info", "--max-image-pixels", "0", book.path).status, 64)
    }

    /// The XML and CSS limits are flags: lowered, a chapter with more elements is refused by name,
    /// and a stylesheet's rules past the limit are dropped with a warning.
    func testDocumentAndStyleLimitsAreFlags() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("book.epub")
        var book = TestBook()
        book.chapter = book.chapter.replacingOccurrences(
            of: "<p>Hello.</p>", with: String(repeating: "<p>Hello.</p>", count: 50))
        book.extraEntries = [.init(name: "OEBPS/style.css", data: Array(String(repeating: "p { color: black }\n", count: 20).utf8))]
        book.extraManifest = #"<item id="css" href="style.css" media-type="text/css"/>"#
        book.chapter = book.chapter.replacingOccurrences(of: "<head>", with: #"<head><link rel="stylesheet" href="style.css"/>"#)
        try book.write(to: url)
        let out = directory.appendingPathComponent("out")
        let nodes = try TestSupport.quire("render", url.path, "--out", out.path, "--map-only", "--max-xml-nodes", "20")
        XCTAssertEqual(nodes.status, 65, nodes.stderr)
        XCTAssertTrue(nodes.stderr.contains("limit exceeded (max-xml-nodes)"), nodes.stderr)
        let rules = try TestSupport.quire("render", url.path, "--out", out.path, "--map-only", "--quiet", "--max-css-rules", "5")
        XCTAssertEqual(rules.status, 0, rules.stderr)
        let map = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("positions.json"))) as? [String: Any])
        let warnings = (map["warnings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        XCTAssertTrue(warnings.contains { $0.contains("rules past the first 5 were dropped") }, "\(warnings)")
    }

    func testUsageErrors() throws {
        let none = try TestSupport.quire()
        XCTAssertEqual(none.status, 64)
        let unknown = try TestSupport.quire("frobnicate")
        XCTAssertEqual(unknown.status, 64)
        XCTAssertEqual(unknown.stderr.split(separator: "\n").count, 1)
        let badFlag = try TestSupport.quire("info", "--bogus", "x.epub")
        XCTAssertEqual(badFlag.status, 64)
        XCTAssertEqual(try TestSupport.quire("--help").status, 0)
    }
}
