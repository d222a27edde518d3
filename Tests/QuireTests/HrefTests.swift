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

final class HrefTests: XCTestCase {
    /// The byte-level token check agrees with splitting into tokens.
    func testWhitespaceTokens() {
        for (text, token, expected) in [
            ("pagebreak", "pagebreak", true), ("z3998:roman  pagebreak\t", "pagebreak", true), ("pagebreaks", "pagebreak", false),
            ("no-pagebreak", "pagebreak", false), ("", "pagebreak", false), ("a b", "b", true), ("ab", "b", false),
        ] {
            XCTAssertEqual(text.containsWhitespaceToken(token), expected, text)
            XCTAssertEqual(text.whitespaceTokens().contains(token), expected, text)
        }
    }

    func testRelativePathsAndFragments() {
        XCTAssertEqual(Href.resolve("chapter1.xhtml", relativeTo: "OEBPS/content.opf"), ResourceRef(path: "OEBPS/chapter1.xhtml"))
        XCTAssertEqual(
            Href.resolve("../css/style.css", relativeTo: "EPUB/text/ch1.xhtml"), ResourceRef(path: "EPUB/css/style.css"))
        XCTAssertEqual(
            Href.resolve("./a/./b/../c.xhtml#p12", relativeTo: "OPS/pkg.opf"),
            ResourceRef(path: "OPS/a/c.xhtml", fragment: "p12"))
        XCTAssertEqual(Href.resolve("#note-3", relativeTo: "OPS/ch.xhtml"), ResourceRef(path: "OPS/ch.xhtml", fragment: "note-3"))
        XCTAssertEqual(Href.resolve("/root.xhtml", relativeTo: "OPS/ch.xhtml"), ResourceRef(path: "root.xhtml"))
        XCTAssertEqual(Href.resolve("ch.xhtml?x=1#f", relativeTo: "ch0.xhtml"), ResourceRef(path: "ch.xhtml", fragment: "f"))
        XCTAssertEqual(Href.resolve("  ch.xhtml\n", relativeTo: "a/b.opf"), ResourceRef(path: "a/ch.xhtml"))
    }

    func testPercentEncodingAndIRIs() {
        XCTAssertEqual(
            Href.resolve("my%20chapter.xhtml", relativeTo: "OPS/p.opf"), ResourceRef(path: "OPS/my chapter.xhtml"))
        // An IRI (raw UTF-8) and its percent-encoded URL name the same entry.
        let iri = Href.resolve("本文/第一章.xhtml#見出し", relativeTo: "item/standard.opf")
        let url = Href.resolve(
            "%E6%9C%AC%E6%96%87/%E7%AC%AC%E4%B8%80%E7%AB%A0.xhtml#%E8%A6%8B%E5%87%BA%E3%81%97", relativeTo: "item/standard.opf")
        XCTAssertEqual(iri, ResourceRef(path: "item/本文/第一章.xhtml", fragment: "見出し"))
        XCTAssertEqual(iri, url)
        // A literal % that is not an escape stays as it is.
        XCTAssertEqual(Href.resolve("100%.xhtml", relativeTo: "x.opf"), ResourceRef(path: "100%.xhtml"))
        XCTAssertEqual(Href.resolve("bad%ZZ.xhtml", relativeTo: "x.opf"), ResourceRef(path: "bad%ZZ.xhtml"))
        // %2F decodes to a slash inside the name, which is how zip entry names are matched.
        XCTAssertEqual(Href.resolve("a%2Fb.xhtml", relativeTo: "x.opf"), ResourceRef(path: "a/b.xhtml"))
    }

    func testEscapesAndExternals() {
        // `..` stops at the archive's root (URL resolution against the container root): the
        // result is an archive path, never a disk path.
        XCTAssertEqual(Href.resolve("../../etc/passwd", relativeTo: "OPS/p.opf"), ResourceRef(path: "etc/passwd"))
        XCTAssertEqual(Href.resolve("..%2F..%2Fetc", relativeTo: "p.opf"), ResourceRef(path: "etc"))
        XCTAssertEqual(
            Href.resolve("../../../../media/imgs/monastery.jpg", relativeTo: "EPUB/content_001.xhtml"),
            ResourceRef(path: "media/imgs/monastery.jpg"))
        XCTAssertNil(Href.resolve("http://example.com/x.html", relativeTo: "p.opf"))
        XCTAssertNil(Href.resolve("mailto:someone@example.com", relativeTo: "p.opf"))
        XCTAssertNil(Href.resolve("data:image/png;base64,AAAA", relativeTo: "p.opf"))
        XCTAssertTrue(Href.isExternal("https://x"))
        XCTAssertFalse(Href.isExternal("chapter:1.xhtml".replacingOccurrences(of: "chapter", with: "1chapter")))
        XCTAssertFalse(Href.isExternal("text/ch.xhtml"))
    }
}

final class JSONTests: XCTestCase {
    func testOrderedStableOutput() {
        let value = JSON.object([
            ("b", .int(1)), ("a", .array([.string("x\"y\n"), .null, .bool(true), .double(0.1 + 0.2)])),
            ("empty", .object([])), ("u", .string("\u{1}\u{2028}é")),
        ])
        XCTAssertEqual(
            value.serialized(pretty: false),
            #"{"b":1,"a":["x\"y\n",null,true,0.3],"empty":{},"u":"\u0001\u2028é"}"#)
        XCTAssertEqual(value.serialized(), value.serialized())
        XCTAssertTrue(value.serialized().contains("\n  \"a\": [\n    \"x"))
        XCTAssertEqual(JSON.double(-2.5).serialized(), "-2.5")
        XCTAssertEqual(JSON.double(1e-9).serialized(), "0.000000001")
        XCTAssertEqual(JSON.double(1e-10).serialized(), "0")
    }

    func testByteSizes() {
        XCTAssertEqual(parseByteSize("512M"), 512 << 20)
        XCTAssertEqual(parseByteSize("2g"), 2 << 30)
        XCTAssertEqual(parseByteSize("1048576"), 1_048_576)
        XCTAssertNil(parseByteSize("lots"))
        XCTAssertNil(parseByteSize("-1"))
    }
}
