import Foundation
import Quire
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import QuirePositions
import QuireXML
import XCTest

/// Positions as the reading apps read them: KOReader's XPointers checked by a crengine model of
/// the tests' own (CrengineReference.swift, written from crengine's code), Readium's and Komga's
/// positions lists by an implementation of the tests' own (PositionsListReference.swift), and
/// the CFI and Locator input Quire refuses.
final class ReadingAppPositionTests: XCTestCase {
    // MARK: crengine's text model

    /// Non-whitespace characters (crengine's space, tab, CR, LF) in Quire's body text before an offset.
    static func nonSpaceCount(_ text: DocumentText, before offset: Int) -> Int {
        String(decoding: text.units[0..<min(offset, text.units.count)], as: UTF16.self).unicodeScalars.filter {
            !($0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r")
        }.count
    }

    /// The tests' crengine model of a document, styled by Quire's cascade at the reference page.
    static func reference(_ document: ContentDocument, styles: [CrengineStyle]) throws -> CrengineDocument {
        let elements = (0..<Int32(document.tree.nodeCount)).filter { document.tree.kind(of: NodeID($0)) == .element }
        return try CrengineDocument(source: document.source) { ordinal, _ in
            let style = ordinal < elements.count ? styles[Int(elements[ordinal])] : []
            return CrengineElementStyle(
                display: style.contains(.inline) ? .inline : style.contains(.block) ? .block : .none, isPre: style.contains(.pre),
                isFloating: style.contains(.floating), hasBefore: style.contains(.before), hasAfter: style.contains(.after),
                isInlineBlock: style.contains(.inline) && style.contains(.block))
        }
    }

    /// Quire's pointer for every character of a document, against the reference's: the same string,
    /// and Quire resolves the reference's pointer to that character.
    func checkAgainstReference(_ xhtml: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let document = try ContentDocument.parse(Array(xhtml.utf8), path: "t.xhtml")
        let text = DocumentText(document)
        let styles = CrengineStyle.of(document) { _ in nil }
        let model = try XCTUnwrap(CrengineText(text, styles: styles), "crengine's model follows the source", file: file, line: line)
        let reference = try Self.reference(document, styles: styles)
        var pointers: [String] = []
        let scalars = Array(String(decoding: text.units, as: UTF16.self).unicodeScalars)
        var offset = 0
        var nonSpace = 0
        for scalar in scalars {
            defer { offset += scalar.utf16.count }
            guard !(scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r") else { continue }
            let quire = XPointer.make(spineIndex: 1, fragmentCount: 3, text: text, model: model, offset: offset)
            let expected = reference.xpointer(nonSpaceBefore: nonSpace, fragment: 2, fragmentCount: 3)
            XCTAssertEqual(quire, expected, "before '\(scalar)' (\(nonSpace) non-space characters in)", file: file, line: line)
            if let expected {
                let resolved = try XPointer.offset(of: XPointer.parse(expected), in: text, model: model)
                XCTAssertEqual(resolved, offset, "\(expected) resolves to '\(scalar)'", file: file, line: line)
                XCTAssertEqual(try reference.resolve(quire).nonSpaceBefore, nonSpace, quire, file: file, line: line)
            }
            pointers.append(quire)
            nonSpace += 1
        }
        return pointers
    }

    static func page(_ body: String, head: String = "") -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title>\(head)</head>
        <body>\(body)</body></html>
        """
    }

    func testWhitespaceBetweenInlineElementsIsANode() throws {
        let pointers = try checkAgainstReference(Self.page("<p>The <a href='#'>x</a> <code>y</code> z</p>"))
        // "The ", "x", " ", "y", " z": the last text of <p> is its third text node.
        XCTAssertEqual(pointers.last, "/body/DocFragment[2]/body/p/text()[3].1")
    }

    func testCollapsedWhitespaceCountsOnce() throws {
        let pointers = try checkAgainstReference(Self.page("<p>one\n\t  two   three</p>\n  <p>\n four</p>"))
        XCTAssertEqual(pointers[3], "/body/DocFragment[2]/body/p[1]/text().4", "'one two': t is the fifth character")
        XCTAssertEqual(pointers.last, "/body/DocFragment[2]/body/p[2]/text().4", "a leading space is kept (there is no trim)")
    }

    func testCommentsEndATextNode() throws {
        let pointers = try checkAgainstReference(Self.page("<p>before<!-- note -->after</p>"))
        XCTAssertEqual(pointers.last, "/body/DocFragment[2]/body/p/text()[2].4")
    }

    func testPreTabsAndLeadingNewline() throws {
        let pointers = try checkAgainstReference(Self.page("<pre>\nA\tB\n\tC</pre>"))
        // The newline after <pre> goes; A, a tab, B, newline, then a tab of 7 (after a newline the column is 1).
        // The newline goes after the tabs are expanded: "\nA" puts A at column 2, so the tab is 6.
        XCTAssertEqual(pointers, [
            "/body/DocFragment[2]/body/pre/text().0", "/body/DocFragment[2]/body/pre/text().7",
            "/body/DocFragment[2]/body/pre/text().16",
        ])
    }

    func testLongRunsSplitAfterTheLastSpaceOf8192() throws {
        let words = (0..<2_000).map { "w\($0)" }.joined(separator: " ")  // about 11,000 characters
        let pointers = try checkAgainstReference(Self.page("<p>\(words) &amp; <b>end</b></p>"))
        XCTAssertTrue(pointers.contains { $0.contains("/p/text()[2].") }, "the run is two nodes")
        let unbroken = String(repeating: "x", count: 9_000)
        let split = try checkAgainstReference(Self.page("<p>\(unbroken)</p>"))
        XCTAssertEqual(split[8_192], "/body/DocFragment[2]/body/p/text()[2].0", "without a space, the cut is at 8,192")
    }

    func testCharactersOutsideTheBMPCountOnce() throws {
        let pointers = try checkAgainstReference(Self.page("<p>a\u{1F600}b &#x1F600; c</p>"))
        XCTAssertEqual(pointers[2], "/body/DocFragment[2]/body/p/text().2", "the emoji is one character")
    }

    func testCDATAAndEntities() throws {
        // (`&nbsp;` is no XML entity: a page using it undeclared is read by the HTML parser.)
        _ = try checkAgainstReference(Self.page("<p>x &lt;y&gt; &#169; &#160; <![CDATA[ a <b> ]]> z</p>"))
    }

    func testMixedContentWhitespaceRemovedAtRender() throws {
        // <div> holds blocks and inline text: the white space between blocks goes, the text stays.
        let pointers = try checkAgainstReference(Self.page("<div>\n<p>one</p>\n loose <i>text</i>\n<p>two</p>\n</div>"))
        XCTAssertEqual(pointers.last, "/body/DocFragment[2]/body/div/p[2]/text().2")
        XCTAssertTrue(pointers.contains("/body/DocFragment[2]/body/div/text().1"), "'loose' is the div's only text node left: \(pointers)")
    }

    /// docs/position-map.md's worked example.
    func testWorkedExampleInTheDocs() throws {
        let fragment = "<section>\n  <p>The <a href=\"#n1\">note</a> <code>x</code>\n     and then,\ta tab.<!-- c -->After</p>\n</section>"
        let pointers = try checkAgainstReference(Self.page(fragment))
        let text = "Thenotexandthen,atab.After"
        let at = { (word: String) in pointers[text.distance(from: text.startIndex, to: text.range(of: word)!.lowerBound)] }
        XCTAssertEqual(at("atab"), "/body/DocFragment[2]/body/section/p/text()[3].11")
        XCTAssertEqual(at("After"), "/body/DocFragment[2]/body/section/p/text()[4].0")
        // Quire's DOM has the comment's two sides as one node, the blank one between </a> and <code> aside.
        let document = try ContentDocument.parse(Array(Self.page(fragment).utf8), path: "t.xhtml")
        let text16 = DocumentText(document)
        let offset = String(decoding: text16.units, as: UTF16.self).utf16.distance(
            from: String(decoding: text16.units, as: UTF16.self).utf16.startIndex,
            to: String(decoding: text16.units, as: UTF16.self).range(of: "a tab")!.lowerBound)
        XCTAssertEqual(XPointer.make(spineIndex: 1, fragmentCount: 3, text: text16, model: nil, offset: offset), "/body/DocFragment[2]/body/section/p/text()[2].16")
    }

    func testOlderAndNewerPointerSpellingsResolveAlike() throws {
        let document = try ContentDocument.parse(Array(Self.page("<div><p>alpha</p><p>beta <b>x</b> gamma</p></div>").utf8), path: "a.xhtml")
        let text = DocumentText(document)
        let model = CrengineText(text, styles: CrengineStyle.of(document) { _ in nil })
        let classic = try XPointer.offset(of: XPointer.parse("/body/DocFragment/body/div/p[2]/text()[2].1"), in: text, model: model)
        let explicit = try XPointer.offset(of: XPointer.parse("/body[1]/DocFragment[1]/body[1]/div[1]/p[2]/text()[2].1"), in: text, model: model)
        XCTAssertEqual(classic, explicit)
        XCTAssertEqual(String(decoding: text.units[classic..<(classic + 3)], as: UTF16.self), "gam")
        XCTAssertThrowsError(try XPointer.offset(of: XPointer.parse("/body/DocFragment/body/div/p[3]/text().0"), in: text, model: model))
        XCTAssertThrowsError(try XPointer.offset(of: XPointer.parse("/body/DocFragment/body/div/p[1]/text().6"), in: text, model: model)) {
            XCTAssertTrue("\($0)".contains("past the end"), "\($0)")
        }
    }

    /// A book made here: non-linear items (they are DocFragments for KOReader, not positions for
    /// Readium), and chapters with every case above.
    func testSyntheticBook() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let long = (0..<1_500).map { "word\($0)" }.joined(separator: " ")
        var book = TestBook()
        book.chapter = Self.page(
            "<h1>One</h1><p>The <a href='#x'>x</a> <code>y</code> z<!-- c -->after</p><pre>\n\tcode\there</pre><p>\(long)</p><p>\u{1F600} end</p>")
        book.extraManifest = """
            <item id="notes" href="notes.xhtml" media-type="application/xhtml+xml"/>
            <item id="c2" href="chapter2.xhtml" media-type="application/xhtml+xml"/>
            """
        book.extraSpine = #"<itemref idref="notes" linear="no"/><itemref idref="c2"/>"#
        book.extraEntries = [
            ZipWriter.Entry(name: "OEBPS/notes.xhtml", data: Array(Self.page("<p>A note.</p>").utf8)),
            ZipWriter.Entry(name: "OEBPS/chapter2.xhtml", data: Array(Self.page("<p>Two.</p>").utf8)),
        ]
        let url = directory.appendingPathComponent("synthetic.epub")
        try book.write(to: url)
        let opened = try Book.open(url.path)
        let pagination = try Pagination(opened, settings: PaginationSettings(profile: "phone"))
        let report = try pagination.write(WriteRequest(directory: directory.appendingPathComponent("out").path, paint: nil))
        _ = report
        let map = try PositionMap(path: directory.appendingPathComponent("out/positions.json").path)
        // Readium leaves the non-linear notes out; Komga keeps them.
        let readium = try XCTUnwrap(map.positions?[.readium]?.list)
        let komga = try XCTUnwrap(map.positions?[.komga]?.list)
        XCTAssertFalse(readium.contains { $0.href.hasSuffix("notes.xhtml") })
        XCTAssertTrue(komga.contains { $0.href.hasSuffix("notes.xhtml") })
        XCTAssertEqual(readium.map(\.position), Array(1...readium.count))
        let reference = try ReferencePositions.readium(epub: url.path)
        XCTAssertEqual(readium.map(\.href), reference.map(\.href))
        // A Readium position names its own resource: position 1 is not in chapter2.
        let chapter2 = #"{"href":"OEBPS/chapter2.xhtml","locations":{"position":1}}"#
        XCTAssertThrowsError(try pagination.resolve(.locator(Locator(jsonString: chapter2))))
        // DocFragments count every itemref: chapter2 is the third (chapter1, notes, chapter2).
        let last = try XCTUnwrap(map.pages.last)
        guard case .text(let text) = last.content else { return XCTFail("a text page") }
        XCTAssertTrue(text.start.xpointer?.hasPrefix("/body/DocFragment[3]/") ?? false, text.start.xpointer ?? "")
        // Every page start against the reference model.
        try checkPageStarts(book: url, map: map, opened: opened)
    }

    /// Every page start of a map, resolved by the reference's crengine rules, lands at the page's
    /// CFI offset; the reference's own pointer for that spot, resolved by Quire, lands there too.
    /// Returns (pages checked, failures).
    @discardableResult
    func checkPageStarts(book: URL, map: PositionMap, opened: Book) throws -> (Int, [String]) {
        let container = try EPUBContainer.open(path: book.path)
        let publication = container.publication
        var checked = 0
        var failures: [String] = []
        var bySpine: [Int: [(Int, PositionMap.Boundary)]] = [:]
        for page in map.pages {
            if case .text(let text) = page.content { bySpine[text.spineIndex, default: []].append((page.page, text.start)) }
        }
        for (spineIndex, starts) in bySpine.sorted(by: { $0.key < $1.key }) {
            guard let item = publication.item(for: publication.spine[spineIndex]), item.mediaType.contains("html"),
                let document = try? ContentDocument.read(item, from: container)
            else { continue }
            let text = DocumentText(document)
            let reference = try Self.reference(document, styles: CrengineStyle.of(document, container: container))
            for (page, start) in starts {
                guard let pointer = start.xpointer, let cfi = start.cfi else { continue }
                checked += 1
                let name = "\(book.lastPathComponent) page \(page)"
                let atCFI = try opened.position(cfi: cfi)
                guard atCFI.offset == start.offset else {
                    failures.append("\(name): cfi \(cfi) resolves to \(atCFI.offset), the map says \(start.offset)")
                    continue
                }
                let expected = Self.nonSpaceCount(text, before: atCFI.offset)
                do {
                    let resolved = try reference.resolve(pointer)
                    if resolved.fragment != spineIndex + 1 || resolved.nonSpaceBefore != expected {
                        failures.append("\(name): \(pointer) → fragment \(resolved.fragment), \(resolved.nonSpaceBefore) characters in; the CFI is \(expected) in")
                    }
                } catch {
                    failures.append("\(name): \(pointer) does not resolve under crengine's rules: \(error)")
                }
                if let theirs = reference.xpointer(nonSpaceBefore: expected, fragment: spineIndex + 1, fragmentCount: publication.spine.count),
                    let back = try? opened.position(xpointer: theirs),
                    Self.nonSpaceCount(text, before: back.offset) != expected || back.spineIndex != spineIndex
                {
                    failures.append("\(name): crengine's \(theirs) resolves in Quire to \(back)")
                }
            }
        }
        return (checked, failures)
    }

    /// The acceptance check on every corpus EPUB (the map made by the release binary, as users get it).
    func testEveryCorpusPageStartUnderCrengineRules() throws {
        let books = try TestSupport.corpusEPUBs()
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var total = 0
        var failures: [String] = []
        for book in books {
            let out = directory.appendingPathComponent(book.deletingPathExtension().lastPathComponent)
            let result = try TestSupport.quire("render", book.path, "--out", out.path, "--map-only", "--quiet")
            XCTAssertEqual(result.status, 0, "\(book.lastPathComponent): \(result.stderr)")
            guard result.status == 0 else { continue }
            let map = try PositionMap(path: out.appendingPathComponent("positions.json").path)
            let (checked, failed) = try checkPageStarts(book: book, map: map, opened: Book.open(book.path))
            total += checked
            failures += failed
            try? FileManager.default.removeItem(at: out)
        }
        print("crengine rules: \(total - failures.count) of \(total) page-start XPointers land at their CFI offset")
        XCTAssertGreaterThan(total, 5_000)
        XCTAssertEqual(failures.count, 0, failures.prefix(20).joined(separator: "\n"))
    }

    /// The pages the issue named: crengine's own pointer for each page start, given to `quire locate`.
    func testCrenginePointersForNamedPagesGiveTheirPage() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, page) in [("childrens-literature", 12), ("cole-voyage-of-life", 8), ("epub30-spec", 192)] {
            let book = try TestSupport.corpusFile("idpf-epub3-samples/\(name).epub")
            let out = directory.appendingPathComponent(name)
            XCTAssertEqual(try TestSupport.quire("render", book.path, "--out", out.path, "--map-only", "--quiet").status, 0)
            let map = try PositionMap(path: out.appendingPathComponent("positions.json").path)
            guard case .text(let start) = map.pages[page - 1].content else { return XCTFail("\(name) page \(page) has text") }
            let container = try EPUBContainer.open(path: book.path)
            let item = try XCTUnwrap(container.publication.item(for: container.publication.spine[start.spineIndex]))
            let document = try ContentDocument.read(item, from: container)
            let reference = try Self.reference(document, styles: CrengineStyle.of(document, container: container))
            let nonSpace = Self.nonSpaceCount(DocumentText(document), before: start.start.offset)
            let pointer = try XCTUnwrap(
                reference.xpointer(nonSpaceBefore: nonSpace, fragment: start.spineIndex + 1, fragmentCount: container.publication.spine.count))
            XCTAssertEqual(pointer, start.start.xpointer, "\(name) page \(page): the map writes crengine's pointer")
            let located = try TestSupport.quire("locate", out.appendingPathComponent("positions.json").path, "--xpointer", pointer, "--book", book.path)
            XCTAssertEqual(located.status, 0, located.stderr)
            XCTAssertEqual(located.stdoutText.split(separator: "\n").first.map(String.init), "\(page)", "\(name): \(pointer)")
            print("\(name) page \(page): \(pointer) → page \(page)")
        }
    }

    // MARK: Readium's and Komga's positions lists

    func testPositionsListsMatchTheToolkitsOnEveryCorpusBook() throws {
        let books = try TestSupport.corpusEPUBs()
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var compared = 0
        for book in books {
            let out = directory.appendingPathComponent(book.deletingPathExtension().lastPathComponent)
            let result = try TestSupport.quire("render", book.path, "--out", out.path, "--map-only", "--quiet")
            guard result.status == 0 else { XCTFail("\(book.lastPathComponent): \(result.stderr)"); continue }
            let map = try PositionMap(path: out.appendingPathComponent("positions.json").path)
            for (convention, expected) in [
                (PositionsConvention.readium, try ReferencePositions.readium(epub: book.path)),
                (.komga, try ReferencePositions.komga(epub: book.path)),
            ] {
                let list = map.positions?[convention]?.list ?? []
                let name = "\(book.lastPathComponent) (\(convention.rawValue))"
                XCTAssertEqual(list.count, expected.count, name)
                for (ours, theirs) in zip(list, expected) {
                    guard
                        ours.position == theirs.position && ours.href == theirs.href && ours.type == theirs.mediaType
                            && abs(ours.progression - theirs.progression) < 1e-9 && abs(ours.totalProgression - theirs.totalProgression) < 1e-9
                    else {
                        XCTFail("\(name) position \(theirs.position): ours \(ours), the toolkit's \(theirs)")
                        break
                    }
                }
                compared += list.count
            }
            try? FileManager.default.removeItem(at: out)
        }
        print("positions lists: \(compared) positions equal to the toolkits' rules in \(books.count) books")
    }

    // MARK: Input refused

    func testCFIInputChecked() throws {
        let document = try ContentDocument.parse(Array(Self.page("<p id='a'>alpha beta</p><p>gamma <img src='x.png'/> delta</p>").utf8), path: "t.xhtml")
        let text = DocumentText(document)
        func offset(_ cfi: String) throws -> Int { try CFI.offset(of: CFI.parse(cfi), in: text) }
        let beta = try offset("epubcfi(/6/2!/4/2[a]/1:6)")
        XCTAssertEqual(try offset("epubcfi(/6/2!/4/2[a]/1:6[alpha%20,beta])".replacingOccurrences(of: "%20", with: " ")), beta, "a matching assertion")
        XCTAssertEqual(try offset("epubcfi(/6/2!/4/2[a]/1:2[alpha ,beta])"), beta, "an assertion corrects the point")
        XCTAssertEqual(try offset("epubcfi(/6/2!/4/4/1:0[,gam])"), 10, "only the text after")
        XCTAssertThrowsError(try offset("epubcfi(/6/2!/4/2[a]/1:6[Nope,nope])")) { XCTAssertTrue("\($0)".contains("assertion"), "\($0)") }
        XCTAssertThrowsError(try offset("epubcfi(/6/2!/4/4/2~3.5)")) { XCTAssertTrue("\($0)".contains("temporal"), "\($0)") }
        XCTAssertThrowsError(try offset("epubcfi(/6/2!/4/4/2@50:50)")) { XCTAssertTrue("\($0)".contains("spatial"), "\($0)") }
        XCTAssertThrowsError(try offset("epubcfi(/6/2!/4/2:3)")) { XCTAssertTrue("\($0)".contains("text step"), "\($0)") }
        XCTAssertThrowsError(try offset("epubcfi(/6/2!/4/2/1:3x)"))
    }

    func testLooseInputExitsThreeWithTheReason() throws {
        let book = try TestSupport.corpusFile("idpf-epub3-samples/georgia-cfi.epub")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        XCTAssertEqual(try TestSupport.quire("render", book.path, "--out", out.path, "--map-only", "--quiet").status, 0)
        let map = out.appendingPathComponent("positions.json").path
        let index = try MapIndex(path: map)
        let page = try XCTUnwrap(PositionMap(path: map).pages.first { if case .text = $0.content { return true } else { return false } })
        guard case .text(let start) = page.content, let cfi = start.start.cfi else { return XCTFail("a text page") }
        let prefix = String(cfi.dropLast())  // without ")"
        // The cover is not linear: Readium's positions are all in georgia.xhtml.
        let cover = try XCTUnwrap(index.chapters.first { $0.href.hasSuffix("cover.xhtml") })
        for (arguments, reason) in [
            (["--cfi", prefix + "[Nope,nope])"], "assertion"),
            (["--cfi", cfi.replacingOccurrences(of: ":\(cfi.split(separator: ":").last!)", with: "~3.5)")], "temporal"),
            (["--locator", #"{"href":"\#(cover.path ?? cover.href)","locations":{"position":1}}"#], "not in the locator's href"),
            (["--locator", #"{"href":"\#(cover.path ?? cover.href)","locations":{"totalProgression":0.5}}"#], "not in the locator's href"),
        ] {
            let result = try TestSupport.run(TestSupport.quireBinary, ["locate", map] + arguments + ["--book", book.path])
            XCTAssertEqual(result.status, 3, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(reason), "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
        }
    }
}
