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

/// A small JSON Schema checker for the keywords docs/position-map.schema.json uses.
struct SchemaValidator {
    let root: [String: Any]

    func validate(_ value: Any, _ schema: [String: Any], path: String = "$", errors: inout [String]) {
        var schema = schema
        if let reference = schema["$ref"] as? String, reference.hasPrefix("#/$defs/") {
            schema = (root["$defs"] as? [String: Any])?[String(reference.dropFirst(8))] as? [String: Any] ?? [:]
        }
        if let type = schema["type"] {
            let types = (type as? [String]) ?? [type as? String ?? ""]
            if !types.contains(where: { matches(value, $0) }) {
                errors.append("\(path): expected \(types.joined(separator: "|")), got \(value)")
                return
            }
        }
        if let options = schema["enum"] as? [String], let string = value as? String, !options.contains(string) {
            errors.append("\(path): \(string) not in \(options)")
        }
        if let number = value as? Double, !(value is Bool) {
            if let minimum = schema["minimum"] as? Double, number < minimum { errors.append("\(path): \(number) < \(minimum)") }
            if let maximum = schema["maximum"] as? Double, number > maximum { errors.append("\(path): \(number) > \(maximum)") }
        }
        if let object = value as? [String: Any] {
            for key in schema["required"] as? [String] ?? [] where object[key] == nil { errors.append("\(path): missing \(key)") }
            for (key, sub) in schema["properties"] as? [String: Any] ?? [:] {
                if let child = object[key], let sub = sub as? [String: Any] { validate(child, sub, path: "\(path).\(key)", errors: &errors) }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            // Every item of short arrays; a sample of long ones keeps the test fast.
            let step = max(1, array.count / 200)
            for index in stride(from: 0, to: array.count, by: step) { validate(array[index], items, path: "\(path)[\(index)]", errors: &errors) }
        }
    }

    func matches(_ value: Any, _ type: String) -> Bool {
        switch type {
        case "null": return value is NSNull
        case "string": return value is String
        case "boolean": return String(describing: Swift.type(of: value)).contains("Bool")
        case "integer": return (value as? Double).map { $0.rounded() == $0 } ?? false
        case "number": return value is Double || value is Int
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        default: return true
        }
    }
}

final class PositionTests: XCTestCase {
    static func map(_ book: String, profile: String = "kobo-clara", directory: URL) throws -> (URL, [String: Any]) {
        let out = directory.appendingPathComponent(profile + "-" + URL(fileURLWithPath: book).deletingPathExtension().lastPathComponent)
        _ = try Pagination(Book.open(book), settings: PaginationSettings(profile: profile)).write(WriteRequest(directory: out.path, paint: nil))
        let url = out.appendingPathComponent("positions.json")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return (url, json)
    }

    func testCFIParsingSpecExamples() throws {
        let path = try CFI.parse("epubcfi(/6/4[chap01ref]!/4[body01]/10[para05]/3:10)")
        XCTAssertEqual(path.packageSteps, [CFI.Step(index: 6, assertion: nil), CFI.Step(index: 4, assertion: "chap01ref")])
        XCTAssertEqual(path.contentSteps.map(\.index), [4, 10, 3])
        XCTAssertEqual(path.contentSteps.map(\.assertion), ["body01", "para05", nil])
        XCTAssertEqual(path.offset, 10)
        // A range resolves to its start; escaped characters in assertions; side bias.
        let range = try CFI.parse("epubcfi(/6/4[chap01ref]!/4[body01]/10[para05],/2/1:1,/3:4)")
        XCTAssertEqual(range.contentSteps.map(\.index), [4, 10, 2, 1])
        XCTAssertEqual(range.offset, 1)
        XCTAssertEqual(try CFI.parse("epubcfi(/6/4!/4/2[id^[1^]]/1:0)").contentSteps[1].assertion, "id[1]")
        XCTAssertEqual(try CFI.parse("epubcfi(/6/4!/4/2/1:3[;s=a])").sideBias, "a")
        XCTAssertThrowsError(try CFI.parse("epubcfi(/6/x)"))
    }

