import XCTest

@testable import QuireStyle

final class CSSValueTests: XCTestCase {
    func testLengthUnitsAndCalc() throws {
        let env = StyleEnvironment(viewportWidth: 500, viewportHeight: 1000)
        let css = """
            #a { margin-left: 72pt; margin-right: 1in; margin-top: 2.54cm; margin-bottom: 1pc }
            #b { margin-left: 10vw; margin-right: 10vh; margin-top: 10vmin; margin-bottom: 10vmax }
            #c { margin-left: calc(10px + 2em); margin-right: calc(50% - 10px); width: calc(100% / 4); padding-left: calc((1px + 2px) * 3) }
            #d { margin-left: 2ex; margin-right: 1ch; margin-top: 40q; margin-bottom: 10mm; width: min(100px, 50px); height: clamp(10px, 5px, 20px) }
            """
        let doc = try StyledDocument(css: css, body: "<p id='a'>a</p><p id='b'>b</p><p id='c'>c</p><p id='d'>d</p>", environment: env)
        let a = doc.style("a"), b = doc.style("b"), c = doc.style("c"), d = doc.style("d")
        XCTAssertEqual(a.margin.left, .px(96))
        XCTAssertEqual(a.margin.right, .px(96))
        XCTAssertEqual(a.margin.top.resolve(against: 0)!, 96, accuracy: 1e-9)
        XCTAssertEqual(a.margin.bottom, .px(16))
        XCTAssertEqual(b.margin.left, .px(50))
        XCTAssertEqual(b.margin.right, .px(100))
        XCTAssertEqual(b.margin.top, .px(50))
        XCTAssertEqual(b.margin.bottom, .px(100))
        XCTAssertEqual(c.margin.left, .px(42))
        XCTAssertEqual(c.margin.right, .px(240), "mixed % and px is approximated against the viewport width")
        XCTAssertEqual(c.width, .percent(25))
        XCTAssertEqual(c.padding.left, .px(9))
        XCTAssertEqual(d.margin.left, .px(16))
        XCTAssertEqual(d.margin.right, .px(8))
        XCTAssertEqual(d.margin.top.resolve(against: 0)!, 37.795, accuracy: 0.01)
        XCTAssertEqual(d.width, .px(50))
        XCTAssertEqual(d.height, .px(10))
    }

    func testColors() throws {
        func parse(_ text: String) -> Color?? { ColorParser.parse(ComponentParser.parse(text).0[0]) }
        XCTAssertEqual(parse("#f00"), Color(red: 255, green: 0, blue: 0))
        XCTAssertEqual(parse("#ff000080"), Color(red: 255, green: 0, blue: 0, alpha: 128))
        XCTAssertEqual(parse("#0f08"), Color(red: 0, green: 255, blue: 0, alpha: 136))
        XCTAssertEqual(parse("rgb(1, 2, 3)"), Color(red: 1, green: 2, blue: 3))
        XCTAssertEqual(parse("rgba(1, 2, 3, 0.5)"), Color(red: 1, green: 2, blue: 3, alpha: 128))
        XCTAssertEqual(parse("rgb(100% 0% 0% / 50%)"), Color(red: 255, green: 0, blue: 0, alpha: 128))
        XCTAssertEqual(parse("hsl(120, 100%, 50%)"), Color(red: 0, green: 255, blue: 0))
        XCTAssertEqual(parse("hsla(240deg 100% 50% / 1)"), Color(red: 0, green: 0, blue: 255))
        XCTAssertEqual(parse("rebeccapurple"), Color(red: 0x66, green: 0x33, blue: 0x99))
        XCTAssertEqual(parse("transparent"), .transparent)
        XCTAssertEqual(parse("currentColor"), .some(nil))
        XCTAssertTrue(parse("#ggg") == nil)
        XCTAssertTrue(parse("notacolor") == nil)
        let doc = try StyledDocument(css: "p { color: green; border: 1px solid; background: currentcolor url(x.png) no-repeat }", body: "<p id='p'>x</p>")
        XCTAssertEqual(doc.style("p").borderColor.top, nil, "border colour defaults to currentColor")
        XCTAssertEqual(doc.style("p").backgroundColor, Color(red: 0, green: 128, blue: 0))
    }

