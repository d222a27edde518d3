import XCTest

@testable import QuireStyle

final class CSSGeneratedContentTests: XCTestCase {
    func markers(_ doc: StyledDocument, _ ids: [String]) -> [String?] { ids.map { doc.full($0).marker?.text } }

    func testListMarkers() throws {
        let body = """
            <ul><li id='u1'>a</li><li id='u2'>b<ul><li id='n1'>c</li></ul></li></ul>
            <ol><li id='o1'>a</li><li id='o2'>b</li><li id='o3' value='10'>c</li><li id='o4'>d</li></ol>
            <ol start='4' style='list-style-type: lower-roman'><li id='r1'>a</li><li id='r2'>b</li></ol>
            <ol reversed='reversed'><li id='v1'>a</li><li id='v2'>b</li><li id='v3'>c</li></ol>
            <ol style='list-style-type: upper-alpha'><li id='a1'>a</li><li id='a2'>b</li></ol>
            <ul style='list-style-type: "– "'><li id='s1'>a</li></ul>
            <ul style='list-style: none'><li id='x1'>a</li></ul>
            <ol type='a'><li id='t1'>a</li></ol>
            """
        let doc = try StyledDocument(body: body)
        XCTAssertEqual(markers(doc, ["u1", "u2", "n1"]), ["• ", "• ", "◦ "])
        XCTAssertEqual(markers(doc, ["o1", "o2", "o3", "o4"]), ["1. ", "2. ", "10. ", "11. "])
        XCTAssertEqual(markers(doc, ["r1", "r2"]), ["iv. ", "v. "])
        XCTAssertEqual(markers(doc, ["v1", "v2", "v3"]), ["3. ", "2. ", "1. "])
        XCTAssertEqual(markers(doc, ["a1", "a2"]), ["A. ", "B. "])
        XCTAssertEqual(markers(doc, ["s1", "x1", "t1"]), ["– ", nil, "a. "])
    }

    func testCountersAndContent() throws {
        let css = """
            body { counter-reset: chapter }
            h2 { counter-increment: chapter; counter-reset: section }
            h2::before { content: "Chapter " counter(chapter, upper-roman) ": " }
            h3::before { counter-increment: section; content: counter(chapter) "." counter(section) " " }
            a::after { content: " (" attr(href) ")" }
            .n { counter-reset: item }
            .n li { counter-increment: item }
            .n li::before { content: counters(item, ".") " " }
            .n li::marker { content: "" }
            """
        let body = """
            <h2 id='c1'>A</h2><h3 id='s11'>a</h3><h3 id='s12'>b</h3><h2 id='c2'>B</h2><h3 id='s21'>c</h3>
            <p><a id='l' href='x.html'>link</a></p>
            <ol class='n'><li id='i1'>x<ol class='n'><li id='i11'>y</li><li id='i12'>z</li></ol></li><li id='i2'>w</li></ol>
            """
        let doc = try StyledDocument(css: css, body: body)
        XCTAssertEqual(doc.full("c1").before?.text, "Chapter I: ")
        XCTAssertEqual(doc.full("s11").before?.text, "1.1 ")
        XCTAssertEqual(doc.full("s12").before?.text, "1.2 ")
        XCTAssertEqual(doc.full("c2").before?.text, "Chapter II: ")
        XCTAssertEqual(doc.full("s21").before?.text, "2.1 ")
        XCTAssertEqual(doc.full("l").after?.text, " (x.html)")
        XCTAssertEqual(doc.full("i1").before?.text, "1 ")
        XCTAssertEqual(doc.full("i11").before?.text, "1.1 ")
        XCTAssertEqual(doc.full("i12").before?.text, "1.2 ")
        XCTAssertEqual(doc.full("i2").before?.text, "2 ")
        XCTAssertEqual(doc.full("i2").marker?.text, "")
    }

    func testQuotes() throws {
        let doc = try StyledDocument(
            css: "#fr { quotes: '«' '»' '‹' '›' }",
            body: "<p><q id='q1'>a <q id='q2'>b</q></q></p><p id='fr'><q id='q3'>c</q></p><p><q id='br'>d<br id='b'/></q></p>")
        XCTAssertEqual(doc.full("q1").before?.text, "“")
        XCTAssertEqual(doc.full("q2").before?.text, "‘")
        XCTAssertEqual(doc.full("q2").after?.text, "’")
        XCTAssertEqual(doc.full("q1").after?.text, "”")
        XCTAssertEqual(doc.full("q3").before?.text, "«")
        XCTAssertEqual(doc.full("b").before?.text, "\n", "br is a forced break in CSS terms")
    }

