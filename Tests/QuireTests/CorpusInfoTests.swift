@preconcurrency import CLibXML2
import Foundation
import XCTest

/// `quire info --json` over every corpus EPUB, checked against counts computed independently:
/// Info-ZIP's `unzip` reads the archive and XPath over the raw XML does the counting.
final class CorpusInfoTests: XCTestCase {
    struct Expected {
        var spine: Int
        var toc: Int
        var pageList: Int
    }

    /// XPath over a raw document, recovering from errors the way a lenient reader would.
    final class RawXML {
        let document: xmlDocPtr
        init?(_ data: Data) {
            let options = Int32(XML_PARSE_RECOVER.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
            guard let document = data.withUnsafeBytes({ buffer in
                xmlReadMemory(buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count), "raw.xml", nil, options)
            }) else { return nil }
            self.document = document
        }
        deinit { xmlFreeDoc(document) }

        func nodes(_ expression: String) -> [xmlNodePtr] {
            guard let context = xmlXPathNewContext(document) else { return [] }
            defer { xmlXPathFreeContext(context) }
            guard let result = xmlXPathEvalExpression(expression, context) else { return [] }
            defer { xmlXPathFreeObject(result) }
            guard let set = result.pointee.nodesetval, set.pointee.nodeNr > 0 else { return [] }
            return (0..<Int(set.pointee.nodeNr)).map { set.pointee.nodeTab[$0]! }
        }

        func count(_ expression: String) -> Int { nodes(expression).count }

        func string(_ expression: String) -> String? {
            guard let node = nodes(expression).first, let content = xmlNodeGetContent(node) else { return nil }
            defer { xmlFree(content) }
            return String(cString: content)
        }
    }

    /// Resolves an href against a document path, independently of the code under test.
    static func resolve(_ href: String, against base: String) -> String {
        let path = String(href.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let decoded = path.removingPercentEncoding ?? path
        let joined = URL(fileURLWithPath: "/" + base).deletingLastPathComponent().appendingPathComponent(decoded).standardizedFileURL.path
        return String(joined.dropFirst())
    }

    static func expected(for book: URL) throws -> Expected {
        let container = try XCTUnwrap(RawXML(XCTUnwrap(TestSupport.unzipEntry(book, "META-INF/container.xml"))))
        let opfPath = try XCTUnwrap(container.string("//*[local-name()='rootfile'][1]/@full-path"))
        let opf = try XCTUnwrap(RawXML(XCTUnwrap(TestSupport.unzipEntry(book, opfPath))))
        let spine = opf.count("//*[local-name()='spine']/*[local-name()='itemref']")
        func tokenTest(_ attribute: String, _ token: String) -> String {
            "contains(concat(' ', normalize-space(\(attribute)), ' '), ' \(token) ')"
        }
        var toc = 0
        var pageList = 0
        if let navHref = opf.string("//*[local-name()='item'][\(tokenTest("@properties", "nav"))]/@href"),
            let navData = try TestSupport.unzipEntry(book, resolve(navHref, against: opfPath)), let nav = RawXML(navData)
        {
            let epubType = "@*[local-name()='type']"
            toc = nav.count("(//*[local-name()='nav'][\(tokenTest(epubType, "toc")) or @role='doc-toc'])[1]//*[local-name()='li']")
            pageList = nav.count(
                "(//*[local-name()='nav'][\(tokenTest(epubType, "page-list")) or @role='doc-pagelist'])[1]//*[local-name()='li']")
        }
        if toc == 0 {
            let ncxHref =
                opf.string("//*[local-name()='item'][@id=//*[local-name()='spine']/@toc]/@href")
                ?? opf.string("//*[local-name()='item'][@media-type='application/x-dtbncx+xml']/@href")
            if let ncxHref, let data = try TestSupport.unzipEntry(book, resolve(ncxHref, against: opfPath)), let ncx = RawXML(data) {
                toc = ncx.count("//*[local-name()='navMap']//*[local-name()='navPoint']")
                if pageList == 0 { pageList = ncx.count("//*[local-name()='pageList']//*[local-name()='pageTarget']") }
            }
        }
        return Expected(spine: spine, toc: toc, pageList: pageList)
    }

    func testInfoMatchesPackageDocumentsOnEveryCorpusEPUB() throws {
        let books = try TestSupport.corpusEPUBs()
        XCTAssertGreaterThanOrEqual(books.count, 69, "the corpus MANIFEST lists 69 EPUBs")
        for book in books {
            let name = book.lastPathComponent
            let result = try TestSupport.quire("info", "--json", book.path)
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            guard result.status == 0 else { continue }
            let info = try XCTUnwrap(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], name)
            let expected = try Self.expected(for: book)
            let spine = info["spine"] as? [String: Any]
            let toc = info["toc"] as? [String: Any]
            let pageList = info["pageList"] as? [String: Any]
            XCTAssertEqual(spine?["count"] as? Int, expected.spine, "\(name): spine count")
            XCTAssertEqual(toc?["count"] as? Int, expected.toc, "\(name): toc entry count")
            XCTAssertEqual(pageList?["count"] as? Int, expected.pageList, "\(name): page-list count")
            XCTAssertEqual((spine?["items"] as? [Any])?.count, expected.spine, "\(name): spine items listed")
        }
    }