    func testFontShorthandAndKeywords() throws {
        let css = """
            #a { font: italic small-caps bold 12px/1.5 "Foo Bar", Georgia, serif }
            #b { font-size: x-large; font-weight: 300 }
            #b span { font-weight: bolder; font-size: larger }
            #c { font: 2em/150% sans-serif }
            #d { font-variant: small-caps oldstyle-nums; font-feature-settings: "liga" 0, "kern"; font-variant-ligatures: no-common-ligatures }
            """
        let doc = try StyledDocument(css: css, body: "<p id='a'>a</p><p id='b'>b <span id='s'>s</span></p><p id='c'>c</p><p id='d'>d</p>")
        let a = doc.style("a")
        XCTAssertEqual(a.fontStyle, .italic)
        XCTAssertEqual(a.fontVariantCaps, .smallCaps)
        XCTAssertEqual(a.fontWeight, 700)
        XCTAssertEqual(a.fontSize, 12)
        XCTAssertEqual(a.lineHeight, .number(1.5))
        XCTAssertEqual(a.fontFamilies, ["Foo Bar", "Georgia", "serif"])
        XCTAssertEqual(doc.style("b").fontSize, 24)
        XCTAssertEqual(doc.style("s").fontWeight, 400)
        XCTAssertEqual(doc.style("s").fontSize, 28.8, accuracy: 0.001)
        XCTAssertEqual(doc.style("c").fontSize, 32)
        XCTAssertEqual(doc.style("c").lineHeight, .px(48))
        let d = doc.style("d")
        XCTAssertEqual(d.fontVariantCaps, .smallCaps)
        XCTAssertEqual(Set(d.fontFeatures.map(\.tag)), ["onum", "clig", "liga", "kern"])
        XCTAssertEqual(d.fontFeatures.first { $0.tag == "liga" }?.value, 0)
    }

    func testBoxShorthands() throws {
        let css = """
            #a { margin: 1px 2px 3px; padding: 4px 5px; border: thick dashed red; border-left: 2px dotted }
            #b { margin: 0 auto; border-width: 1px 2px 3px 4px; border-style: solid; border-color: red blue }
            #c { list-style: square inside; page-break-before: always; page-break-inside: avoid; -webkit-hyphens: auto }
            #d { list-style: none; text-decoration: underline overline red wavy; overflow: hidden; box-sizing: border-box }
            #e { -epub-writing-mode: vertical-rl; -webkit-text-emphasis-style: filled sesame; -epub-text-combine: horizontal; word-wrap: break-word }
            """
        let doc = try StyledDocument(css: css, body: "<div id='a'>a</div><div id='b'>b</div><ul><li id='c'>c</li><li id='d'>d</li></ul><p id='e'>e</p>")
        let a = doc.style("a")
        XCTAssertEqual(a.margin, Edges(top: .px(1), right: .px(2), bottom: .px(3), left: .px(2)))
        XCTAssertEqual(a.padding, Edges(top: .px(4), right: .px(5), bottom: .px(4), left: .px(5)))
        XCTAssertEqual(a.borderWidth, Edges(top: 5, right: 5, bottom: 5, left: 2))
        XCTAssertEqual(a.borderStyle.top, .dashed)
        XCTAssertEqual(a.borderStyle.left, .dotted)
        XCTAssertEqual(a.borderColor.top, Color(red: 255, green: 0, blue: 0))
        XCTAssertEqual(a.borderColor.left, nil)
        let b = doc.style("b")
        XCTAssertEqual(b.margin.left, .auto)
        XCTAssertEqual(b.borderWidth, Edges(top: 1, right: 2, bottom: 3, left: 4))
        XCTAssertEqual(b.borderColor.right, Color(red: 0, green: 0, blue: 255))
        let c = doc.style("c")
        XCTAssertEqual(c.listStyleType, .square)
        XCTAssertEqual(c.listStylePosition, .inside)
        XCTAssertEqual(c.breakBefore, .page)
        XCTAssertEqual(c.breakInside, .avoid)
        XCTAssertEqual(c.hyphens, .auto)
        let d = doc.style("d")
        XCTAssertEqual(d.listStyleType, ListStyleType.none)
        XCTAssertEqual(d.textDecoration, [.underline, .overline])
        XCTAssertTrue(d.overflowHidden)
        XCTAssertEqual(d.boxSizing, .borderBox)
        let e = doc.style("e")
        XCTAssertEqual(e.writingMode, .verticalRL)
        XCTAssertEqual(e.textEmphasis?.mark, "﹅")
        XCTAssertEqual(e.textCombineUpright, .all)
        XCTAssertEqual(e.overflowWrap, .breakWord)
    }

