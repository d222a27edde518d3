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

final class PackageTests: XCTestCase {
    func open(_ book: TestBook) throws -> EPUBContainer {
        let directory = try TestSupport.temporaryDirectory()
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("book.epub")
        try book.write(to: url)
        return try EPUBContainer.open(path: url.path)
    }

    /// An EPUB 2 book: NCX navigation, `opf:role`, `opf:event`, guide as landmarks, non-linear items,
    /// a manifest fallback chain and a missing optional resource (a warning, not an error).
    /// Deflated entries are inflated by libdeflate outside the archive's lock; stored entries and
    /// partial reads go through libzip. Every path returns the same bytes as Info-ZIP's unzip, and
    /// damaged data is an error, never different bytes.
    func testZipEntriesReadAlikeOnEveryPath() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var state: UInt64 = 42
        let noise = (0..<200_000).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let text = Array(String(repeating: "Call me Ishmael. ", count: 5000).utf8)
        let url = directory.appendingPathComponent("entries.zip")
        try ZipWriter.write(
            [.init(name: "text", data: text), .init(name: "noise", data: noise), .init(name: "empty", data: []), .init(name: "stored", data: text, store: true)],
            to: url)
        let archive = try ZipArchive(path: url.path)
        for (name, expected) in [("text", text), ("noise", noise), ("empty", []), ("stored", text)] {
            XCTAssertEqual(try archive.read(name), expected, name)
            XCTAssertEqual(try TestSupport.unzipEntry(url, name).map { [UInt8]($0) }, expected, name)
        }
        XCTAssertEqual(try archive.read(archive.entry(named: "text")!, maxBytes: 10), Array(text.prefix(10)))