    /// The CFI specification's worked example document.
    func testCFIResolutionOnSpecDocument() throws {
        let xhtml = """
            <?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head>
            <body id="body01"><p>one</p><p>two</p><p>three</p><p>four</p><p id="para05">xxx<em>yyy</em>0123456789</p><p>six</p></body></html>
            """
        let document = try ContentDocument.parse(Array(xhtml.utf8), path: "chap01.xhtml")
        let text = DocumentText(document)
        let offset = try CFI.offset(of: CFI.parse("epubcfi(/6/4[chap01ref]!/4[body01]/10[para05]/3:10)"), in: text)
        let units = text.units
        XCTAssertEqual(String(decoding: units[(offset - 1)..<offset], as: UTF16.self), "9", "offset 10 falls after the tenth character")
        XCTAssertThrowsError(try CFI.offset(of: CFI.parse("epubcfi(/6/4!/4[wrong]/10/3:1)"), in: text)) {
            XCTAssertTrue(($0 as? QuireError)?.description.contains("assertion") ?? false)
        }
        XCTAssertThrowsError(try CFI.offset(of: CFI.parse("epubcfi(/6/4!/4/10/3:99)"), in: text), "offset past the text")
        // Generation and resolution are inverse for every offset (CFIs exactly; XPointers to the
        // first character crengine keeps at or after it: collapsed white space names the next one).
        let model = CrengineText(text, styles: CrengineStyle.of(document) { _ in nil })
        XCTAssertNotNil(model)
        for target in 0...text.length {
            let path = try CFI.parse("epubcfi(/6/2!" + CFI.contentPath(text: text, offset: target) + ")")
            XCTAssertEqual(try CFI.offset(of: path, in: text), target, "offset \(target)")
            let pointer = XPointer.make(spineIndex: 0, fragmentCount: 1, text: text, model: model, offset: target)
            let back = try XPointer.offset(of: XPointer.parse(pointer), in: text, model: model)
            XCTAssertGreaterThanOrEqual(back, target, pointer)
            XCTAssertTrue(String(decoding: text.units[target..<back], as: UTF16.self).allSatisfy(\.isWhitespace), pointer)
        }
    }