    func testMediaQueries() throws {
        let env = StyleEnvironment(viewportWidth: 600, viewportHeight: 800, grayscale: true)
        func matches(_ query: String) -> Bool { MediaQueries.matches(text: query, env) }
        XCTAssertTrue(matches(""))
        XCTAssertTrue(matches("screen"))
        XCTAssertTrue(matches("print"))
        XCTAssertTrue(matches("all and (min-width: 500px)"))
        XCTAssertFalse(matches("screen and (min-width: 601px)"))
        XCTAssertTrue(matches("(max-width: 37.5em)"))
        XCTAssertTrue(matches("(orientation: portrait)"))
        XCTAssertFalse(matches("(orientation: landscape)"))
        XCTAssertTrue(matches("(monochrome)"))
        XCTAssertFalse(matches("(color)"))
        XCTAssertFalse(matches("amzn-kf8"))
        XCTAssertFalse(matches("amzn-mobi"))
        XCTAssertTrue(matches("not amzn-mobi"))
        XCTAssertTrue(matches("amzn-mobi, screen"))
        XCTAssertTrue(matches("(width >= 600px)"))
        XCTAssertTrue(matches("(400px < width <= 600px)"))
        XCTAssertFalse(matches("(width > 600px)"))
        XCTAssertTrue(matches("not (color)"))
        XCTAssertFalse(matches("(min-width: 100px) and (unknown-feature: 1)"))
        XCTAssertTrue(matches("only screen and (min-device-width: 320px) and (max-device-width: 1024px)"))
        XCTAssertFalse(matches("tv"))
        XCTAssertFalse(matches("screen and"), "malformed queries never match")
        XCTAssertTrue(matches("(min-aspect-ratio: 1/2)"))
        let colour = StyleEnvironment(viewportWidth: 600, viewportHeight: 800, grayscale: false)
        XCTAssertTrue(MediaQueries.matches(text: "(color)", colour))
        let doc = try StyledDocument(
            css: "@media amzn-kf8 { p { color: red } } @media screen and (min-width: 100px) { @media print { p { font-style: italic } } }",
            body: "<p id='p'>x</p>", environment: env)
        XCTAssertEqual(doc.style("p").color, .black)
        XCTAssertEqual(doc.style("p").fontStyle, .italic)
    }

    func testSupports() throws {
        let css = """
            @supports (display: flex) { #a { color: red } }
            @supports (display: bogus) { #a { font-style: italic } }
            @supports not (frobnicate: 1) and (color: red) { #b { color: red } }
            @supports (color: red) or (x: y) { #c { color: red } }
            @supports selector(p:nth-child(2)) { #d { color: red } }
            """
        let doc = try StyledDocument(css: css, body: "<p id='a'>a</p><p id='b'>b</p><p id='c'>c</p><p id='d'>d</p>")
        let red = Color(red: 255, green: 0, blue: 0)
        XCTAssertEqual(doc.style("a").color, red)
        XCTAssertEqual(doc.style("a").fontStyle, .normal)
        XCTAssertEqual(doc.style("b").color, .black, "`not … and …` without parentheses is invalid")
        XCTAssertEqual(doc.style("c").color, red)
        XCTAssertEqual(doc.style("d").color, red)
    }

