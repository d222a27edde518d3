import Foundation
import QuireContainer
import QuireDocument
import QuireImages
import XCTest

@testable import QuireLayout
@testable import QuireStyle

/// The W3C reading-system tests, each asserting what its own criterion asks for: pixels where the
/// criterion is visual, the map or the error where it is structural (issue 20).
final class W3CConformanceTests: XCTestCase {
    struct Rendered {
        let directory: URL
        let map: [String: Any]
        let status: Int32
        let stderr: String

        var warnings: [String] { (map["warnings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String } }
        var pages: [[String: Any]] { map["pages"] as? [[String: Any]] ?? [] }
        func page(_ number: Int) -> URL { directory.appendingPathComponent(String(format: "pages/%04d.png", number)) }
    }

    /// Renders a suite publication (PNG pages at kobo-clara unless `arguments` say otherwise).
    static func render(_ name: String, _ arguments: String..., function: String = #function) throws -> Rendered {
        try render(name, arguments: arguments, function: function)
    }

    static func render(_ name: String, arguments: [String], function: String = #function) throws -> Rendered {
        let book = try TestSupport.corpusFile("\(TestSupport.w3cSuite)/\(name).epub")
        let directory = try TestSupport.temporaryDirectory("\(function)-\(name)")
        let result = try TestSupport.run(
            TestSupport.quireBinary, ["render", book.path, "--out", directory.path, "--quiet"] + (arguments.isEmpty ? ["--profile", "kobo-clara"] : arguments))
        let mapURL = directory.appendingPathComponent("positions.json")
        let map = (try? JSONSerialization.jsonObject(with: Data(contentsOf: mapURL))) as? [String: Any] ?? [:]
        return Rendered(directory: directory, map: map, status: result.status, stderr: result.stderr)
    }

    /// The share of a page's pixels (decoded at most 300 px wide) for which `test(r, g, b)` holds.
    static func share(_ file: URL, _ test: (Int, Int, Int) -> Bool) throws -> Double {
        let bytes = [UInt8](try Data(contentsOf: file))
        let image = try ImageDecoder.decode(bytes, info: ImageInfo.measure(bytes), maxWidth: 300, maxHeight: 400)
        var hits = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let pixel = image.pixel(x: x, y: y)
                if test(Int(pixel >> 16 & 0xFF), Int(pixel >> 8 & 0xFF), Int(pixel & 0xFF)) { hits += 1 }
            }
        }
        return Double(hits) / Double(image.width * image.height)
    }

    static func red(_ r: Int, _ g: Int, _ b: Int) -> Bool { r > 200 && g < 60 && b < 60 }

    // MARK: 1. Synthetic spreads and orientation

    static func spreads(_ rendered: Rendered) throws -> [String: Any] {
        try XCTUnwrap(rendered.map["spreads"] as? [String: Any], "the map says what was decided about spreads")
    }

    static func pairs(_ spreads: [String: Any]) -> [[Int?]] {
        (spreads["list"] as? [[String: Any]] ?? []).map { [$0["left"] as? Int, $0["right"] as? Int, $0["center"] as? Int] }
    }

