import XCTest

@testable import QuireStyle

final class CSSSyntaxTests: XCTestCase {
    func testEscapesAndIdentifiers() {
        XCTAssertEqual(tokens("\\41 bc"), [.ident("Abc")])
        XCTAssertEqual(tokens("a\\:b"), [.ident("a:b")])
        XCTAssertEqual(tokens("\\0"), [.ident("\u{FFFD}")])
        XCTAssertEqual(tokens("-foo --bar"), [.ident("-foo"), .whitespace, .ident("--bar")])
        XCTAssertEqual(tokens("#x1 #1x"), [.hash("x1", isID: true), .whitespace, .hash("1x", isID: false)])
        XCTAssertEqual(tokens("@media"), [.atKeyword("media")])
    }

    func testCommentsAndStrings() {
        XCTAssertEqual(tokens("a/* c */b"), [.ident("a"), .ident("b")])
        XCTAssertEqual(tokens("/* unclosed"), [])
        XCTAssertEqual(tokens("'a\\'b'"), [.string("a'b")])
        XCTAssertEqual(tokens("\"a\\\nb\""), [.string("ab")])
        XCTAssertEqual(tokens("\"bad\nx"), [.badString, .whitespace, .ident("x")])
        XCTAssertEqual(tokens("'eof"), [.string("eof")])
    }

    func testURLs() {
        XCTAssertEqual(tokens("url(a.png)"), [.url("a.png")])
        XCTAssertEqual(tokens("url( a b )"), [.badURL])
        XCTAssertEqual(tokens("url('q.png')"), [.function("url"), .string("q.png"), .rightParen])
        XCTAssertEqual(tokens("url(a\"b) x"), [.badURL, .whitespace, .ident("x")])
    }

    func testNumbersAndDimensions() {
        XCTAssertEqual(tokens("12"), [.number(12, isInteger: true)])
        XCTAssertEqual(tokens("-1.5em"), [.dimension(-1.5, "em")])
        XCTAssertEqual(tokens("+.5"), [.number(0.5, isInteger: false)])
        XCTAssertEqual(tokens("50%"), [.percentage(50)])
        XCTAssertEqual(tokens("1e3px"), [.dimension(1000, "px")])
        XCTAssertEqual(tokens("2n+1"), [.dimension(2, "n"), .number(1, isInteger: true)])
        XCTAssertEqual(tokens("<!-- -->"), [.cdo, .whitespace, .cdc])
    }

    func testUnicodeRangeOnlyInItsDeclaration() {
        XCTAssertEqual(
            tokens("unicode-range: U+0025-00FF, u+4??"),
            [.ident("unicode-range"), .colon, .whitespace, .unicodeRange(0x25, 0xFF), .comma, .whitespace, .unicodeRange(0x400, 0x4FF)])
        XCTAssertEqual(tokens("u+a"), [.ident("u"), .delim("+"), .ident("a")])
    }

    func testDeclarationErrorRecovery() {
        let values = ComponentParser.parse("color: red; width: ; ;;; 12px: x; margin: 1px !important; font-size: 2em").0
        let (declarations, invalid) = RuleParser.declarations(values)
        XCTAssertEqual(declarations.map(\.name), ["color", "width", "margin", "font-size"])
        XCTAssertEqual(declarations[2].important, true)
        XCTAssertEqual(invalid, 1)
    }

    func testRuleErrorRecoveryAndUnclosedBlocks() throws {
        let css = """
            p { color: red } @unknown foo { bar } a::: { color: blue }
            h1 { color: green; @nested { x } font-size: 3em
            """
        let doc = try StyledDocument(css: css, body: "<p id='p'>x</p><h1 id='h'>y</h1>")
        XCTAssertEqual(doc.style("p").color, Color(red: 255, green: 0, blue: 0))
        XCTAssertEqual(doc.style("h").color, Color(red: 0, green: 128, blue: 0))
        XCTAssertEqual(doc.style("h").fontSize, 48)
    }

    func testBadDeclarationDropsOnlyItself() throws {
        let doc = try StyledDocument(css: "p { color: blue; width: 10qq; margin-left: 5px; color: nonsense }", body: "<p id='p'>x</p>")
        XCTAssertEqual(doc.style("p").color, Color(red: 0, green: 0, blue: 255))
        XCTAssertEqual(doc.style("p").margin.left, .px(5))
    }
}