    /// css-report and @supports count what layout honours: a value Quire parses but does not act
    /// on is unsupported, and `@supports` on it is false, so the book's fallback applies.
    func testUnhonouredValuesAreUnsupported() throws {
        for (declaration, applied) in [
            ("writing-mode: vertical-rl", true), ("writing-mode: vertical-lr", true),
            ("-epub-writing-mode: horizontal-tb", true), ("text-emphasis-position: under left", true),
            ("text-orientation: upright", true), ("-epub-text-combine: horizontal", true), ("text-combine-upright: none", true),
            ("position: absolute", true),
            ("position: relative", true), ("left: 2em", true), ("position: sticky", false), ("background: rgb(0, 0, 255)", true), ("top: 0", true), ("display: grid", false),
            ("display: flex", true), ("object-fit: contain", false), ("overflow: hidden", false), ("unicode-bidi: isolate", false),
            ("text-align-last: justify", true), ("height: 5em", true), ("background-image: linear-gradient(red, blue)", true),
            ("background-image: url(a.png)", true), ("background-image: url(a.png), url(b.png)", true),
            ("background-image: linear-gradient(red, blue), url(b.png)", true),
            ("background-image: -webkit-gradient(linear, left top, left bottom, from(red), to(blue))", false),
            ("background: red linear-gradient(45deg, red, blue)", true), ("background: url(a.png) no-repeat", true),
            ("border-collapse: collapse", true), ("border-spacing: 2px 4px", true), ("opacity: 50%", true),
            ("text-transform: full-width", true), ("hanging-punctuation: allow-end", true), ("hanging-punctuation: force-end", true),
            ("hanging-punctuation: none", true), ("hanging-punctuation: first last", false), ("hanging-punctuation: first allow-end", false),
        ] {
            let colon = declaration.firstIndex(of: ":")!
            let raw = RawDeclaration(
                name: String(declaration[..<colon]), value: ComponentParser.parse(String(declaration[declaration.index(after: colon)...])).0,
                important: false)
            XCTAssertEqual(Properties.compile(raw).0, applied ? .applied : .unsupported, declaration)
        }
        let css = """
            @supports (position: sticky) { #a { color: red } }
            @supports not (display: grid) { #b { color: red } }
            """
        let doc = try StyledDocument(css: css, body: "<p id='a'>a</p><p id='b'>b</p>")
        XCTAssertEqual(doc.style("a").color, .black, "sticky is not offered")
        XCTAssertEqual(doc.style("b").color, Color(red: 255, green: 0, blue: 0), "grid's fallback applies")
    }

    /// hwb() colours (CSS Color 4), with and without alpha.
    func testHWBColours() throws {
        let css = "#a { color: hwb(0 0% 0%) } #b { color: hwb(120deg 20% 20% / 50%) } #c { color: hwb(0 60% 60%) }"
        let doc = try StyledDocument(css: css, body: "<p id='a'>a</p><p id='b'>b</p><p id='c'>c</p>")
        XCTAssertEqual(doc.style("a").color, Color(red: 255, green: 0, blue: 0))
        XCTAssertEqual(doc.style("b").color, Color(red: 51, green: 204, blue: 51, alpha: 128))
        XCTAssertEqual(doc.style("c").color, Color(red: 128, green: 128, blue: 128), "whiteness and blackness over 100% are grey")
    }