    func testCounterFormats() {
        XCTAssertEqual(GeneratedContentState.format(1994, .upperRoman), "MCMXCIV")
        XCTAssertEqual(GeneratedContentState.format(28, .lowerAlpha), "ab")
        XCTAssertEqual(GeneratedContentState.format(3, .decimalLeadingZero), "03")
        XCTAssertEqual(GeneratedContentState.format(2, .lowerGreek), "β")
        XCTAssertEqual(GeneratedContentState.format(10, .cjkDecimal), "一〇")
    }
}

final class CSSHostileInputTests: XCTestCase {
    func testDeeplyNestedMediaIsSkippedWithWarning() throws {
        let depth = 5_000
        let css = String(repeating: "@media screen { ", count: depth) + "p { color: red }" + String(repeating: " }", count: depth)
            + " p { font-style: italic }"
        let doc = try StyledDocument(css: css, body: "<p id='p'>x</p>")
        XCTAssertEqual(doc.style("p").color, .black)
        XCTAssertTrue(doc.styles.warnings.contains { $0.code == "css-nesting-limit" || $0.code == "css-nesting" })
        // Within the limit, nesting works.
        let ok = String(repeating: "@media screen { ", count: 10) + "p { color: red }" + String(repeating: " }", count: 10)
        XCTAssertEqual(try StyledDocument(css: ok, body: "<p id='p'>x</p>").style("p").color, Color(red: 255, green: 0, blue: 0))
    }

    func testDeepParenthesesAndFunctions() throws {
        let css = "p { width: " + String(repeating: "calc(", count: 50_000) + "1px" + " } p { color: blue }"
        let doc = try StyledDocument(css: css, body: "<p id='p'>x</p>")
        XCTAssertEqual(doc.style("p").width, .auto)
        XCTAssertTrue(doc.styles.warnings.contains { $0.code == "css-nesting" })
    }

    func testHugeSelectorAndDeclarationCounts() throws {
        let selector = (0..<5_000).map { _ in "div" }.joined(separator: " ")
        let declarations = (0..<100_000).map { "margin-left: \($0)px" }.joined(separator: "; ")
        let css = "\(selector) p { color: red } p { \(declarations) } p { color: blue }"
        let doc = try StyledDocument(css: css, body: "<div><p id='p'>x</p></div>")
        XCTAssertEqual(doc.style("p").color, Color(red: 0, green: 0, blue: 255))
        // Declarations past the limit are dropped: the last one kept is number limit - 1.
        XCTAssertEqual(doc.style("p").margin.left, .px(Double(CSSLimits.maxDeclarationsPerRule - 1)))
        let block = SheetCompiler.declarationBlockForTesting("{ \(declarations) }")
        XCTAssertEqual(block.declarations.count, CSSLimits.maxDeclarationsPerRule)
    }

    func testOversizedStylesheetIsIgnored() throws {
        let big = String(repeating: "p { color: red }\n", count: CSSLimits.maxStylesheetBytes / 16 + 10)
        let doc = try StyledDocument(
            body: "<p id='p'>x</p>", head: "<link rel='stylesheet' href='big.css'/>",
            resources: ["OEBPS/text/big.css": big])
        XCTAssertEqual(doc.style("p").color, .black)
        XCTAssertTrue(doc.styles.warnings.contains { $0.code == "css-too-large" })
    }

    func testImportChainDepth() throws {
        var resources: [String: String] = [:]
        for i in 0..<50 { resources["OEBPS/text/s\(i).css"] = "@import 's\(i + 1).css'; p { margin-top: \(i)px }" }
        let doc = try StyledDocument(body: "<p id='p'>x</p>", head: "<link rel='stylesheet' href='s0.css'/>", resources: resources)
        XCTAssertEqual(doc.style("p").margin.top, .px(0))
        XCTAssertTrue(doc.styles.warnings.contains { $0.code == "css-import-depth" })
    }

    func testGarbageNeverCrashes() throws {
        let samples = [
            "}}}}{{{{", "@media", "@import", "@namespace", "p{", "p{color:", "::::", "[[[[", "@font-face{src:url(",
            "p:nth-child(", "p{content:counter(", "\u{0}\u{FFFF}", "@page{size:", "p{--x:var(--x)}p{color:var(--x)}",
            "a{b:c}", "@supports (((((", "*|*|*{}", "p{font:/}", "p{margin:calc(1px/0)}", "p{width:calc(1px*1px)}",
        ]
        for css in samples {
            // Through the user sheet, so bytes XML cannot carry (NUL) reach the tokenizer too.
            _ = try StyledDocument(body: "<p id='p'>x</p>", environment: StyleEnvironment(overrides: ReaderOverrides(userCSS: css)))
            _ = CSSReport.build(documents: [], loadResource: { _ in Array(css.utf8) })
        }
    }
}
