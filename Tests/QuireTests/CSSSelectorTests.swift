import XCTest

@testable import QuireStyle

final class CSSSelectorTests: XCTestCase {
    let red = Color(red: 255, green: 0, blue: 0)

    func isRed(_ css: String, _ body: String, _ id: String = "t", file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let doc = try StyledDocument(css: css + " { color: red }", body: body)
        return doc.style(id).color == red
    }

    func testSimpleSelectors() throws {
        XCTAssertTrue(try isRed("p", "<p id='t'>x</p>"))
        XCTAssertTrue(try isRed("P", "<p id='t'>x</p>"), "HTML names are case-insensitive")
        XCTAssertTrue(try isRed("*", "<p id='t'>x</p>"))
        XCTAssertTrue(try isRed(".a.b", "<p id='t' class='b a c'>x</p>"))
        XCTAssertFalse(try isRed(".a.d", "<p id='t' class='b a c'>x</p>"))
        XCTAssertTrue(try isRed("#t", "<p id='t'>x</p>"))
        XCTAssertFalse(try isRed("#T", "<p id='t'>x</p>"))
    }

    func testAttributeSelectors() throws {
        let body = "<p id='t' title='Hello world' lang='en-GB' data-x='abc'>x</p>"
        XCTAssertTrue(try isRed("[title]", body))
        XCTAssertTrue(try isRed("[title='Hello world']", body))
        XCTAssertTrue(try isRed("[title~=world]", body))
        XCTAssertTrue(try isRed("[lang|=en]", body))
        XCTAssertTrue(try isRed("[data-x^=ab]", body))
        XCTAssertTrue(try isRed("[data-x$=bc]", body))
        XCTAssertTrue(try isRed("[data-x*=b]", body))
        XCTAssertFalse(try isRed("[data-x=ABC]", body))
        XCTAssertTrue(try isRed("[data-x=ABC i]", body))
        XCTAssertFalse(try isRed("[data-x^='']", body))
    }

    func testNamespaces() throws {
        let body = "<section id='t' epub:type='chapter bodymatter'>x</section>"
        XCTAssertTrue(try isRed("@namespace epub \"http://www.idpf.org/2007/ops\"; section[epub|type~=\"chapter\"]", body))
        XCTAssertFalse(try isRed("section[undeclared|type~=\"chapter\"]", body), "an undeclared prefix invalidates the selector")
        XCTAssertTrue(try isRed("[*|type~=chapter]", body))
        XCTAssertFalse(try isRed("[type~=chapter]", body), "unprefixed attribute selectors mean no namespace")
        XCTAssertTrue(try isRed("@namespace h \"http://www.w3.org/1999/xhtml\"; h|section", body))
        XCTAssertFalse(try isRed("@namespace s \"http://www.w3.org/2000/svg\"; s|section", body))
        XCTAssertTrue(try isRed("[xml|lang|=fr]", "<p id='t' xml:lang='fr-CA'>x</p>"))
    }

    func testCombinators() throws {
        let body = "<div id='d'><p id='a'>a</p><p id='b'>b</p><span id='c'>c</span></div>"
        XCTAssertTrue(try isRed("div p", body, "b"))
        XCTAssertTrue(try isRed("div > p", body, "b"))
        XCTAssertTrue(try isRed("body p", body, "b"))
        XCTAssertFalse(try isRed("body > p", body, "b"))
        XCTAssertTrue(try isRed("p + p", body, "b"))
        XCTAssertFalse(try isRed("p + p", body, "a"))
        XCTAssertTrue(try isRed("#a ~ span", body, "c"))
        XCTAssertFalse(try isRed("#b + p", body, "c"))
    }

