import Foundation
import QuireContainer
import QuireCore
import QuireDocument
import QuireImages
import QuireLayout
import QuirePositions
import QuireStyle
import XCTest

/// Inputs the fuzz targets (Fuzz/, `make fuzz`) found crashing, minimised. Each must now be read
/// or refused with a `QuireError`, never trap.
final class FuzzRegressionTests: XCTestCase {
    /// An ISO BMFF box: big-endian size, type, body.
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + body
    }

    /// FuzzImages: an AVIF `ispe` of 0xFFFFFFFF × 0xFFFFFFFF overflowed Int comparing its area.
    func testAVIFHugeImageSpatialExtents() throws {
        let ispe = Self.box("ispe", [0, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF] + [0xFF, 0xFF, 0xFF, 0xFF])
        let smaller = Self.box("ispe", [0, 0, 0, 0] + [0, 0, 0, 2] + [0, 0, 0, 2])
        let meta = Self.box("meta", [0, 0, 0, 0] + Self.box("iprp", Self.box("ipco", smaller + ispe)))
        let bytes = Self.box("ftyp", Array("avifmif1".utf8)) + meta
        XCTAssertEqual(ImageFormat.sniff(bytes), .avif)
        XCTAssertThrowsError(try ImageInfo.measure(bytes)) { error in
            XCTAssertEqual((error as? QuireError)?.kind, "limit-exceeded", "\(error)")
        }
    }

    /// FuzzPositions (a hostile positions.json, as `quire locate` reads one): a spine item listed
    /// twice trapped building the map's index (Dictionary(uniqueKeysWithValues:)).
    func testPositionMapListingASpineItemTwice() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("book.epub")
        try TestBook().write(to: url)
        let (layout, result) = try LayoutTests.layout(url.path)
        var map = PositionMap(layout: layout, result: result, identity: try .of(file: url.path), profileName: nil, withImages: false)
        let first = try XCTUnwrap(map.spine?.first)
        var copy = first
        copy.firstPage = 99
        map.spine?.append(copy)
        let index = MapIndex(map: try PositionMap(bytes: map.serializedBytes()))
        XCTAssertEqual(index.chapter(spineIndex: first.index)?.firstPage, first.firstPage)
        XCTAssertEqual(try index.page(of: Position(spineIndex: first.index, offset: 0)), 1)
    }

    /// FuzzLayout (minimised to `<l lang><body><`): text in lang="" (language unknown) trapped in
    /// the shaper, which force-unwrapped HarfBuzz's language for the empty tag (NULL).
    func testLayoutOfTextWithAnEmptyLanguage() throws {
        let xhtml = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><title>T</title></head>
            <body><p lang="">Text in no language.</p><p xml:lang="">More.</p></body></html>
            """
        for chapter in [xhtml, "<l lang><body><"] {
            let (_, layout) = try LayoutTests.layoutChapter(chapter)
            XCTAssertFalse(layout.pages.isEmpty)
        }
        let (_, layout) = try LayoutTests.layoutChapter(xhtml)
        XCTAssertEqual(layout.textLength, "Text in no language.More.".utf16.count)
    }

    /// FuzzXHTML (a CFI made at an offset must resolve to it): an element id holding ";" is written
    /// escaped (`^;`) in the CFI's assertion, but the parser cut the id there, so the assertion
    /// failed and the CFI Quire wrote did not resolve.
    func testCFIAssertionOfAnIdWithASemicolon() throws {
        XCTAssertEqual(try CFI.parse("epubcfi(/6/4!/4/2[a^;b^,c^]d;s=b]/1:0)").contentSteps[1].assertion, "a;b,c]d")
        let xhtml = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head>
            <body><p id="a;b,c[d]^e">one</p><p id="x;y">two</p></body></html>
            """
        let text = DocumentText(try ContentDocument.parse(Array(xhtml.utf8), path: "c.xhtml"))
        for offset in 0...text.length {
            let cfi = CFI.make(spineStep: 6, spineIndex: 0, itemrefID: "c;1", text: text, offset: offset)
            let path = try CFI.parse(cfi)
            XCTAssertEqual(try CFI.offset(of: path, in: text), offset, cfi)
            XCTAssertEqual(try CFI.spineIndex(of: path, spineStep: 6, itemrefIDs: ["c;1"]), 0, cfi)
        }
    }

    /// FuzzXHTML (an XPointer made at an offset names the first character crengine keeps at or
    /// after it): text after the last node crengine keeps (here stray text in a `tbody`, which
    /// crengine's DOM refuses) has no such character, so its XPointer names the end of the last
    /// kept text: the same place for every offset there, before it, never an error or a guess.
    func testXPointerAfterTheLastTextCrengineKeeps() throws {
        let xhtml = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head>
            <body><table><tbody><tr><td>one</td><td>two</td></tr>
            stray </tbody></table></body></html>
            """
        let document = try ContentDocument.parse(Array(xhtml.utf8), path: "c.xhtml")
        let text = DocumentText(document)
        let model = try XCTUnwrap(CrengineText(text, styles: CrengineStyle.of(document) { _ in nil }))
        let lastKept = try XCTUnwrap(model.nodes.last).end
        let whole = String(decoding: text.units, as: UTF16.self)
        let stray = try XCTUnwrap(whole.range(of: "stray"), "Quire keeps the stray text")
        XCTAssertGreaterThanOrEqual(whole.utf16.distance(from: whole.startIndex, to: stray.lowerBound), lastKept, "crengine does not")
        for offset in 0...text.length {
            let pointer = XPointer.make(spineIndex: 0, fragmentCount: 1, text: text, model: model, offset: offset)
            let back = try XPointer.offset(of: XPointer.parse(pointer), in: text, model: model)
            if offset > lastKept {
                XCTAssertEqual(back, lastKept, "\(offset): \(pointer)")
                XCTAssertTrue(pointer.hasSuffix("td[2]/text().3"), pointer)
            } else {
                XCTAssertGreaterThanOrEqual(back, offset, pointer)
            }
        }
        // A document crengine keeps no text of (white space around a picture): an offset names
        // the element holding it, which resolves to that element's start (at or before it).
        let picture = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head>
            <body>
              <div><img alt="cover" src="cover.png"/></div>
            </body></html>
            """
        let pictureDocument = try ContentDocument.parse(Array(picture.utf8), path: "c.xhtml")
        let pictureText = DocumentText(pictureDocument)
        let empty = try XCTUnwrap(CrengineText(pictureText, styles: CrengineStyle.of(pictureDocument) { _ in nil }))
        XCTAssertTrue(empty.nodes.isEmpty)
        for offset in 0...pictureText.length {
            let pointer = XPointer.make(spineIndex: 0, fragmentCount: 1, text: pictureText, model: empty, offset: offset)
            XCTAssertFalse(pointer.contains("text()"), pointer)
            let back = try XPointer.offset(of: XPointer.parse(pointer), in: pictureText, model: empty)
            XCTAssertLessThanOrEqual(back, offset, pointer)
            XCTAssertTrue(pointer.hasPrefix("/body/DocFragment/body"), pointer)
        }
    }
}
