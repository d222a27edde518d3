import XCTest

@testable import QuireStyle

final class CSSCascadeTests: XCTestCase {
    let red = Color(red: 255, green: 0, blue: 0)
    let blue = Color(red: 0, green: 0, blue: 255)
    let green = Color(red: 0, green: 128, blue: 0)

    func testOriginsAndImportance() throws {
        // UA says h1 is bold; the author overrides; UA !important would beat author !important (none here).
        let doc = try StyledDocument(
            css: "h1 { font-weight: normal } p { color: red !important } #t { color: blue }",
            body: "<h1 id='h'>x</h1><p id='t'>y</p>",
            environment: StyleEnvironment(overrides: ReaderOverrides(userCSS: "p { color: green !important; font-style: italic } h1 { font-style: italic }")))
        XCTAssertEqual(doc.style("h").fontWeight, 400)
        XCTAssertEqual(doc.style("t").color, green, "user !important beats author !important")
        XCTAssertEqual(doc.style("t").fontStyle, .italic)
    }

    /// Quire sets vertical books horizontally, so their box properties turn with the text:
    /// vertical-rl's right (block-start) becomes top, its top (inline-start) becomes left, and
    /// `max-height` (the line length) becomes `max-width`.
    func testVerticalBoxPropertiesTurnWithTheText() throws {
        let doc = try StyledDocument(
            css: """
                section { -epub-writing-mode: vertical-rl; margin: 1px 2px 3px 4px; padding-left: 5px; max-height: 28em; width: 9px }
                div { writing-mode: vertical-lr; margin-left: 7px; border-right: 2px solid red }
                p { margin-left: 6px }
                """,
            body: "<section id='s'><p id='p'>x</p></section><div id='d'>y</div>")
        let section = doc.style("s")
        XCTAssertEqual(section.margin.top, .length(.px(2)))
        XCTAssertEqual(section.margin.right, .length(.px(3)))
        XCTAssertEqual(section.margin.bottom, .length(.px(4)))
        XCTAssertEqual(section.margin.left, .length(.px(1)))
        XCTAssertEqual(section.padding.bottom, .px(5))
        XCTAssertEqual(section.maxWidth, .px(28 * 16))
        XCTAssertNil(section.maxHeight)
        XCTAssertEqual(section.height, .length(.px(9)))
        XCTAssertEqual(section.width, .auto)
        XCTAssertEqual(doc.style("p").margin.bottom, .length(.px(6)), "the writing mode inherits, so descendants turn too")
        let div = doc.style("d")
        XCTAssertEqual(div.margin.top, .length(.px(7)), "vertical-lr's left is block-start")
        XCTAssertEqual(div.borderWidth.bottom, 2)
        XCTAssertEqual(div.borderStyle.bottom, .solid)
    }

    /// `overflow-wrap` is its own property, not an `overflow-*` longhand; the breaking properties parse.
    func testBreakingProperties() throws {
        let doc = try StyledDocument(
            css: "#a { overflow-wrap: break-word } #b { word-wrap: anywhere; word-break: keep-all; -webkit-line-break: strict }",
            body: "<p id='a'>x</p><p id='b'>y</p>")
        XCTAssertEqual(doc.style("a").overflowWrap, .breakWord)
        XCTAssertFalse(doc.style("a").overflowHidden)
        XCTAssertEqual(doc.style("b").overflowWrap, .anywhere)
        XCTAssertEqual(doc.style("b").wordBreak, .keepAll)
        XCTAssertEqual(doc.style("b").lineBreak, .strict)
    }

    func testAuthorImportantBeatsUserNormal() throws {
        let doc = try StyledDocument(
            css: "p { color: red }", body: "<p id='t'>y</p>",
            environment: StyleEnvironment(overrides: ReaderOverrides(userCSS: "p { color: green }")))
        XCTAssertEqual(doc.style("t").color, red)
    }

    func testSourceOrderAndStyleAttribute() throws {
        let doc = try StyledDocument(
            css: "p { color: red } p { color: blue } #u { color: red !important }",
            body: "<p id='t'>x</p><p id='s' style='color: green'>y</p><p id='u' style='color: green'>z</p><p id='v' style='color: green !important'>w</p>")
        XCTAssertEqual(doc.style("t").color, blue)
        XCTAssertEqual(doc.style("s").color, green)
        XCTAssertEqual(doc.style("u").color, red)
        XCTAssertEqual(doc.style("v").color, green)
    }

    func testInheritanceAndWideKeywords() throws {
        let css = """
            div { color: red; border: 2px solid blue; font-size: 20px }
            #i { border-top-width: inherit }
            #n { color: initial }
            #u { color: unset; border-top-width: unset }
            #r { color: revert }
            """
        let doc = try StyledDocument(css: css, body: "<div><p id='p'>a</p><p id='i'>b</p><p id='n'>c</p><p id='u'>d</p><p id='r'>e</p></div>")
        XCTAssertEqual(doc.style("p").color, red)
        XCTAssertEqual(doc.style("p").fontSize, 20)
        XCTAssertEqual(doc.style("p").borderWidth.top, 0, "borders are not inherited")
        XCTAssertEqual(doc.style("i").borderWidth.top, 0, "inherited width, but no border style here")
        XCTAssertEqual(doc.style("n").color, .black)
        XCTAssertEqual(doc.style("u").color, red)
        XCTAssertEqual(doc.style("r").color, red)
    }

