import CLibXML2
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

final class XMLParserTests: XCTestCase {
    func testSafeParserOptions() {
        let options = XMLParser.xmlOptions
        XCTAssertEqual(options & Int32(XML_PARSE_NOENT.rawValue), 0, "entity substitution must be off")
        XCTAssertEqual(options & Int32(XML_PARSE_DTDLOAD.rawValue), 0, "external DTDs are never loaded")
        XCTAssertEqual(options & Int32(XML_PARSE_HUGE.rawValue), 0, "libxml2's size limits stay on")
        XCTAssertNotEqual(options & Int32(XML_PARSE_NONET.rawValue), 0, "no network access")
        XCTAssertNotEqual(XMLParser.htmlOptions & Int32(HTML_PARSE_NONET.rawValue), 0)
    }

    func testTreeNavigationAndDocumentOrder() throws {
        let source = """
            <?xml version="1.0"?>
            <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="fr">
            <body><p id="a">Un <em>deux</em> trois&#x20;&amp; <![CDATA[<quatre>]]></p><section epub:type="chapter"><p lang="en">five</p></section></body></html>
            """
        let tree = try XMLParser.parse(Array(source.utf8), path: "t.xhtml")
        let root = try XCTUnwrap(tree.root)
        XCTAssertTrue(root.is("html", Namespace.xhtml))
        let paragraphs = root.descendants("p", Namespace.xhtml)
        XCTAssertEqual(paragraphs.count, 2)
        XCTAssertEqual(paragraphs[0].textContent, "Un deux trois & <quatre>")
        XCTAssertEqual(paragraphs[0].attribute("id"), "a")
        XCTAssertLessThan(paragraphs[0].id, paragraphs[1].id, "ids follow document order")
        XCTAssertEqual(paragraphs[0].language, "fr")
        XCTAssertEqual(paragraphs[1].language, "en")
        let section = try XCTUnwrap(root.descendants("section").first)
        XCTAssertEqual(section.attribute("type", namespace: Namespace.ops), "chapter")
        XCTAssertEqual(paragraphs[1].parent, section)
        XCTAssertEqual(Array(tree.childIDs(of: paragraphs[0].id)).count, 3, "text, em, merged text")
    }

    func testNamedHTMLEntitiesWithoutDTD() throws {
        let source = """
            <?xml version="1.0"?>
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
            <html xmlns="http://www.w3.org/1999/xhtml"><body><p>a&nbsp;b&mdash;c</p></body></html>
            """
        let tree = try XMLParser.parse(Array(source.utf8), path: "t.xhtml", mode: .recover)
        XCTAssertEqual(tree.root?.descendants("p").first?.textContent, "a\u{A0}b\u{2014}c")
    }

    func testSimpleInternalEntityExpands() throws {
        let source = #"<?xml version="1.0"?><!DOCTYPE r [<!ENTITY who "World">]><r>Hello &who;</r>"#
        XCTAssertEqual(try XMLParser.parse(Array(source.utf8), path: "t.xml").root?.textContent, "Hello World")
    }

    func testMalformedXMLStrictVersusRecover() throws {
        let broken = Array("<?xml version=\"1.0\"?><root><a>text</b></root>".utf8)
        XCTAssertThrowsError(try XMLParser.parse(broken, path: "broken.xml")) { error in
            guard case QuireError.invalidXML(let document, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(document, "broken.xml")
        }
        let recovered = try XMLParser.parse(broken, path: "broken.xml", mode: .recover)
        XCTAssertEqual(recovered.root?.localName, "root")
        XCTAssertFalse(recovered.warnings.isEmpty)
    }

    func testHTMLTagSoup() throws {
        let soup = Array("<html><body><p>one<p>two<br>three<section epub:type='chapter'>x</section></body></html>".utf8)
        let tree = try XMLParser.parse(soup, path: "soup.html", mode: .html)
        let root = try XCTUnwrap(tree.root)
        XCTAssertEqual(root.descendants("p", Namespace.xhtml).count, 2)
        XCTAssertEqual(root.descendants("section").first?.attribute("type", namespace: Namespace.ops), "chapter")
    }

    func testDeepNestingIsBounded() {
        let deep = Array((String(repeating: "<a>", count: 5000) + String(repeating: "</a>", count: 5000)).utf8)
        XCTAssertThrowsError(try XMLParser.parse(deep, path: "deep.xml"))
        // Recovery keeps what libxml2 read before its depth limit (256), with a warning.
        if let recovered = try? XMLParser.parse(deep, path: "deep.xml", mode: .recover) {
            XCTAssertLessThanOrEqual(recovered.nodeCount, 300)
            XCTAssertFalse(recovered.warnings.isEmpty)
        }
    }
}