    func testFontFaceAndPageRules() throws {
        let css = """
            @font-face { font-family: "Libre"; src: url("../fonts/Libre-Bold.otf") format("opentype"), local("Libre Bold"); font-weight: bold; font-style: italic; unicode-range: U+0000-00FF, U+2??; }
            @font-face { font-family: Var; src: url(../fonts/v.woff2); font-weight: 100 900 }
            @font-face { font-family: NoSource }
            @page { size: A5; margin: 1in 2em }
            @page :first { margin-top: 5in }
            """
        let doc = try StyledDocument(css: css, body: "<p>x</p>")
        let faces = doc.styles.fontFaces
        XCTAssertEqual(faces.count, 2)
        XCTAssertEqual(faces[0].family, "Libre")
        XCTAssertEqual(faces[0].weight, 700...700)
        XCTAssertEqual(faces[0].style, .italic)
        XCTAssertEqual(faces[0].sources, [FontSource(kind: .url("OEBPS/fonts/Libre-Bold.otf"), format: "opentype"), FontSource(kind: .local("Libre Bold"))])
        XCTAssertEqual(faces[0].unicodeRanges, [0...0xFF, 0x200...0x2FF])
        XCTAssertEqual(faces[1].weight, 100...900)
        let page = try XCTUnwrap(doc.styles.pageRule)
        XCTAssertEqual(page.width!, 148 * 96 / 25.4, accuracy: 0.01)
        XCTAssertEqual(page.margin.top, .px(96))
        XCTAssertEqual(page.margin.left, .px(32))
    }

    func testBorderRadiusAndBoxShadowValues() throws {
        func parse(_ name: String, _ text: String) -> [(PropertyID, SpecifiedValue)]? { Properties.parse(name, ComponentParser.parse(text).0.significant) }
        XCTAssertEqual(parse("border-radius", "1px 2px / 3px")?.count, 4)
        XCTAssertNil(parse("border-radius", "1px / 2px / 3px"))
        XCTAssertNil(parse("border-radius", "-1px"), "never negative")
        XCTAssertNil(parse("box-shadow", "1px"), "one length is not a shadow")
        XCTAssertNil(parse("box-shadow", "1px 1px -2px red"), "a negative blur")
        XCTAssertNil(parse("box-shadow", "1px red 1px"), "the lengths go together")
        XCTAssertEqual(parse("box-shadow", "inset red 1px 2px, 3px 4px 5px 6px")?.count, 1)
        let doc = try StyledDocument(
            css: "#a { border-radius: 10px 20% / 5px; box-shadow: 2px 3px 4px 5px red, inset 0 0 1em } #b { -webkit-border-radius: 1em }",
            body: "<p id='a'>a</p><p id='b'>b</p>", environment: StyleEnvironment(viewportWidth: 500, viewportHeight: 1000))
        let a = doc.style("a")
        XCTAssertEqual(a.borderRadius.topLeft, CornerRadius(horizontal: .px(10), vertical: .px(5)))
        XCTAssertEqual(a.borderRadius.topRight, CornerRadius(horizontal: .percent(20), vertical: .px(5)))
        XCTAssertEqual(a.borderRadius.bottomRight, CornerRadius(horizontal: .px(10), vertical: .px(5)))
        XCTAssertEqual(a.boxShadows, [
            BoxShadow(x: 2, y: 3, blur: 4, spread: 5, color: Color(red: 255, green: 0, blue: 0), inset: false),
            BoxShadow(x: 0, y: 0, blur: 16, spread: 0, color: nil, inset: true),
        ])
        XCTAssertEqual(doc.style("b").borderRadius.bottomLeft, CornerRadius(horizontal: .px(16), vertical: .px(16)))
    }