    func testTitlesAndLanguagesInOtherScripts() throws {
        let corpus = try TestSupport.requireCorpus()
        let cases: [(String, String, String)] = [
            ("idpf-epub3-samples/israelsailing.epub", "מפליגים בישראל", "he"),
            ("idpf-epub3-samples/mahabharata.epub", "महाभारत", "sa"),
            ("idpf-epub3-samples/kusamakura-japanese-vertical-writing.epub", "草枕", "ja-jp"),
            ("idpf-epub3-samples/haruko-html-jpeg.epub", "ハルコさんの彼氏", "ja-jp"),
            ("idpf-epub3-samples/jlreq-in-japanese.epub", "日本語組版処理の要件（日本語版）", "ja"),
            ("tdpf-epub3guide-zh-hant/01_Reflow_Text_Horizontal.epub", "巴黎茶花女遺事", "zh-TW"),
            ("idpf-epub3-samples/regime-anticancer-arabic.epub", "Le Vrai Régime anti-cancer", "ar"),
        ]
        for (path, title, language) in cases {
            let result = try TestSupport.quire("info", "--json", corpus.appendingPathComponent(path).path)
            XCTAssertEqual(result.status, 0, result.stderr)
            let info = try XCTUnwrap(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            XCTAssertEqual(info["title"] as? String, title, path)
            XCTAssertEqual((info["languages"] as? [String])?.first, language, path)
        }
        // The Arabic book's title carries its Arabic form as an alternate-script refinement.
        let arabic = try TestSupport.quire(
            "info", "--json", corpus.appendingPathComponent("idpf-epub3-samples/regime-anticancer-arabic.epub").path)
        let info = try XCTUnwrap(JSONSerialization.jsonObject(with: arabic.stdout) as? [String: Any])
        let titles = try XCTUnwrap(info["titles"] as? [[String: Any]])
        let alternates = try XCTUnwrap(titles.first?["alternateScripts"] as? [[String: Any]])
        XCTAssertEqual(alternates.first?["language"] as? String, "ar")
        XCTAssertTrue((alternates.first?["value"] as? String)?.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) } ?? false)
    }

    func testPageProgressionAndFixedLayout() throws {
        let corpus = try TestSupport.requireCorpus()
        let haruko = try TestSupport.quire(
            "info", "--json", corpus.appendingPathComponent("idpf-epub3-samples/haruko-html-jpeg.epub").path)
        let info = try XCTUnwrap(JSONSerialization.jsonObject(with: haruko.stdout) as? [String: Any])
        XCTAssertEqual(info["layout"] as? String, "pre-paginated")
        XCTAssertEqual(info["pageProgression"] as? String, "rtl")
        let cole = try TestSupport.quire(
            "info", "--json", corpus.appendingPathComponent("idpf-epub3-samples/cole-voyage-of-life.epub").path)
        let coleInfo = try XCTUnwrap(JSONSerialization.jsonObject(with: cole.stdout) as? [String: Any])
        let spine = try XCTUnwrap(coleInfo["spine"] as? [String: Any])
        let prePaginated = try XCTUnwrap(spine["prePaginated"] as? Int)
        XCTAssertGreaterThan(prePaginated, 0, "cole-voyage-of-life mixes fixed-layout items into a reflowable book")
        XCTAssertLessThan(prePaginated, spine["count"] as? Int ?? 0)
    }
}