    /// The ancestor filter turns candidate rules down early; it must never turn down a match.
    func testAncestorFilterKeepsEveryMatch() throws {
        let ns = "@namespace epub \"http://www.idpf.org/2007/ops\"; "
        let chapter = "<section epub:type='bodymatter chapter'><div><p id='t'>x</p></div></section>"
        XCTAssertTrue(try isRed(ns + "[epub|type~=\"chapter\"] p", chapter))
        XCTAssertTrue(try isRed(ns + "section[epub|type=\"bodymatter chapter\"] > div > p", chapter))
        XCTAssertFalse(try isRed(ns + "[epub|type~=\"preface\"] p", chapter))
        XCTAssertFalse(try isRed(ns + "[epub|type~=\"body\"] p", chapter), "a word, not part of one")
        // Compounds reached through a child or descendant combinator after a sibling one are ancestors too.
        XCTAssertTrue(try isRed("div.a > h1 + p", "<div class='a'><h1>h</h1><p id='t'>x</p></div>"))
        XCTAssertFalse(try isRed("div.b > h1 + p", "<div class='a'><h1>h</h1><p id='t'>x</p></div>"))
        XCTAssertTrue(try isRed("section > header + *", "<section><header>h</header><p id='t'>x</p></section>"))
        // The filter follows the tree: a closed sibling subtree leaves nothing behind.
        XCTAssertFalse(try isRed("aside p", "<aside><p>a</p></aside><div><p id='t'>x</p></div>"))
        XCTAssertTrue(try isRed("aside p", "<div><p>a</p></div><aside><div><p id='t'>x</p></div></aside>"))
        // Names that are not ASCII are compared as strings, not hashed.
        XCTAssertTrue(try isRed("#章1 p", "<div id='章1'><p id='t'>x</p></div>"))
        XCTAssertTrue(try isRed(".見出し > p", "<div class='見出し'><p id='t'>x</p></div>"))
        // Deep trees: counters go up and down with every level.
        let deep = String(repeating: "<div class='d'>", count: 200) + "<p id='t'>x</p>" + String(repeating: "</div>", count: 200)
        XCTAssertTrue(try isRed("body > .d .d > p", deep))
        XCTAssertFalse(try isRed("span .d p", deep))
    }

    func testStructuralPseudoClasses() throws {
        let body = "<div><p id='p1'>1</p><span id='s1'>s</span><p id='p2'>2</p><p id='p3'>3</p><em id='e'></em></div>"
        XCTAssertTrue(try isRed(":first-child", body, "p1"))
        XCTAssertTrue(try isRed("em:last-child", body, "e"))
        XCTAssertTrue(try isRed("p:nth-child(3)", body, "p2"))
        XCTAssertTrue(try isRed("p:nth-child(2n+1)", body, "p2"))
        XCTAssertTrue(try isRed(":nth-child(odd)", body, "p2"))
        XCTAssertFalse(try isRed("p:nth-child(even)", body, "p2"))
        XCTAssertTrue(try isRed("p:nth-last-child(2)", body, "p3"))
        XCTAssertTrue(try isRed("p:nth-of-type(2)", body, "p2"))
        XCTAssertTrue(try isRed("p:nth-last-of-type(1)", body, "p3"))
        XCTAssertTrue(try isRed("p:first-of-type", body, "p1"))
        XCTAssertTrue(try isRed("p:last-of-type", body, "p3"))
        XCTAssertTrue(try isRed("span:only-of-type", body, "s1"))
        XCTAssertFalse(try isRed("p:only-child", body, "p1"))
        XCTAssertTrue(try isRed(":empty", body, "e"))
        XCTAssertTrue(try isRed(":nth-child(-n+2)", body, "s1"))
        XCTAssertFalse(try isRed("div > :nth-child(-n+2)", body, "p2"))
        XCTAssertTrue(try isRed(":nth-child(2 of p)", body, "p2"))
        XCTAssertFalse(try isRed("p:root", "<p id='t'>x</p>", "t"))
        // Places among siblings of more types than the short list holds (20 names, twice over).
        let names = (0..<20).map { "x-\($0)" }
        let many = "<div>" + (names + names).enumerated().map { "<\($1) id='n\($0)'>.</\($1)>" }.joined() + "</div>"
        XCTAssertTrue(try isRed("x-18:nth-of-type(2)", many, "n38"))
        XCTAssertTrue(try isRed("x-18:nth-last-of-type(2)", many, "n18"))
        XCTAssertFalse(try isRed("x-18:nth-of-type(2)", many, "n18"))
        XCTAssertTrue(try isRed(":nth-child(39)", many, "n38"))
        XCTAssertTrue(try isRed(":nth-last-child(3)", many, "n37"))
        XCTAssertTrue(try isRed("x-3:first-of-type", many, "n3"))
        XCTAssertTrue(try isRed("x-3:last-of-type", many, "n23"))
    }

