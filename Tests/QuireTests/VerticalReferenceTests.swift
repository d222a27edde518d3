import Foundation
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import XCTest

/// Vertical chapters against a browser: headless Chromium (Debian's `chromium`, which `make setup`
/// installs) lays out the same chapter in a viewport the size of Quire's content box, with the
/// book's CSS and the same fonts (Quire's bundled ones for the generic families, Noto CJK for
/// Japanese and Chinese), and reports where each character stands. The columns of Quire's first
/// page must be Chromium's: the same first and last character in each of the first ten columns,
/// and as many columns on the page (within one).
final class VerticalReferenceTests: XCTestCase {
    /// One column: its first and last characters (white space and ruby annotations left out).
    struct Column: Equatable, CustomStringConvertible {
        var first: String
        var last: String
        var description: String { "\(first)…\(last)" }
    }

    /// A chapter's columns, and how many of them the first page holds.
    struct Columns {
        var all: [Column]
        var onFirstPage: Int
    }

    /// Chromium's columns: a script measures each character's box after the fonts load; a new
    /// column starts where a character stands above the one before (back at the top) or wholly
    /// left of the column so far (a short column's next one may start lower, indented).
    /// Columns wholly inside the viewport are the first page's.
    static let measure = """
        document.getElementById('chapter').addEventListener('load', function () {
            var d = this.contentDocument;
            d.fonts.ready.then(function () {
                var walker = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT);
                var columns = [], node, current = null;
                while ((node = walker.nextNode())) {
                    if (node.parentElement.closest('rt, rp, script, style, title')) continue;
                    var text = node.data;
                    for (var i = 0; i < text.length; i++) {
                        var code = text.charCodeAt(i);
                        var width = (code >= 0xD800 && code < 0xDC00) ? 2 : 1;
                        var character = text.substr(i, width);
                        if (/\\s/.test(character)) { i += width - 1; continue; }
                        var range = d.createRange();
                        range.setStart(node, i); range.setEnd(node, i + width);
                        i += width - 1;
                        var box = range.getBoundingClientRect();
                        if (box.width === 0 && box.height === 0) continue;
                        if (!current || box.top < current.top - box.height / 2 || box.right <= current.left + 0.5) {
                            current = { top: box.top, left: box.left, first: character, last: character };
                            columns.push(current);
                        } else {
                            current.last = character;
                            current.top = box.top;
                            current.left = Math.min(current.left, box.left);
                        }
                    }
                }
                // Columns wholly inside the frame are the first page's.
                columns.forEach(function (c) { c.firstPage = c.left >= -0.5; });
                var page = columns;
                var out = document.createElement('pre');
                out.id = 'quire-columns';
                out.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(page))));
                document.body.appendChild(out);
            });
        });
        """

    /// The `-epub-` properties of vertical books in the standard names Chromium reads.
    static func unprefixed(_ css: String) -> String {
        var text = css
        for (prefixed, standard) in [
            ("-epub-text-combine: horizontal", "text-combine-upright: all"),
            ("-epub-text-combine:horizontal", "text-combine-upright:all"),
            ("-epub-writing-mode", "writing-mode"), ("-epub-text-orientation", "text-orientation"),
            ("-epub-text-emphasis", "text-emphasis"),
        ] {
            text = text.replacingOccurrences(of: prefixed, with: standard)
        }
        return text
    }