    func testBackgroundLayers() throws {
        let doc = try StyledDocument(
            css: """
                #a { background: url(a.png) no-repeat 100% 50% / 50% auto, url(b.png) bottom center #fff }
                #b { background-image: url(a.png); background-position: right 10px bottom; background-repeat: repeat-x }
                #c { background-position: top left; background-size: cover } #d { background: linear-gradient(red, blue), url(a.png) }
                """,
            body: "<p id='a'>a</p><p id='b'>b</p><p id='c'>c</p><p id='d'>d</p>", environment: StyleEnvironment(viewportWidth: 500, viewportHeight: 1000))
        let a = doc.style("a")
        XCTAssertEqual(a.backgroundImages, [.url("/OEBPS/text/a.png"), .url("/OEBPS/text/b.png")], "relative to the style sheet, made root-relative")
        XCTAssertEqual(a.backgroundRepeats, [BackgroundRepeat(x: .noRepeat, y: .noRepeat), BackgroundRepeat(x: .repeat, y: .repeat)])
        XCTAssertEqual(a.backgroundPositions, [
            BackgroundPosition(x: .percent(100), xFromEnd: false, y: .percent(50), yFromEnd: false),
            BackgroundPosition(x: .percent(50), xFromEnd: false, y: .zero, yFromEnd: true),
        ])
        XCTAssertEqual(a.backgroundSizes, [.lengths(.percent(50), nil), .lengths(nil, nil)])
        XCTAssertEqual(a.backgroundColor, Color(red: 255, green: 255, blue: 255))
        let b = doc.style("b")
        XCTAssertEqual(b.backgroundPositions, [BackgroundPosition(x: .px(10), xFromEnd: true, y: .zero, yFromEnd: true)])
        XCTAssertEqual(b.backgroundRepeats, [BackgroundRepeat(x: .repeat, y: .noRepeat)])
        let c = doc.style("c")
        XCTAssertEqual(c.backgroundPositions, [BackgroundPosition(x: .zero, xFromEnd: false, y: .zero, yFromEnd: false)])
        XCTAssertEqual(c.backgroundSizes, [.cover])
        // A gradient and an image together are two layers, both drawn (W3C lay-fxl-xhtml-icb's grid
        // is two gradients tiled by background-size); only one auto-sized gradient is a plain fill.
        let d = doc.style("d")
        XCTAssertEqual(d.backgroundImages.count, 2)
        guard case .gradient(let gradient)? = d.backgroundImages[0] else { return XCTFail("\(d.backgroundImages)") }
        XCTAssertEqual(gradient.stops.map(\.color), [Color(red: 255, green: 0, blue: 0), Color(red: 0, green: 0, blue: 255)])
        XCTAssertEqual(d.backgroundImages[1], .url("/OEBPS/text/a.png"))
        XCTAssertNil(d.backgroundGradient)
        func parse(_ name: String, _ text: String) -> [(PropertyID, SpecifiedValue)]? { Properties.parse(name, ComponentParser.parse(text).0.significant) }
        XCTAssertNil(parse("background-position", "left right"))
        XCTAssertNil(parse("background", "url(a.png) / 10px"), "a size needs a position before it")
        XCTAssertNil(parse("background-repeat", "repeat-x repeat"))
        XCTAssertTrue(Properties.honoured(.backgroundImage, parse("background-image", "url(a.png)")![0].1))
        XCTAssertFalse(Properties.honoured(.backgroundImage, parse("background-image", "image-set(url(a.png) 1x)")![0].1))
        // A colour function in the shorthand is the colour, not an image (it was read as one).
        let shorthand = try XCTUnwrap(parse("background", "rgb(0, 0, 255)"))
        XCTAssertEqual(shorthand.first { $0.0 == .backgroundColor }?.1, .color(Color(red: 0, green: 0, blue: 255)))
        XCTAssertTrue(shorthand.allSatisfy { Properties.honoured($0.0, $0.1) })
        XCTAssertNotNil(parse("background", "hsl(120, 50%, 50%) url(a.png) no-repeat"))
    }