        // A byte changed inside the deflated text (the first entry: its data follows its local header).
        var damaged = [UInt8](try Data(contentsOf: url))
        let extraLength = Int(damaged[28]) | Int(damaged[29]) << 8
        damaged[30 + 4 + extraLength + 40] ^= 0x55
        let damagedURL = directory.appendingPathComponent("damaged.zip")
        try Data(damaged).write(to: damagedURL)
        let reopened = try ZipArchive(path: damagedURL.path)
        XCTAssertThrowsError(try reopened.read("text")) { error in
            guard case QuireError.corruptArchive = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try reopened.read("noise"), noise)
    }

    func testEPUB2Package() throws {
        var book = TestBook()
        book.package = """
            <?xml version="1.0" encoding="utf-8"?>
            <package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="BookId">
              <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
                <dc:title>Old Book</dc:title>
                <dc:creator opf:role="aut" opf:file-as="Writer, Ann">Ann Writer</dc:creator>
                <dc:contributor opf:role="edt">Ed Itor</dc:contributor>
                <dc:language>en-GB</dc:language>
                <dc:identifier id="BookId" opf:scheme="ISBN">9780000000000</dc:identifier>
                <dc:identifier opf:scheme="UUID">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
                <dc:date opf:event="publication">1901</dc:date>
                <meta name="cover" content="cover-image"/>
              </metadata>
              <manifest>
                <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
                <item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/>
                <item id="notes" href="notes.xhtml" media-type="application/xhtml+xml"/>
                <item id="cover-image" href="images/cover.jpg" media-type="image/jpeg"/>
                <item id="fancy" href="fancy.xml" media-type="application/x-fancy" fallback="plain"/>
                <item id="plain" href="chapter1.xhtml" media-type="application/xhtml+xml" fallback="fancy"/>
              </manifest>
              <spine toc="ncx"><itemref idref="c1"/><itemref idref="notes" linear="no"/></spine>
              <guide><reference type="text" title="Start" href="chapter1.xhtml"/></guide>
            </package>
            """
        book.omit = ["OEBPS/nav.xhtml"]
        book.extraEntries = [
            .init(name: "OEBPS/notes.xhtml", data: Array(book.chapter.utf8)),
            .init(
                name: "OEBPS/toc.ncx",
                data: Array(
                    """
                    <?xml version="1.0"?>
                    <ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
                      <navMap>
                        <navPoint id="n1" playOrder="1"><navLabel><text>Chapter  One</text></navLabel><content src="chapter1.xhtml"/>
                          <navPoint id="n2" playOrder="2"><navLabel><text>Part</text></navLabel><content src="chapter1.xhtml#part"/></navPoint>
                        </navPoint>
                        <navPoint id="n3" playOrder="3"><navLabel><text>Gone</text></navLabel><content src="missing.xhtml"/></navPoint>
                      </navMap>
                      <pageList><pageTarget type="normal" value="1"><navLabel><text>1</text></navLabel><content src="chapter1.xhtml#p1"/></pageTarget></pageList>
                    </ncx>
                    """.utf8)),
        ]
        let publication = try open(book).publication
        XCTAssertEqual(publication.version, "2.0")
        XCTAssertEqual(publication.metadata.title, "Old Book")
        XCTAssertEqual(publication.metadata.creators, [Contributor(name: "Ann Writer", roles: ["aut"], fileAs: "Writer, Ann")])
        XCTAssertEqual(publication.metadata.contributors.first?.roles, ["edt"])
        XCTAssertEqual(publication.metadata.uniqueIdentifier, "9780000000000")
        XCTAssertEqual(publication.metadata.identifiers.map(\.scheme), ["ISBN", "UUID"])
        XCTAssertEqual(publication.metadata.dates, [DateEntry(value: "1901", event: "publication")])
        XCTAssertEqual(publication.metadata.coverItemID, "cover-image")
        XCTAssertEqual(publication.navigation.source, .ncx)
        XCTAssertEqual(Navigation.total(publication.navigation.toc), 3)
        XCTAssertEqual(publication.navigation.toc[0].title, "Chapter One")
        XCTAssertEqual(publication.navigation.toc[0].children[0].target, ResourceRef(path: "OEBPS/chapter1.xhtml", fragment: "part"))
        XCTAssertEqual(publication.navigation.pageList.count, 1)
        XCTAssertEqual(publication.navigation.landmarks.first?.type, "text")
        XCTAssertEqual(publication.spine.map(\.linear), [true, false])
        let fancy = try XCTUnwrap(publication.manifestItem(id: "fancy"))
        XCTAssertEqual(publication.fallbackChain(of: fancy).map(\.id), ["fancy", "plain"], "a cycle stops the chain")
        let warnings = publication.warnings.map(\.message).joined(separator: "\n")
        XCTAssertTrue(warnings.contains("images/cover.jpg"), warnings)
        XCTAssertTrue(warnings.contains("missing.xhtml"), warnings)
    }

    /// EPUB 3 refinements, rendition properties and per-item overrides.
    func testEPUB3RefinementsAndRendition() throws {
        var book = TestBook()
        book.package = """
            <?xml version="1.0" encoding="utf-8"?>
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" prefix="rendition: http://www.idpf.org/vocab/rendition/#">
              <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
                <dc:identifier id="uid">urn:isbn:9781234567897</dc:identifier>
                <dc:title id="t2">A Subtitle</dc:title>
                <dc:title id="t1">The Main Title</dc:title>
                <meta refines="#t1" property="title-type">main</meta>
                <meta refines="#t2" property="title-type">subtitle</meta>
                <dc:creator id="c2">Second Person</dc:creator>
                <dc:creator id="c1">First Person</dc:creator>
                <meta refines="#c1" property="role" scheme="marc:relators">aut</meta>
                <meta refines="#c1" property="display-seq">1</meta>
                <meta refines="#c2" property="role" scheme="marc:relators">ill</meta>
                <meta refines="#c2" property="display-seq">2</meta>
                <dc:language>ja</dc:language>
                <meta property="rendition:layout">pre-paginated</meta>
                <meta property="rendition:spread">landscape</meta>
                <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
              </metadata>
              <manifest>
                <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
                <item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/>
              </manifest>
              <spine page-progression-direction="rtl">
                <itemref idref="c1" properties="page-spread-right"/>
                <itemref idref="nav" properties="rendition:layout-reflowable rendition:page-spread-left"/>
              </spine>
            </package>
            """
        let publication = try open(book).publication
        XCTAssertEqual(publication.metadata.title, "The Main Title")
        XCTAssertEqual(publication.metadata.creators.map(\.name), ["First Person", "Second Person"])
        XCTAssertEqual(publication.metadata.creators.map(\.roles), [["aut"], ["ill"]])
        XCTAssertEqual(publication.metadata.layout, .prePaginated)
        XCTAssertEqual(publication.metadata.spread, "landscape")
        XCTAssertEqual(publication.metadata.modified, "2026-01-01T00:00:00Z")
        XCTAssertEqual(publication.pageProgression, .rtl)
        XCTAssertEqual(publication.spine.map(\.layout), [.prePaginated, .reflowable])
        XCTAssertEqual(publication.spine.map(\.pageSpread), ["page-spread-right", "page-spread-left"])
    }

    func testSpineNamingUnknownItemIsInvalid() throws {
        var book = TestBook()
        book.package = TestBook().packageDocument.replacingOccurrences(of: #"<itemref idref="c1"/>"#, with: #"<itemref idref="nope"/>"#)
        XCTAssertThrowsError(try open(book)) { error in
            XCTAssertEqual((error as? QuireError)?.exitCode, 65)
            XCTAssertEqual((error as? QuireError)?.kind, "invalid-package-document")
        }
    }

    /// The bundled sample: what its generator documents.
    func testSampleBook() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let build = try TestSupport.run(
            URL(fileURLWithPath: "/bin/sh"), [TestSupport.packageRoot.appendingPathComponent("Samples/build.sh").path, directory.path])
        XCTAssertEqual(build.status, 0, build.stderr)
        let path = directory.appendingPathComponent("quire-sample.epub").path
        let publication = try EPUBContainer.open(path: path).publication
        XCTAssertEqual(publication.spine.count, 7)
        XCTAssertEqual(Navigation.total(publication.navigation.toc), 7)
        XCTAssertEqual(Navigation.depth(publication.navigation.toc), 2)
        XCTAssertEqual(Navigation.total(publication.navigation.pageList), 8)
        XCTAssertEqual(publication.navigation.landmarks.count, 3)
        XCTAssertEqual(publication.warnings, [])
        // Reproducible: a second build is byte-identical.
        let again = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: again) }
        _ = try TestSupport.run(
            URL(fileURLWithPath: "/bin/sh"), [TestSupport.packageRoot.appendingPathComponent("Samples/build.sh").path, again.path])
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path)),
            try Data(contentsOf: again.appendingPathComponent("quire-sample.epub")))
        // Text and JSON output agree on the essentials.
        let text = try TestSupport.quire("info", path)
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdoutText.contains("Spine:        7 items"), text.stdoutText)
        let json = try TestSupport.quire("info", "--json", path)
        let info = try XCTUnwrap(JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        XCTAssertEqual(info["format"] as? String, "quire-info")
        XCTAssertEqual(info["uniqueIdentifier"] as? String, "urn:uuid:7c3f9a2e-4b1d-4e8a-9f6c-2d5b8e1a0c47")
        XCTAssertEqual(try TestSupport.quire("info", "--json", path).stdout, json.stdout, "stable output")
    }
}