    /// Chromium's first-page columns of spine item `spine`, in a viewport of `width`×`height` CSS px.
    static func chromiumColumns(book: URL, spine: Int, width: Double, height: Double, directory: URL)
        throws -> Columns
    {
        let unpacked = directory.appendingPathComponent("book")
        let unzip = try TestSupport.run(
            URL(fileURLWithPath: "/usr/bin/unzip"), ["-q", "-o", book.path, "-d", unpacked.path])
        XCTAssertEqual(unzip.status, 0, unzip.stderr)
        let container = try EPUBContainer.open(path: book.path)
        let publication = container.publication
        let path = try XCTUnwrap(publication.item(for: publication.spine[spine])?.path)
        let chapter = unpacked.appendingPathComponent(path)
        // Chromium reads no `-epub-` properties (reading systems built on it map them, as here).
        for file in FileManager.default.enumerator(at: unpacked, includingPropertiesForKeys: nil)!
            .compactMap({ $0 as? URL })
        where ["css", "xhtml", "html"].contains(file.pathExtension) {
            let text = try String(contentsOf: file, encoding: .utf8)
            let mapped = Self.unprefixed(text)
            if mapped != text { try mapped.write(to: file, atomically: true, encoding: .utf8) }
        }
        var source = try String(contentsOf: chapter, encoding: .utf8)
        // No scroll bars (they would take room from the viewport).
        let style =
            "<style>html::-webkit-scrollbar { display: none } html { scrollbar-width: none }</style>"
        let head = try XCTUnwrap(source.range(of: "</head>", options: [.caseInsensitive, .backwards]))
        source.replaceSubrange(head, with: style + "</head>")
        try source.write(to: chapter, atomically: true, encoding: .utf8)
        // The chapter in a frame exactly the content box's size (a headless window has a minimum
        // width and its own chrome), measured from the page around it.
        let wrapper = chapter.deletingLastPathComponent().appendingPathComponent("quire-measure.html")
        try """
        <!DOCTYPE html><html><body style="margin:0"><iframe id="chapter" src="\(chapter.lastPathComponent.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "")" \
        style="width:\(width)px;height:\(height)px;border:0;display:block"></iframe><script>\(measure)</script></body></html>
        """.write(to: wrapper, atomically: true, encoding: .utf8)
        // Quire's fonts for the generic families, the system's Noto CJK for the rest.
        let fonts = TestSupport.packageRoot.appendingPathComponent("Fonts").path
        let config = directory.appendingPathComponent("fonts.conf")
        try """
        <?xml version="1.0"?>
        <!DOCTYPE fontconfig SYSTEM "fonts.dtd">
        <fontconfig>
            <dir>\(fonts)</dir>
            <dir>/usr/share/fonts</dir>
            <cachedir>\(directory.path)/fontcache</cachedir>
            <alias binding="strong"><family>serif</family><prefer><family>Linux Libertine O</family><family>Noto Serif CJK JP</family></prefer></alias>
            <alias binding="strong"><family>sans-serif</family><prefer><family>Linux Biolinum O</family><family>Noto Sans CJK JP</family></prefer></alias>
        </fontconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        let chromium = try TestSupport.run(
            URL(fileURLWithPath: "/usr/bin/chromium"),
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--allow-file-access-from-files",
                "--user-data-dir=\(directory.path)/profile",
                "--window-size=\(Int(width) + 100),\(Int(height) + 200)",
                "--virtual-time-budget=10000", "--dump-dom", wrapper.absoluteString,
            ],
            environment: ["FONTCONFIG_FILE": config.path])
        XCTAssertEqual(chromium.status, 0, chromium.stderr)
        let dom = chromium.stdoutText
        guard let start = dom.range(of: "<pre id=\"quire-columns\">"),
            let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex),
            let data = Data(base64Encoded: String(dom[start.upperBound..<end.lowerBound])),
            let columns = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else {
            XCTFail("Chromium reported no columns: \(chromium.stderr.suffix(500))")
            return Columns(all: [], onFirstPage: 0)
        }
        return Columns(
            all: columns.map {
                Column(first: $0["first"] as? String ?? "", last: $0["last"] as? String ?? "")
            },
            onFirstPage: columns.filter { $0["firstPage"] as? Bool ?? false }.count)
    }

    /// Quire's columns: each line's first and last character drawn (glyphs of the text, in text
    /// order; ruby has none), page after page.
    static func quireColumns(_ chapter: ChapterLayout) throws -> Columns {
        let text = DocumentText(try XCTUnwrap(chapter.document)).units
        var columns: [Column] = []
        var onFirstPage = 0
        for page in chapter.pages.prefix(4) {
            let glyphs = VerticalWritingTests.glyphs(page)
            for line in page.lines.sorted(by: { $0.start < $1.start }) {
                let sources = glyphs.map(\.source).filter {
                    $0 >= line.start && $0 < line.end && $0 < text.count
                }
                .filter { !(Unicode.Scalar(text[$0]).map { $0.properties.isWhitespace } ?? false) }
                guard let first = sources.min(), let last = sources.max() else { continue }
                func character(_ offset: Int) -> String {
                    let unit = text[offset]
                    if unit >= 0xD800 && unit < 0xDC00 && offset + 1 < text.count {
                        return String(decoding: text[offset...(offset + 1)], as: UTF16.self)
                    }
                    return String(decoding: [unit], as: UTF16.self)
                }
                columns.append(Column(first: character(first), last: character(last)))
            }
            if page.indexInChapter == 0 { onFirstPage = columns.count }
        }
        return Columns(all: columns, onFirstPage: onFirstPage)
    }

    func compare(_ relative: String, spine: Int) throws {
        let book = try TestSupport.corpusFile(relative)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            return XCTFail("chromium is missing: make setup installs it")
        }
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (layout, result) = try LayoutTests.layout(book.path)
        let chapter = try XCTUnwrap(result.chapters.first { $0.spineIndex == spine })
        XCTAssertTrue(
            chapter.pages.first?.vertical ?? false, "\(relative) spine item \(spine) is set in columns")
        let quire = try Self.quireColumns(chapter)
        let content = layout.settings.contentRect
        let scale = layout.settings.profile.pixelsPerCSSPixel
        let chromium = try Self.chromiumColumns(
            book: book, spine: spine, width: content.width / scale, height: content.height / scale,
            directory: directory)
        let shown = zip(quire.all.prefix(10), chromium.all.prefix(10)).enumerated().map {
            "\($0.offset + 1): quire \($0.element.0), chromium \($0.element.1)"
        }
        print(
            "\(relative): first page: quire \(quire.onFirstPage) columns, chromium \(chromium.onFirstPage)\n"
                + shown.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(quire.all.count, 10)
        XCTAssertGreaterThanOrEqual(chromium.all.count, 10)
        XCTAssertLessThanOrEqual(
            abs(quire.onFirstPage - chromium.onFirstPage), 1,
            "columns on the first page: quire \(quire.onFirstPage), chromium \(chromium.onFirstPage)")
        for (index, (ours, theirs)) in zip(quire.all.prefix(10), chromium.all.prefix(10)).enumerated() {
            XCTAssertEqual(ours, theirs, "column \(index + 1)")
        }
    }

    func testKusamakuraFirstChapterMatchesChromium() throws {
        try compare("idpf-epub3-samples/kusamakura-japanese-vertical-writing.epub", spine: 2)
    }

    func testTDPFVerticalChapterMatchesChromium() throws {
        try compare("tdpf-epub3guide-zh-hant/02_Reflow_Text_Vertical.epub", spine: 5)
    }
}