    func testCustomPropertiesAndVar() throws {
        let css = """
            :root { --main: #00f; --gap: 3px; --cycle-a: var(--cycle-b); --cycle-b: var(--cycle-a) }
            p { color: var(--main); margin: var(--gap) var(--gap, 9px) }
            #f { color: var(--missing, green) }
            #c { color: red; color: var(--cycle-a) }
            #n { --main: red }
            #x { color: var(--missing) }
            """
        let doc = try StyledDocument(css: css, body: "<p id='p'>a</p><p id='f'>b</p><p id='c'>c</p><div id='n'><p id='np'>d</p></div><p id='x'>e</p>")
        XCTAssertEqual(doc.style("p").color, blue)
        XCTAssertEqual(doc.style("p").margin.left, .px(3))
        XCTAssertEqual(doc.style("f").color, green)
        XCTAssertEqual(doc.style("c").color, .black, "a cycle makes the value invalid at computed time: unset")
        XCTAssertEqual(doc.style("np").color, red)
        XCTAssertEqual(doc.style("x").color, .black)
    }

    func testVarExpansionIsBounded() throws {
        var css = ":root { --a0: x x x x x x x x x x; "
        for i in 1...30 { css += "--a\(i): var(--a\(i - 1)) var(--a\(i - 1)) var(--a\(i - 1)); " }
        css += "} p { font-family: var(--a30); color: blue }"
        let doc = try StyledDocument(css: css, body: "<p id='t'>x</p>")
        XCTAssertEqual(doc.style("t").color, blue)
        XCTAssertEqual(doc.style("t").fontFamilies, ["serif"])
    }

    func testEmAndRemAndPercentFontSizes() throws {
        let css = "html { font-size: 20px } div { font-size: 1.5em } p { font-size: 50%; margin-top: 2em; padding-left: 1rem; text-indent: 1.5em }"
        let doc = try StyledDocument(css: css, body: "<div id='d'><p id='p'>x</p></div>")
        XCTAssertEqual(doc.style("d").fontSize, 30)
        XCTAssertEqual(doc.style("p").fontSize, 15)
        XCTAssertEqual(doc.style("p").margin.top, .px(30))
        XCTAssertEqual(doc.style("p").padding.left, .px(20))
        XCTAssertEqual(doc.style("p").textIndent, .px(22.5))
    }

    func testUserAgentDefaults() throws {
        let doc = try StyledDocument(
            body: """
                <h1 id='h1'>a</h1><h2 id='h2'>b</h2><p id='p'>c <em id='em'>d</em> <strong id='b'>e</strong> <sup id='sup'>2</sup></p>
                <ul id='ul'><li id='li'>x<ul id='ul2'><li>y</li></ul></li></ul><ol id='ol'><li>z</li></ol>
                <pre id='pre'>p</pre><blockquote id='bq'>q</blockquote><table><tr><th id='th'>h</th></tr></table><p id='hid' hidden='hidden'>h</p>
                """)
        XCTAssertEqual(doc.style("h1").fontSize, 32)
        XCTAssertEqual(doc.style("h1").fontWeight, 700)
        XCTAssertEqual(doc.style("h1").breakAfter, .avoid)
        XCTAssertEqual(doc.style("h1").margin.top, .px(32 * 0.67))
        XCTAssertEqual(doc.style("h2").fontSize, 24)
        XCTAssertEqual(doc.style("p").display, .block)
        XCTAssertEqual(doc.style("p").margin.top, .px(16))
        XCTAssertEqual(doc.style("em").fontStyle, .italic)
        XCTAssertEqual(doc.style("em").display, .inline)
        XCTAssertEqual(doc.style("b").fontWeight, 700)
        XCTAssertEqual(doc.style("sup").verticalAlign, .super)
        XCTAssertEqual(doc.style("sup").fontSize, 16 / 1.2, accuracy: 0.001)
        XCTAssertEqual(doc.style("ul").padding.left, .px(40))
        XCTAssertEqual(doc.style("li").display, .listItem)
        XCTAssertEqual(doc.style("ul2").listStyleType, .circle)
        XCTAssertEqual(doc.style("ol").listStyleType, .decimal)
        XCTAssertEqual(doc.style("pre").whiteSpace, .pre)
        XCTAssertEqual(doc.style("pre").fontFamilies, ["monospace"])
        XCTAssertEqual(doc.style("bq").margin.left, .px(40))
        XCTAssertEqual(doc.style("th").display, .tableCell)
        XCTAssertEqual(doc.style("th").textAlign, .center)
        XCTAssertEqual(doc.style("hid").display, .none)
        let head = doc.tree.root!.firstChild("head", "http://www.w3.org/1999/xhtml")!
        XCTAssertEqual(doc.styles.style(of: head.id).style.display, .none)
        XCTAssertEqual(doc.styles.style(of: doc.tree.root!.id).style.display, .block)
    }