    func testLogicalAndOtherPseudoClasses() throws {
        let body = "<p id='t' class='a'>x</p><p id='u' class='b'>y</p><a id='l' href='x.html'>l</a>"
        XCTAssertTrue(try isRed("p:not(.b)", body))
        XCTAssertFalse(try isRed("p:not(.a, .b)", body))
        XCTAssertTrue(try isRed(":is(div, p).a", body))
        // `:is()` of bare tags waits in those tags' buckets: it still reaches them, and only them.
        XCTAssertTrue(try isRed(":is(div, p)", body))
        XCTAssertTrue(try isRed(":is(div, P, p)", body))
        XCTAssertFalse(try isRed(":is(div, span)", body))
        XCTAssertTrue(try isRed(":is(div, a)", body, "l"))
        XCTAssertTrue(try isRed(":is(div, a):is(a, p)", body, "l"))
        XCTAssertTrue(try isRed(":is(div, .a)", body), "not all bare tags: tried on every element")
        XCTAssertTrue(try isRed("body :is(ul, p)", body))
        XCTAssertTrue(try isRed(":where(.a)", body))
        XCTAssertTrue(try isRed(":is(.a, :bogus)", body), ":is() is forgiving")
        XCTAssertFalse(try isRed("p:hover", body))
        XCTAssertTrue(try isRed("a:link", body, "l"))
        XCTAssertFalse(try isRed(":lang(en)", body), "no language anywhere")
        XCTAssertFalse(try isRed("p:unknown-thing", body))
    }

    func testLangUsesTheContentsOwnLanguage() throws {
        let doc = try StyledDocument(
            css: ":lang(fr) { color: red } :lang(de) { font-weight: bold }",
            body: "<div xml:lang='fr-CA'><p id='t'>x</p></div><p id='u'>y</p>")
        XCTAssertEqual(doc.style("t").color, red)
        XCTAssertNotEqual(doc.style("u").fontWeight, 700, "no element says de")
    }

    func testSpecificityOrder() throws {
        let css = """
            #t { color: blue }
            p.a { color: red }
            p { color: green }
            """
        let doc = try StyledDocument(css: css, body: "<p id='t' class='a'>x</p><p id='u' class='a'>y</p><p id='v'>z</p>")
        XCTAssertEqual(doc.style("t").color, Color(red: 0, green: 0, blue: 255))
        XCTAssertEqual(doc.style("u").color, red)
        XCTAssertEqual(doc.style("v").color, Color(red: 0, green: 128, blue: 0))
        let parser = SelectorParser(namespaces: [:], defaultNamespace: nil)
        func spec(_ s: String) -> Int { parser.parseList(ComponentParser.parse(s).0)![0].specificity }
        XCTAssertEqual(spec("#a .b c"), 1 << 20 | 1 << 10 | 1)
        XCTAssertEqual(spec(":where(#a) p"), 1)
        XCTAssertEqual(spec(":is(#a, p) p"), 1 << 20 | 1)
        XCTAssertEqual(spec("p::before"), 2)
        XCTAssertEqual(spec("li:nth-child(2)"), 1 << 10 | 1)
    }

    func testPseudoElementsAndLegacyForms() throws {
        let doc = try StyledDocument(
            css: "p:before { content: 'A' } p::after { content: 'Z' } p::first-letter { font-size: 3em } p:first-line { font-weight: bold }",
            body: "<p id='t'>x</p>")
        let s = doc.full("t")
        XCTAssertEqual(s.before?.text, "A")
        XCTAssertEqual(s.after?.text, "Z")
        XCTAssertEqual(s.firstLetter?.fontSize, 48)
        XCTAssertEqual(s.firstLine?.fontWeight, 700)
        XCTAssertEqual(s.style.color, .black, "pseudo-element rules do not style the element")
    }

    func testHostileSelectorIsBounded() throws {
        let long = Array(repeating: "div", count: 5_000).joined(separator: " > ")
        let doc = try StyledDocument(css: long + " { color: red } p { color: blue }", body: "<p id='t'>x</p>")
        XCTAssertEqual(doc.style("t").color, Color(red: 0, green: 0, blue: 255))
        let parser = SelectorParser(namespaces: [:], defaultNamespace: nil)
        XCTAssertNil(parser.parseList(ComponentParser.parse(long).0))
        let ok = Array(repeating: "div", count: 200).joined(separator: " ")
        XCTAssertNotNil(parser.parseList(ComponentParser.parse(ok).0))
    }
}