    /// lay-fxl-page-spread-combined on a landscape page box: pages are laid out at half its width
    /// and paired; page-spread-left and -right put pages 2 and 3 side by side (pink left, green
    /// right in the spread image), pages 1 and 4 stand alone.
    func testPageSpreadPropertiesPairPagesOnALandscapeScreen() throws {
        let rendered = try Self.render("lay-fxl-page-spread-combined", "--size", "1448x1072")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        let spreads = try Self.spreads(rendered)
        XCTAssertEqual(spreads["active"] as? Bool, true)
        XCTAssertEqual([spreads["width"] as? Int, spreads["height"] as? Int], [1448, 1072])
        XCTAssertEqual((rendered.map["profile"] as? [String: Any])?["width"] as? Int, 724, "each page is half the screen")
        XCTAssertEqual(Self.pairs(spreads), [[1, nil, nil], [2, 3, nil], [4, nil, nil]])
        let image = rendered.directory.appendingPathComponent("spreads/0002.png")
        let bytes = [UInt8](try Data(contentsOf: image))
        let decoded = try ImageDecoder.decode(bytes, info: ImageInfo.measure(bytes), maxWidth: 1448, maxHeight: 1072)
        XCTAssertEqual([decoded.width, decoded.height], [1448, 1072])
        func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let p = decoded.pixel(x: x, y: y)
            return (Int(p >> 16 & 0xFF), Int(p >> 8 & 0xFF), Int(p & 0xFF))
        }
        let left = rgb(200, 600), right = rgb(1248, 600)
        XCTAssertTrue(left.0 > 230 && left.1 < 210, "page 2 (pink) on the left: \(left)")
        XCTAssertTrue(right.1 > 230 && right.0 < 180, "page 3 (green) on the right: \(right)")
        // No gap at the spine: both halves are coloured either side of the middle.
        XCTAssertTrue(rgb(722, 600).1 < 230 && rgb(726, 600).0 < 200)
    }

    /// rendition:spread none, landscape and both, and --spreads none: pages are paired only where
    /// the book and the page box allow it, and the map says why.
    func testSpreadSettingsAreHonoured() throws {
        for (name, arguments, active) in [
            ("lay-fxl-spread-none", ["--size", "1448x1072"], false),
            ("lay-fxl-spread-landscape", ["--size", "1448x1072"], true),
            ("lay-fxl-spread-landscape", ["--profile", "kobo-clara"], false),
            ("lay-fxl-spread-both", ["--profile", "kobo-clara"], true),
            ("lay-fxl-spread-auto", ["--size", "1448x1072"], true),
            ("lay-fxl-spread-default", ["--profile", "kobo-clara"], false),
            ("lay-fxl-spread-auto", ["--size", "1448x1072", "--spreads", "none"], false),
        ] {
            let rendered = try Self.render(name, arguments: arguments + ["--map-only"])
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            let spreads = try Self.spreads(rendered)
            XCTAssertEqual(spreads["active"] as? Bool, active, "\(name) \(arguments): \(spreads["reason"] ?? "")")
            XCTAssertEqual(Self.pairs(spreads).isEmpty, !active, name)
            if active { XCTAssertTrue(Self.pairs(spreads).allSatisfy { $0.compactMap { $0 }.count <= 2 }) }
        }
    }

    /// fxl-page-spread-center: a page-spread-center page stands alone in the middle; and a
    /// right-to-left book (pkg-spine-progression_rtl) starts its spreads on the right.
    func testCentredPagesAndRightToLeftSpreads() throws {
        let centre = try Self.render("fxl-page-spread-center", "--size", "1448x1072", "--map-only")
        defer { try? FileManager.default.removeItem(at: centre.directory) }
        XCTAssertEqual(Self.pairs(try Self.spreads(centre)), [[nil, nil, 1], [2, 3, nil], [4, nil, nil]])
        let rtl = try Self.render("pkg-spine-progression_rtl", "--size", "1448x1072", "--spreads", "both", "--map-only")
        defer { try? FileManager.default.removeItem(at: rtl.directory) }
        let pairs = Self.pairs(try Self.spreads(rtl))
        XCTAssertEqual(pairs.first?[1], 1, "the first page is on the right: \(pairs)")
    }

    /// lay-fxl-orientation-landscape on a portrait device: the page box is turned (the map says
    /// so), and on it the book's pages are paired; lay-fxl-orientation-default keeps the device's.
    func testOrientationFollowsTheBook() throws {
        let landscape = try Self.render("lay-fxl-orientation-landscape", "--profile", "kobo-clara", "--map-only")
        defer { try? FileManager.default.removeItem(at: landscape.directory) }
        let spreads = try Self.spreads(landscape)
        XCTAssertEqual([spreads["width"] as? Int, spreads["height"] as? Int], [1448, 1072])
        XCTAssertTrue((spreads["reason"] as? String ?? "").contains("turned for rendition:orientation landscape"))
        let auto = try Self.render("lay-fxl-orientation-default", "--profile", "kobo-clara", "--map-only")
        defer { try? FileManager.default.removeItem(at: auto.directory) }
        XCTAssertEqual([try Self.spreads(auto)["width"] as? Int, (auto.map["profile"] as? [String: Any])?["width"] as? Int], [1072, 1072])
        // --spreads is for EPUBs; a bad value is a usage error.
        let bad = try Self.render("lay-fxl-orientation-default", "--spreads", "sometimes", "--map-only")
        defer { try? FileManager.default.removeItem(at: bad.directory) }
        XCTAssertEqual(bad.status, 64, bad.stderr)
    }