    func testDirLangAndHints() throws {
        let doc = try StyledDocument(
            body: "<p id='r' dir='rtl'>x</p><div xml:lang='fr'><p id='f'>y</p></div><p id='a' align='center'>z</p><img id='i' src='a.png' width='120' height='50%'/>",
            htmlAttributes: "xml:lang='en'")
        XCTAssertEqual(doc.style("r").direction, .rtl)
        XCTAssertEqual(doc.style("f").language, "fr")
        XCTAssertEqual(doc.style("a").textAlign, .center)
        XCTAssertEqual(doc.style("i").width, .px(120))
        XCTAssertEqual(doc.style("i").height, .percent(50))
    }

    func testStylesAreShared() throws {
        let body = String(repeating: "<p>para <em>x</em></p>", count: 200)
        let doc = try StyledDocument(css: "p { text-indent: 1em }", body: body)
        XCTAssertLessThan(doc.styles.distinctStyleCount, 12)
    }

    func testReaderOverrides() throws {
        let css = "body { font-size: 12pt; font-family: 'Book Font'; text-align: justify; line-height: 1.2 } h1 { font-size: 24pt; text-align: center } code { font-family: monospace }"
        let overrides = ReaderOverrides(fontFamily: "Reader Serif", fontSizePt: 15, lineHeight: 1.6, textAlign: .left)
        let doc = try StyledDocument(
            css: css, body: "<h1 id='h'>T</h1><p id='p'>x <code id='c'>c</code></p>",
            environment: StyleEnvironment(overrides: overrides))
        // 15pt = 20px is the new medium; 12pt body = 16px × 1.25.
        XCTAssertEqual(doc.style("p").fontSize, 20, accuracy: 0.001)
        XCTAssertEqual(doc.style("h").fontSize, 40, accuracy: 0.001, "headings keep their proportion")
        XCTAssertEqual(doc.style("p").fontFamilies.first, "Reader Serif")
        XCTAssertEqual(doc.style("c").fontFamilies, ["monospace"])
        XCTAssertEqual(doc.style("p").lineHeight, .number(1.6))
        XCTAssertEqual(doc.style("p").textAlign, .left)
        XCTAssertEqual(doc.style("h").textAlign, .center)
        let plain = try StyledDocument(
            css: css, body: "<p id='p' style='color: red'>x</p>",
            environment: StyleEnvironment(overrides: ReaderOverrides(noPublisherStyles: true)))
        XCTAssertEqual(plain.style("p").fontSize, 16)
        XCTAssertEqual(plain.style("p").color, .black)
        XCTAssertEqual(plain.style("p").margin.top, .px(16), "the UA sheet still applies")
    }

    func testTextDecorationPropagates() throws {
        let doc = try StyledDocument(body: "<p><u><b id='b'>x</b></u><u><span id='s' style='text-decoration: none'>y</span></u></p>")
        XCTAssertEqual(doc.style("b").textDecoration, .underline)
        XCTAssertEqual(doc.style("s").textDecoration, .underline, "descendants cannot remove a propagated decoration")
    }

    func testBlockification() throws {
        let doc = try StyledDocument(css: "span { float: left } em { position: absolute; float: right }", body: "<p><span id='s'>x</span><em id='e'>y</em></p>")
        XCTAssertEqual(doc.style("s").display, .block)
        XCTAssertEqual(doc.style("e").display, .block)
        XCTAssertEqual(doc.style("e").float, .none)
    }

    func testLinkedSheetsImportsAndCycles() throws {
        let resources = [
            "OEBPS/css/main.css": "@import url('base.css'); @import 'main.css'; @import 'missing.css'; p { color: blue }",
            "OEBPS/css/base.css": "@import \"../css/main.css\"; p { font-style: italic; color: red } h1 { color: green }",
        ]
        let doc = try StyledDocument(
            body: "<h1 id='h'>x</h1><p id='p'>y</p>", head: "<link rel='stylesheet' type='text/css' href='../css/main.css'/>",
            resources: resources)
        XCTAssertEqual(doc.style("p").color, blue)
        XCTAssertEqual(doc.style("p").fontStyle, .italic)
        XCTAssertEqual(doc.style("h").color, green)
        XCTAssertTrue(doc.styles.warnings.contains { $0.code == "css-import-cycle" })
        XCTAssertTrue(doc.styles.warnings.contains { $0.code == "css-missing" })
    }

    func testArchivePathResolution() {
        XCTAssertEqual(ArchivePath.resolve("../css/a%20b.css#x", against: "OEBPS/text/c.xhtml"), "OEBPS/css/a b.css")
        XCTAssertEqual(ArchivePath.resolve("./img/../f.otf", against: "OEBPS/css/s.css"), "OEBPS/css/f.otf")
        XCTAssertEqual(ArchivePath.resolve("/root.css", against: "OEBPS/text/c.xhtml"), "root.css")
        XCTAssertNil(ArchivePath.resolve("../../../x.css", against: "OEBPS/c.xhtml"))
        XCTAssertNil(ArchivePath.resolve("http://example.com/a.css", against: "OEBPS/c.xhtml"))
    }
}