    /// `position`, the insets (logical ones too) and `z-index` are honoured.
    func testPositionAndZIndex() throws {
        let doc = try StyledDocument(
            css: "#a { position: absolute; inset-inline-start: 3em; inset-block-start: 1em; z-index: -2 } #b { position: fixed; inset: 1px 2px; z-index: auto }",
            body: "<p id='a'>a</p><p id='b'>b</p>", environment: StyleEnvironment(viewportWidth: 500, viewportHeight: 1000))
        let a = doc.style("a")
        XCTAssertEqual(a.position, .absolute)
        XCTAssertEqual(a.offsets.left, .px(48))
        XCTAssertEqual(a.offsets.top, .px(16))
        XCTAssertEqual(a.zIndex, -2)
        let b = doc.style("b")
        XCTAssertEqual(b.offsets, Edges(top: .px(1), right: .px(2), bottom: .px(1), left: .px(2)))
        XCTAssertNil(b.zIndex)
        func parse(_ name: String, _ text: String) -> [(PropertyID, SpecifiedValue)]? { Properties.parse(name, ComponentParser.parse(text).0.significant) }
        for (name, text) in [("position", "absolute"), ("top", "12px"), ("inset-inline-end", "10%"), ("z-index", "3")] {
            let pairs = try XCTUnwrap(parse(name, text), name)
            XCTAssertTrue(pairs.allSatisfy { Properties.honoured($0.0, $0.1) }, name)
        }
        XCTAssertFalse(Properties.honoured(.position, parse("position", "sticky")![0].1))
        XCTAssertNil(parse("z-index", "1.5"))
    }

    func testColumnProperties() throws {
        let doc = try StyledDocument(
            css: "#a { columns: 12em 3; column-gap: 5%; -webkit-column-rule: thin dotted red; column-fill: auto } #b { oeb-column-number: 2 } #c { -moz-columns: 4 }",
            body: "<div id='a'>a</div><div id='b'>b</div><div id='c'>c</div><p id='d'>d</p>", environment: StyleEnvironment(viewportWidth: 500, viewportHeight: 1000))
        let a = doc.style("a")
        XCTAssertEqual(a.columnWidth, 192)
        XCTAssertEqual(a.columnCount, 3)
        XCTAssertEqual(a.columnGap, .percent(5))
        XCTAssertEqual(a.columnRuleStyle, .dotted)
        XCTAssertEqual(a.columnRuleWidth, 1)
        XCTAssertEqual(a.columnRuleColor, Color(red: 255, green: 0, blue: 0))
        XCTAssertFalse(a.columnBalance)
        XCTAssertEqual(doc.style("b").columnCount, 2, "EPUB's alias")
        XCTAssertEqual(doc.style("c").columnCount, 4)
        XCTAssertNil(doc.style("c").columnWidth)
        XCTAssertFalse(doc.style("d").isMultiColumn)
        func parse(_ name: String, _ text: String) -> [(PropertyID, SpecifiedValue)]? { Properties.parse(name, ComponentParser.parse(text).0.significant) }
        XCTAssertNil(parse("column-count", "0"))
        XCTAssertNil(parse("column-width", "-1em"))
        XCTAssertNil(parse("columns", "2 3"))
        for (text, honoured) in [("under", true), ("auto", true), ("under left", true), ("right", true)] {
            let pairs = try XCTUnwrap(parse("text-underline-position", text), text)
            XCTAssertEqual(Properties.honoured(pairs[0].0, pairs[0].1), honoured, text)
        }
        XCTAssertNil(parse("text-underline-position", "left right"))
        // text-emphasis-position: [over | under] && [right | left]?, right when the side is not given.
        for (text, value) in [("over", "over right"), ("under left", "under left"), ("left under", "under left"), ("over right", "over right")] {
            XCTAssertEqual(try XCTUnwrap(parse("text-emphasis-position", text), text).first?.1, .keyword(value), text)
        }
        for text in ["left", "over under", "right left", "over left right"] { XCTAssertNil(parse("text-emphasis-position", text), text) }
        // hanging-punctuation: none | [first || [force-end | allow-end] || last]
        for text in ["none", "allow-end", "last force-end first", "first last"] { XCTAssertNotNil(parse("hanging-punctuation", text), text) }
        for text in ["allow-end force-end", "none first", "first first", "end"] { XCTAssertNil(parse("hanging-punctuation", text), text) }
        XCTAssertNotNil(parse("columns", "auto"))
    }
}