    /// The EPUB-only options sit beside --theme, which still reaches the pages (it was lost once
    /// when --spreads and --flow were added); --spreads with a PDF is a usage error.
    func testThemeAndEPUBOnlyOptions() throws {
        let dark = try Self.render("cnt-xhtml-support", "--profile", "kobo-clara", "--theme", "dark")
        defer { try? FileManager.default.removeItem(at: dark.directory) }
        XCTAssertGreaterThan(try Self.share(dark.page(1)) { r, g, b in r + g + b < 90 }, 0.9, "a dark page")
        let badTheme = try Self.render("cnt-xhtml-support", "--theme", "purple", "--map-only")
        defer { try? FileManager.default.removeItem(at: badTheme.directory) }
        XCTAssertEqual(badTheme.status, 64, badTheme.stderr)
    }

    // MARK: 5. Scrolled flows

    /// lay-pkg-flow-scrolled-doc: each chapter is one tall image (in 16384 px tiles), and the map
    /// says where each line is; lay-pkg-flow-paginated stays paginated; lay-rendition-flow-pre-pag:
    /// pre-paginated items ignore rendition:flow.
    func testScrolledFlowMakesOneTallImagePerDocument() throws {
        let scrolled = try Self.render("lay-pkg-flow-scrolled-doc")
        defer { try? FileManager.default.removeItem(at: scrolled.directory) }
        let flow = try XCTUnwrap(scrolled.map["flow"] as? [String: Any])
        XCTAssertEqual(flow["layout"] as? String, "scrolled")
        XCTAssertEqual(flow["declared"] as? String, "scrolled-doc")
        let spine = try XCTUnwrap(scrolled.map["spine"] as? [[String: Any]])
        XCTAssertTrue(spine.allSatisfy { $0["pageCount"] as? Int == 1 }, "one page per document")
        let last = try XCTUnwrap(scrolled.pages.last?["scroll"] as? [String: Any])
        let height = try XCTUnwrap(last["height"] as? Int)
        let tiles = try XCTUnwrap(last["tiles"] as? [[String: Any]])
        XCTAssertGreaterThan(height, 16384, "a long chapter")
        XCTAssertEqual(tiles.count, (height + 16383) / 16384)
        XCTAssertEqual(tiles.compactMap { $0["height"] as? Int }.reduce(0, +), height, "the tiles cover the document")
        for tile in tiles {
            let file = scrolled.directory.appendingPathComponent(try XCTUnwrap(tile["image"] as? String))
            let bytes = [UInt8](try Data(contentsOf: file))
            let info = try ImageInfo.measure(bytes)
            XCTAssertEqual([info.width, info.height], [1072, tile["height"] as? Int ?? 0], file.lastPathComponent)
        }
        // Lines: offsets and y both grow down the document, and the last line is near its foot.
        let lines = try XCTUnwrap(last["lines"] as? [[Int]])
        XCTAssertGreaterThan(lines.count, 500)
        XCTAssertEqual(lines.map { $0[0] }, lines.map { $0[0] }.sorted())
        XCTAssertEqual(lines.map { $0[1] }, lines.map { $0[1] }.sorted())
        XCTAssertGreaterThan(lines.last![1], height - 400)

        let paginated = try Self.render("lay-pkg-flow-paginated", "--profile", "kobo-clara", "--map-only")
        defer { try? FileManager.default.removeItem(at: paginated.directory) }
        XCTAssertEqual((paginated.map["flow"] as? [String: Any])?["layout"] as? String, "paginated")
        XCTAssertGreaterThan(paginated.pages.count, 20)
        XCTAssertNil(paginated.pages[1]["scroll"])

        let mixed = try Self.render("lay-rendition-flow-pre-pag", "--profile", "kobo-clara", "--map-only")
        defer { try? FileManager.default.removeItem(at: mixed.directory) }
        let items = try XCTUnwrap(mixed.map["spine"] as? [[String: Any]])
        for (entry, page) in zip(items, mixed.pages) {
            XCTAssertEqual(page["scroll"] == nil, entry["layout"] as? String == "pre-paginated", "\(entry["href"] ?? "")")
        }
        // --flow paginated overrides the book.
        let forced = try Self.render("lay-pkg-flow-scrolled-doc", "--profile", "kobo-clara", "--flow", "paginated", "--map-only")
        defer { try? FileManager.default.removeItem(at: forced.directory) }
        XCTAssertGreaterThan(forced.pages.count, 20)
    }