    /// crengine's model of a document follows only UTF-8: one whose XML declaration names
    /// another encoding has none (its XPointers count the DOM instead), in any case of the
    /// words, after a byte-order mark too; UTF-8 named or not is followed.
    func testCrengineModelOnlyForUTF8Documents() throws {
        let body = #"<html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head><body><p>one two</p></body></html>"#
        let cases: [(String, Bool)] = [
            (#"<?xml version="1.0" encoding="ISO-8859-1"?>"#, false),
            (#"<?xml version="1.0" encoding="Windows-1252"?>"#, false),
            ("\u{FEFF}" + #"<?xml version="1.0" encoding="iso-8859-1"?>"#, false),
            (#"<?xml version="1.0" encoding="UTF-8"?>"#, true),
            (#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>"#, true),
            (#"<?xml version="1.0"?>"#, true),
            ("", true),
        ]
        for (declaration, followed) in cases {
            let document = try ContentDocument.parse(Array((declaration + "\n" + body).utf8), path: "c.xhtml")
            let model = CrengineText(DocumentText(document), styles: CrengineStyle.of(document) { _ in nil })
            XCTAssertEqual(model != nil, followed, declaration)
        }
    }

    /// KOReader's partial MD5, computed here independently: the samples are cut with FileHandle and
    /// hashed by coreutils' md5sum.
    func testPartialMD5MatchesIndependentImplementation() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files = [try LayoutTests.sampleBook()]
        let tiny = directory.appendingPathComponent("tiny.bin")
        try Data("short".utf8).write(to: tiny)
        files.append(tiny)
        let large = directory.appendingPathComponent("large.bin")
        try Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) }).write(to: large)
        files.append(large)
        if let corpus = TestSupport.corpus {
            files.append(corpus.appendingPathComponent("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub"))
        }
        for file in files {
            let handle = try FileHandle(forReadingFrom: file)
            let size = try handle.seekToEnd()
            var samples = Data()
            for offset in [UInt64(0)] + (0...10).map({ UInt64(1024) << (2 * UInt64($0)) }) {
                if offset >= size { break }
                try handle.seek(toOffset: offset)
                samples.append(try handle.read(upToCount: 1024) ?? Data())
            }
            try handle.close()
            let samplesFile = directory.appendingPathComponent("samples")
            try samples.write(to: samplesFile)
            let md5sum = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/md5sum"), [samplesFile.path])
            let expected = String(md5sum.stdoutText.prefix(32))
            XCTAssertEqual(try PartialMD5.of(file: file.path), expected, file.lastPathComponent)
        }
    }

    func testSampleMapRoundTripsAndValidates() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try LayoutTests.sampleBook().path
        let (url, json) = try Self.map(book, directory: directory)
        let schema = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: TestSupport.packageRoot.appendingPathComponent("docs/position-map.schema.json"))) as? [String: Any])
        var errors: [String] = []
        SchemaValidator(root: schema).validate(json, schema, errors: &errors)
        XCTAssertEqual(errors, [])
        try Self.checkRoundTrips(map: url, book: book)
        XCTAssertEqual((json["pageList"] as? [Any])?.count, 8)
        XCTAssertNotNil((json["toc"] as? [[String: Any]])?.first?["page"] as? Int)
    }

    /// `quire locate B --from A --page N`: the page of B matching A's page N. Mapped
    /// into its own geometry every page comes back exactly; into another and back, within one page.
    func testCrossGeometryLocate() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try LayoutTests.sampleBook().path
        let (kobo, _) = try Self.map(book, profile: "kobo-clara", directory: directory)
        let (phone, _) = try Self.map(book, profile: "phone", directory: directory)
        let a = try MapIndex(path: kobo.path)
        let b = try MapIndex(path: phone.path)
        XCTAssertNotEqual(a.pageCount, b.pageCount, "the two geometries paginate differently")
        for page in 1...a.pageCount {
            XCTAssertEqual(try a.page(matching: page, in: a), try a.page(of: a.startPosition(ofPage: page)), "same geometry is exact")
            let result = try TestSupport.quire("locate", phone.path, "--from", kobo.path, "--page", "\(page)", "--json")
            XCTAssertEqual(result.status, 0, result.stderr)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
            let there = try XCTUnwrap(json["page"] as? Int)
            XCTAssertEqual(there, try b.page(matching: page, in: a))
            let back = try a.page(matching: there, in: b)
            XCTAssertLessThanOrEqual(abs(back - page), 1, "kobo page \(page) → phone \(there) → kobo \(back)")
        }
    }

    /// page → Locator → page, page → CFI → page and page → XPointer → page all come back to the page
    /// (or, for pages that share their start with the next page, to that canonical page).
    static func checkRoundTrips(map url: URL, book: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let map = try MapIndex(path: url.path)
        let anchors = BookAnchors(container: try EPUBContainer.open(path: book))
        var mismatches: [String] = []
        for page in 1...map.pageCount {
            let entry = try map.entry(page: page)
            let start = try map.startPosition(ofPage: page)
            let canonical = try map.page(of: start)
            if canonical != page && (page == map.pageCount || map.pageStarts[page] != start) {
                mismatches.append("page \(page): canonical \(canonical)")
            }
            let locator = Locate.startLocator(entry)
            let progressionOnly = Locator(href: locator.href, type: locator.type, locations: .init(progression: locator.locations.progression))
            let (viaLocator, _) = try Locate.resolve(locator: progressionOnly, map: map, positionOfFragment: { try anchors.position(spineIndex: $0, id: $1) })
            if viaLocator != canonical { mismatches.append("page \(page): locator → \(viaLocator)") }
            let view = try XCTUnwrap(entry.text).start
            if let cfi = view.cfi {
                let viaCFI = try map.page(of: anchors.position(cfi: cfi, spineStep: map.spineStep))
                if viaCFI != canonical { mismatches.append("page \(page): cfi \(cfi) → \(viaCFI)") }
            }
            if let pointer = view.xpointer {
                let viaXPointer = try map.page(of: anchors.position(xpointer: pointer))
                if viaXPointer != canonical { mismatches.append("page \(page): xpointer \(pointer) → \(viaXPointer)") }
            }
        }
        XCTAssertEqual(mismatches, [], "\(url.path): " + mismatches.prefix(5).joined(separator: "; "), file: file, line: line)
    }

    func testUnresolvableQueriesExitThree() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let book = try LayoutTests.sampleBook().path
        let (url, _) = try Self.map(book, directory: directory)
        let cases: [[String]] = [
            ["--locator", #"{"href":"text/nowhere.xhtml","locations":{"progression":0.5}}"#],
            ["--cfi", "epubcfi(/6/6[not-this-one]!/4/2/1:0)", "--book", book],
            ["--xpointer", "/body/DocFragment[3]/body/section/p[400]/text().0", "--book", book],
            ["--xpointer", "/body/DocFragment[99]/body/p/text().0", "--book", book],
            ["--page", "100000"],
            ["--label", "no-such-label"],
            ["--toc", "No Such Chapter"],
        ]
        for arguments in cases {
            let result = try TestSupport.quire(*["locate", url.path] + arguments)
            XCTAssertEqual(result.status, 3, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stdout.isEmpty, "never a page")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1)
        }
        // A map from a different book: cross-geometry refuses it.
        let other = directory.appendingPathComponent("other.epub")
        var different = TestBook()
        different.title = "Another Book"
        try different.write(to: other)
        let (otherMap, _) = try Self.map(other.path, directory: directory)
        let result = try TestSupport.quire("locate", url.path, "--from", otherMap.path, "--page", "1")
        XCTAssertEqual(result.status, 3, result.stderr)
    }
}

prefix operator *
/// Splats an array into the variadic `TestSupport.quire`.
prefix func * (arguments: [String]) -> [String] { arguments }

extension TestSupport {
    static func quire(_ arguments: [String]) throws -> Result { try run(quireBinary, arguments) }
}