    // MARK: 8. Smaller groups

    /// ocf-zip-comp: a container compressed with bzip2 is an error (exit 65), saying why.
    func testZipEntryCompressedWithBzip2IsAnError() throws {
        let rendered = try Self.render("ocf-zip-comp", "--map-only")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertEqual(rendered.status, 65, rendered.stderr)
        XCTAssertTrue(rendered.stderr.contains("compressed with bzip2"), rendered.stderr)
        XCTAssertTrue(rendered.stderr.contains("only Store and Deflate"), rendered.stderr)
    }

    /// pub-xml-names: `<p::p>` is reported as an error on its page (the page is still shown,
    /// read as tag soup, like every document that is not well-formed).
    func testInvalidXMLNameIsReported() throws {
        let rendered = try Self.render("pub-xml-names", "--map-only")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertTrue(
            rendered.warnings.contains { $0.contains("content_001.xhtml: line 6: element name 'p::p' is not a valid XML name") }, "\(rendered.warnings)")
    }

    /// pkg-manifest-unlisted-resource: the red image the manifest does not list is not drawn.
    func testUnlistedResourceIsNotShown() throws {
        let rendered = try Self.render("pkg-manifest-unlisted-resource")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertEqual(try Self.share(rendered.page(1), Self.red), 0, "no red pixel")
        XCTAssertTrue(rendered.warnings.contains { $0.contains("EPUB/red.png is not listed in the manifest") }, "\(rendered.warnings)")
    }

    /// ocf-url_link-leaking-relative: `../../../../media/imgs/monastery.jpg` from EPUB/ stops at
    /// the root, so the photograph at media/imgs/ is shown.
    func testRelativeLinkPastTheRootIsClamped() throws {
        let rendered = try Self.render("ocf-url_link-leaking-relative")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertEqual(rendered.warnings, [])
        // The photograph: its blue sky (a placeholder is grey lines and text).
        XCTAssertGreaterThan(try Self.share(rendered.page(1)) { r, g, b in b > 150 && b > r + 30 }, 0.01)
    }

    /// pkg-lang_but_not_content: dc:language fr does not make the content French, so `<q>` gets
    /// “ ” (the default), not « ».
    func testPackageLanguageDoesNotLeakIntoContent() throws {
        let container = try EPUBContainer.open(path: try TestSupport.corpusFile("\(TestSupport.w3cSuite)/pkg-lang_but_not_content.epub").path)
        XCTAssertEqual(container.publication.metadata.languages, ["fr"])
        let item = try XCTUnwrap(container.publication.item(for: container.publication.spine[0]))
        let document = try ContentDocument.read(item, from: container)
        let styles = StyleEngine().computeStyles(
            document: document.tree, documentPath: document.path, environment: StyleEnvironment(), loadResource: { _ in nil })
        let q = try XCTUnwrap(document.tree.root?.descendants("q").first)
        XCTAssertEqual(styles.style(of: q.id).before?.text, "“")
        XCTAssertEqual(styles.style(of: q.id).after?.text, "”")
    }

    /// pkg-spine-progression-default: an Arabic book whose spine sets no direction turns right to
    /// left; the spine's own direction wins where there is one.
    func testDefaultProgressionFollowsTheLanguage() throws {
        for (name, declared, reading) in [
            ("pkg-spine-progression-default", "default", "rtl"), ("pkg-spine-progression_ltr", "ltr", "ltr"),
            ("pkg-spine-progression_rtl", "rtl", "rtl"), ("pkg-spine-progression-pre-paginated", "ltr", "ltr"),
        ] {
            let rendered = try Self.render(name, "--map-only")
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            let book = try XCTUnwrap(rendered.map["book"] as? [String: Any], name)
            XCTAssertEqual(book["pageProgression"] as? String, declared, name)
            XCTAssertEqual(book["readingProgression"] as? String, reading, name)
        }
    }

    /// The pkg-dir tests: a title or creator is shown in the direction its `dir` gives (`auto` by
    /// its first strong letter, else the package's): `info --json` says which, and the text
    /// output wraps it in a bidi isolate.
    func testMetadataDirection() throws {
        for (name, title, creator) in [
            ("pkg-dir-auto_root-rtl", "ltr", "rtl"), ("pkg-dir-auto_root-unset", "ltr", nil), ("pkg-dir_creator-rtl", nil, "rtl"),
            ("pkg-dir_rtl-root-ltr", "rtl", "ltr"), ("pkg-dir_rtl-root-unset", "rtl", nil), ("pkg-dir_unset-root-rtl", "rtl", "rtl"),
            ("pkg-dir_unset-root-unset", nil, nil),
        ] as [(String, String?, String?)] {
            let book = try TestSupport.corpusFile("\(TestSupport.w3cSuite)/\(name).epub").path
            let result = try TestSupport.quire("info", book, "--json")
            let info = try XCTUnwrap(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], name)
            let titles = try XCTUnwrap(info["titles"] as? [[String: Any]])
            let creators = try XCTUnwrap(info["creators"] as? [[String: Any]])
            XCTAssertEqual(titles.first?["direction"] as? String, title, "\(name): title")
            XCTAssertEqual(creators.first?["direction"] as? String, creator, "\(name): creator")
        }
        let text = try TestSupport.quire("info", try TestSupport.corpusFile("\(TestSupport.w3cSuite)/pkg-dir_rtl-root-unset.epub").path)
        let output = String(decoding: text.stdout, as: UTF8.self)
        XCTAssertTrue(output.contains("\u{2067}CSS: הרפתקה חדשה!\u{2069}"), output)
    }

    /// pub-xml-external-id: the external entity is never loaded, and the page is still shown
    /// (it was blank when the document fell back to the HTML parser).
    func testExternalEntityIsNotResolvedAndThePageIsShown() throws {
        let rendered = try Self.render("pub-xml-external-id")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertTrue(rendered.warnings.contains { $0.contains("external entity 'xxe' is declared; it is never loaded") }, "\(rendered.warnings)")
        XCTAssertGreaterThan(rendered.map["length"] as? Int ?? 0, 50, "the paragraph is there")
        let text = try XCTUnwrap((rendered.pages.first?["text"] as? [String: Any])?["highlight"] as? String)
        XCTAssertFalse(text.contains("fails"), text)
    }

    /// cnt-mathml-support: Presentation MathML is set as an equation: the superscript 2 is
    /// raised and smaller (its ink sits above the base's).
    func testMathMLScriptsAreRaised() throws {
        let container = try EPUBContainer.open(path: try TestSupport.corpusFile("\(TestSupport.w3cSuite)/cnt-mathml-support.epub").path)
        let item = try XCTUnwrap(container.publication.item(for: container.publication.spine[0]))
        let document = try ContentDocument.read(item, from: container)
        let styles = StyleEngine().computeStyles(
            document: document.tree, documentPath: document.path, environment: StyleEnvironment(), loadResource: { _ in nil })
        let script = try XCTUnwrap(document.tree.root?.descendants("mn").first)
        XCTAssertEqual(styles.style(of: script.id).style.verticalAlign, .super)
        let identifier = try XCTUnwrap(document.tree.root?.descendants("mi").first)
        XCTAssertEqual(styles.style(of: identifier.id).style.fontStyle, .italic)
        let fenced = try XCTUnwrap(document.tree.root?.descendants("mfenced").first)
        XCTAssertEqual(styles.style(of: fenced.id).before?.text, "(")
    }

    // MARK: 4. Manifest fallbacks

    /// pub-foreign_json-spine, _xml-spine, _xml-suffix-spine: a foreign spine item shows its
    /// XHTML fallback, and the TOC entry that names the foreign item lands on it.
    func testForeignSpineItemsShowTheirFallback() throws {
        for (name, type) in [
            ("pub-foreign_json-spine", "application/json"), ("pub-foreign_xml-spine", "application/xml"),
            ("pub-foreign_xml-suffix-spine", "application/dtc+xml"),
        ] {
            let rendered = try Self.render(name, "--map-only")
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            let spine = try XCTUnwrap(rendered.map["spine"] as? [[String: Any]], name)
            XCTAssertEqual(spine.map { $0["href"] as? String }, ["content_001.xhtml"], name)
            XCTAssertTrue(rendered.warnings.contains { $0.contains(type) && $0.contains("is shown through its fallback 'content_fallback'") }, "\(rendered.warnings)")
            let toc = try XCTUnwrap(rendered.map["toc"] as? [[String: Any]], name)
            XCTAssertEqual(toc.first?["page"] as? Int, 1, "\(name): the TOC entry resolves")
        }
    }

    /// scr-support-fallback: Quire runs no scripts, so a scripted spine item with a fallback shows
    /// the fallback.
    func testScriptedItemShowsItsFallback() throws {
        let rendered = try Self.render("scr-support-fallback", "--map-only")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        let spine = try XCTUnwrap(rendered.map["spine"] as? [[String: Any]])
        XCTAssertEqual(spine.map { $0["href"] as? String }, ["content_fallback.xhtml"])
    }

    /// pub-foreign_image: a PSD image shows its PNG fallback (a snowflake: blue on the page), not a placeholder.
    func testForeignImageShowsItsFallback() throws {
        let rendered = try Self.render("pub-foreign_image")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertEqual(rendered.warnings, [])
        XCTAssertGreaterThan(try Self.share(rendered.page(1)) { r, g, b in b > 100 && b > r + 40 && b > g + 20 }, 0.1)
    }

    /// pub-foreign_bad-fallback: a DMG whose fallback is a PSD has nothing to show. The book still
    /// opens (the test allows an error at ingestion; Quire shows a blank page and says why).
    func testForeignItemWithoutUsableFallbackIsBlankWithAWarning() throws {
        let rendered = try Self.render("pub-foreign_bad-fallback", "--map-only")
        defer { try? FileManager.default.removeItem(at: rendered.directory) }
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertTrue(rendered.warnings.contains { $0.contains("no item of its fallback chain (bar: image/psd) can be shown") }, "\(rendered.warnings)")
    }

    // MARK: 6. Image formats

    /// pub-cmt-avif, pub-cmt-jxl: the swan is drawn (its orange beak and dark background).
    func testAVIFAndJPEGXLImagesAreDrawn() throws {
        for name in ["pub-cmt-avif", "pub-cmt-jxl"] {
            let rendered = try Self.render(name)
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            XCTAssertEqual(rendered.warnings, [], name)
            XCTAssertGreaterThan(try Self.share(rendered.page(1)) { r, g, b in r > 180 && g > 40 && g < 140 && b < 80 }, 0.001, "\(name): the orange beak")
            XCTAssertGreaterThan(try Self.share(rendered.page(1)) { r, g, b in r + g + b < 200 }, 0.02, "\(name): the dark background")
        }
    }

    // MARK: 7. Viewport meta

    func testViewportMetaParsing() {
        let device = (400.0, 600.0)
        func size(_ content: String) -> [Double?] {
            let parsed = BookLayout.viewportSize(content, device: device)
            return [parsed.width, parsed.height]
        }
        XCTAssertEqual(size("width=900, height=600, width=1000, height=1000"), [900, 600], "the first value wins")
        XCTAssertEqual(size("width=1000px, height=600mm"), [1000, 600], "units are ignored")
        XCTAssertEqual(size("width=900, height=600, something, foo"), [900, 600], "invalid parts are skipped")
        XCTAssertEqual(size("width=device-width; height=device-height"), [400, 600])
        XCTAssertEqual(size("width=wide, height=600"), [nil, 600])
    }

    /// The lay-fxl-xhtml-icb tests: a 1000×1000 red box under a grid of the viewport's size; the
    /// page shows the grid and no red where the viewport is 900×600 (repeated keys, units,
    /// invalid parts and a second meta are all read the way the first declaration says).
    func testFixedLayoutViewportsClipToTheirDeclaredSize() throws {
        for (name, pages) in [
            ("lay-fxl-xhtml-icb", [1]), ("lay-fxl-xhtml-icb_repeated-in-meta", [1, 2]), ("lay-fxl-xhtml-icb_invalid_meta", [1, 2]),
            ("lay-fxl-xhtml-icb_multi", [1]),
        ] {
            let rendered = try Self.render(name)
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            for page in pages {
                XCTAssertLessThan(try Self.share(rendered.page(page), Self.red), 0.001, "\(name) page \(page): no red")
                // The grid: grey lines over a good part of the drawn area.
                XCTAssertGreaterThan(try Self.share(rendered.page(page)) { r, g, b in r < 200 && abs(r - g) < 20 && abs(g - b) < 20 }, 0.03, "\(name) page \(page): the grid")
            }
        }
        // icb_multi page 2 (viewport 1400×600) and _units/_multi_declarations (1000×600): a red band.
        let multi = try Self.render("lay-fxl-xhtml-icb_multi")
        defer { try? FileManager.default.removeItem(at: multi.directory) }
        XCTAssertGreaterThan(try Self.share(multi.page(2), Self.red), 0.01)
        for name in ["lay-fxl-xhtml-icb_units", "lay-fxl-xhtml-icb_multi_declarations"] {
            let rendered = try Self.render(name)
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            XCTAssertEqual(try Data(contentsOf: rendered.page(1)), try Data(contentsOf: rendered.page(2)), "\(name): the two pages look exactly the same")
            XCTAssertGreaterThan(try Self.share(rendered.page(1), Self.red), 0.05, name)
        }
    }

    // MARK: 3. Reflowable items in pre-paginated books

    /// lay-pp-spine-overrides_behave-as-global: a reflowable item in a pre-paginated book is set at
    /// the device's page and the reader's font size, so its ten paragraphs take as many pages as
    /// in a reflowable book (9 at kobo-clara, 12 pt; 3 when it was set in the 1000×600 frame),
    /// and a larger font takes more.
    func testReflowableItemInFixedLayoutBookIsSetAtTheDeviceSize() throws {
        var counts: [Int] = []
        for size in ["12", "18"] {
            let rendered = try Self.render("lay-pp-spine-overrides_behave-as-global", "--profile", "kobo-clara", "--font-size", size, "--map-only")
            defer { try? FileManager.default.removeItem(at: rendered.directory) }
            let spine = try XCTUnwrap(rendered.map["spine"] as? [[String: Any]])
            XCTAssertEqual(spine.map { $0["layout"] as? String }, ["pre-paginated", "reflowable"])
            XCTAssertEqual(spine[0]["pageCount"] as? Int, 1)
            counts.append(spine[1]["pageCount"] as? Int ?? 0)
        }
        XCTAssertEqual(counts[0], 9)
        XCTAssertGreaterThan(counts[1], counts[0])
    }
}
