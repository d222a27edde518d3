import Foundation
import XCTest

/// Books built to attack the parsers, the style engine and layout, each generated here (nothing is
/// downloaded). Each is either refused with one `quire: error:` line and its documented exit code,
/// or rendered with warnings that say what was left out. For every case, `quire render` must:
/// - finish within 120 s (a hang guard, not a timing: `timeout` kills it and the case fails);
/// - peak below 1 GiB of resident memory (GNU time's maximum RSS; more under a sanitizer, see `memoryBoundKB`);
/// - write nothing outside `--out` (the working directory and the input's stay as they were);
/// - show nothing of the local file an external entity names, in any output.
final class HostileBooksTests: XCTestCase {
    enum Expected: Sendable {
        /// Refused: the exit code and a phrase of the one error line.
        case refused(Int32, String)
        /// Rendered, with a warning holding this phrase (nil: any warnings or none).
        case rendered(warning: String?)
    }

    struct Case: Sendable {
        var name: String
        var expected: Expected
        var file = "book.epub"
        /// Writes the book to the first URL; the second is the secret file an entity may name.
        var make: @Sendable (URL, URL) throws -> Void
    }

    static let secretMarker = "QUIRE-SECRET-7f3a9c"
    static let hangGuardSeconds = 120
    /// 1 GiB, times the shadow memory of a sanitizer build (the 5 MB word peaks at 0.6 GB plain,
    /// 1.8 GB under ThreadSanitizer).
    static let memoryBoundKB = (1 << 20) * TestSupport.sanitizerMemoryFactor

    /// A book whose chapter body is `body`, with `css` as its stylesheet when given.
    static func book(body: String, css: String? = nil, head: String = "", doctype: String = "") -> @Sendable (URL, URL) throws -> Void {
        { url, _ in
            var book = TestBook()
            book.chapter = """
                <?xml version="1.0" encoding="utf-8"?>\(doctype)
                <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title>\(css == nil ? "" : #"<link rel="stylesheet" href="style.css"/>"#)\(head)</head><body>\(body)</body></html>
                """
            if let css {
                book.extraEntries.append(.init(name: "OEBPS/style.css", data: Array(css.utf8)))
                book.extraManifest += #"<item id="css" href="style.css" media-type="text/css"/>"#
            }
            try book.write(to: url)
        }
    }

    static func nested(_ open: String, _ close: String, _ depth: Int, _ inner: String = "deep") -> String {
        String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
    }

    /// A PNG whose header says `width`×`height` and whose IDAT holds `idat` (zlib data).
    static func png(width: UInt32, height: UInt32, idat: [UInt8]) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// zlib data that inflates to `count` zero bytes (stored deflate blocks would be as large: a run
    /// is written with `zlib` through Python, which every test machine has).
    static func zlibZeros(_ count: Int) throws -> [UInt8] {
        let result = try TestSupport.run(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-c", "import sys, zlib; sys.stdout.buffer.write(zlib.compress(bytes(\(count)), 9))"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return [UInt8](result.stdout)
    }

    /// A PDF of the given objects with a correct cross-reference table.
    static func pdf(_ objects: [Int: String]) -> [UInt8] {
        var out = Array("%PDF-1.4\n%\u{e2}\u{e3}\u{cf}\u{d3}\n".unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
        var offsets: [Int: Int] = [:]
        for number in objects.keys.sorted() {
            offsets[number] = out.count
            out += Array("\(number) 0 obj\n\(objects[number]!)\nendobj\n".utf8)
        }
        let size = (objects.keys.max() ?? 0) + 1
        let xref = out.count
        var table = "xref\n0 \(size)\n0000000000 65535 f \n"
        for number in 1..<size {
            table += offsets[number].map { String(repeating: "0", count: 10 - String($0).count) + "\($0) 00000 n \n" } ?? "0000000000 65535 f \n"
        }
        table += "trailer\n<< /Size \(size) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return out + Array(table.utf8)
    }

    static let pageObjects: [Int: String] = {
        let content = "BT /F1 24 Tf 72 700 Td (Hello) Tj ET"
        return [
            4: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 6 0 R >> >> >>",
            5: "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream",
            6: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    }()

    static func validPDF() -> [UInt8] {
        pdf(pageObjects.merging([1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [4 0 R] /Count 1 >>"]) { a, _ in a })
    }

    static let cases: [Case] = [
        // Archive
        Case(name: "spine of 20,000 items", expected: .rendered(warning: nil)) { url, _ in
            var book = TestBook()
            var manifest = ""
            var spine = ""
            for index in 0..<20_000 {
                book.extraEntries.append(
                    .init(name: "OEBPS/c\(index).xhtml", data: Array(#"<html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body><p>\#(index)</p></body></html>"#.utf8)))
                manifest += #"<item id="c\#(index)" href="c\#(index).xhtml" media-type="application/xhtml+xml"/>"#
                spine += #"<itemref idref="c\#(index)"/>"#
            }
            book.extraManifest = manifest
            book.extraSpine = spine
            try book.write(to: url)
        },
        // XML
        Case(
            name: "external entity naming a local file (chapter)", expected: .rendered(warning: "external entity"),
            make: { url, secret in
                try book(body: "<p>Before &xxe; after.</p>", doctype: "<!DOCTYPE html [<!ENTITY xxe SYSTEM \"file://\(secret.path)\">]>")(url, secret)
            }),
        Case(
            name: "external entity naming a local file (nav)", expected: .rendered(warning: "external entity"),
            make: { url, secret in
                var book = TestBook()
                book.nav = book.nav.replacingOccurrences(
                    of: "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
                    with: "<?xml version=\"1.0\" encoding=\"utf-8\"?><!DOCTYPE html [<!ENTITY xxe SYSTEM \"file://\(secret.path)\">]>"
                ).replacingOccurrences(of: ">One</a>", with: ">One &xxe;</a>")
                try book.write(to: url)
            }),
        Case(
            name: "billion laughs in a chapter", expected: .rendered(warning: "xml-entities"),
            make: { url, secret in
                var entities = #"<!ENTITY lol "lol">"#
                for level in 1...9 {
                    entities += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level == 1 ? "" : String(level - 1));", count: 10) + "\">"
                }
                try book(body: "<p>&lol9;</p>", doctype: "<!DOCTYPE html [\(entities)]>")(url, secret)
            }),
        Case(name: "200,000-deep element nesting", expected: .rendered(warning: "nested deeper than"), make: book(body: nested("<div>", "</div>", 200_000))),
        Case(name: "250 nested divs (within libxml2's depth)", expected: .rendered(warning: "nested deeper than"), make: book(body: nested("<div>", "</div>", 250))),
        Case(name: "250 nested spans", expected: .rendered(warning: "nested deeper than"), make: book(body: "<p>" + nested("<span>", "</span>", 250) + "</p>")),
        Case(
            name: "30 nested floats", expected: .rendered(warning: nil),
            make: book(body: nested("<div style='float:left;width:99%'>", "</div>", 30))),
        Case(
            name: "an element with 100,000 attributes", expected: .rendered(warning: "more than 1000 attributes"),
            make: book(body: "<p " + (0..<100_000).map { "a\($0)=\"x\"" }.joined(separator: " ") + ">text</p>")),
        Case(name: "invalid UTF-8 and NUL bytes", expected: .rendered(warning: "not-well-formed")) { url, _ in
            var book = TestBook()
            book.omit = ["OEBPS/chapter1.xhtml"]
            let chapter = Array(#"<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body><p>Bad "#.utf8)
                + [0xC3, 0x28, 0xFF, 0x00, 0x41, 0x00] + Array(" bytes.</p><p>After.</p></body></html>".utf8)
            book.extraEntries = [.init(name: "OEBPS/chapter1.xhtml", data: chapter)]
            try book.write(to: url)
        },
        Case(
            name: "tag soup", expected: .rendered(warning: "HTML parser"),
            make: book(body: "<p>Unclosed <b>bold <i>both</b> italic?</i><p>Next <br> line <div><span>open<p>para</div> & stray < less")),
        // CSS
        Case(
            name: "5,000 nested @media", expected: .rendered(warning: "nested"),
            make: book(body: "<p>Styled.</p>", css: nested("@media screen {", "}", 5_000, "p { color: red }"))),
        Case(
            name: "100,000 declarations", expected: .rendered(warning: nil),
            make: book(body: "<p>Styled.</p>", css: "p { " + String(repeating: "color: red; margin: 1px; ", count: 50_000) + "}")),
        Case(
            name: "a selector of 10,000 compounds", expected: .rendered(warning: nil),
            make: book(body: "<p>Styled.</p>", css: Array(repeating: "div", count: 10_000).joined(separator: " > ") + " > p { color: red }\np { color: blue }")),
        Case(name: "an @import loop", expected: .rendered(warning: "cycle")) { url, _ in
            var book = TestBook()
            book.chapter = book.chapter.replacingOccurrences(of: "<head>", with: #"<head><link rel="stylesheet" href="a.css"/>"#)
            book.extraEntries = [
                .init(name: "OEBPS/a.css", data: Array("@import 'b.css'; @import 'a.css'; p { color: red }".utf8)),
                .init(name: "OEBPS/b.css", data: Array("@import 'a.css'; p { margin: 0 }".utf8)),
            ]
            book.extraManifest = #"<item id="a" href="a.css" media-type="text/css"/><item id="b" href="b.css" media-type="text/css"/>"#
            try book.write(to: url)
        },
        Case(name: "20 stylesheets importing each other", expected: .rendered(warning: "@imports")) { url, _ in
            var book = TestBook()
            let imports = (0..<20).map { "@import 's\($0).css';" }.joined(separator: "\n")
            book.chapter = book.chapter.replacingOccurrences(of: "<head>", with: #"<head><link rel="stylesheet" href="s0.css"/>"#)
            book.extraEntries = (0..<20).map { .init(name: "OEBPS/s\($0).css", data: Array((imports + "\np { margin: \($0)px }").utf8)) }
            book.extraManifest = (0..<20).map { #"<item id="s\#($0)" href="s\#($0).css" media-type="text/css"/>"# }.joined()
            try book.write(to: url)
        },
        // Navigation and text
        Case(name: "a TOC 10,000 levels deep with a link to itself", expected: .rendered(warning: nil)) { url, _ in
            var book = TestBook()
            book.nav = """
                <?xml version="1.0" encoding="utf-8"?>
                <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Nav</title></head>
                <body><nav epub:type="toc"><ol>\(nested("<li><a href=\"chapter1.xhtml\">One</a><ol>", "</ol></li>", 10_000, "<li><a href=\"nav.xhtml\">Nav</a></li>"))</ol></nav></body></html>
                """
            try book.write(to: url)
        },
        Case(
            name: "a million combining marks on one letter", expected: .rendered(warning: "combining marks"),
            make: book(body: "<p>a" + String(repeating: "\u{301}", count: 1_000_000) + " end.</p>")),
        Case(name: "a chapter that is one 5 MB word", expected: .rendered(warning: nil), make: book(body: "<p>" + String(repeating: "a", count: 5 << 20) + "</p>")),
        // Images
        Case(name: "an image header claiming 60000×60000", expected: .rendered(warning: "limit exceeded")) { url, _ in
            var book = TestBook()
            book.chapter = book.chapter.replacingOccurrences(of: "<p>Hello.</p>", with: #"<p>Hello.</p><img src="big.png" alt="big"/>"#)
            book.extraEntries = [.init(name: "OEBPS/big.png", data: png(width: 60_000, height: 60_000, idat: [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]))]
            book.extraManifest = #"<item id="big" href="big.png" media-type="image/png"/>"#
            try book.write(to: url)
        },
        Case(name: "a PNG whose IDAT inflates far past its header", expected: .rendered(warning: nil)) { url, _ in
            var book = TestBook()
            book.chapter = book.chapter.replacingOccurrences(of: "<p>Hello.</p>", with: #"<p>Hello.</p><img src="bomb.png" alt="bomb"/>"#)
            book.extraEntries = [.init(name: "OEBPS/bomb.png", data: png(width: 10, height: 10, idat: try zlibZeros(50 << 20)), store: true)]
            book.extraManifest = #"<item id="bomb" href="bomb.png" media-type="image/png"/>"#
            try book.write(to: url)
        },
        // PDF
        Case(name: "an encrypted PDF", expected: .refused(69, "password"), file: "book.pdf") { url, _ in
            let plain = url.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("plain.pdf")
            try Data(validPDF()).write(to: plain)
            let result = try TestSupport.run(
                URL(fileURLWithPath: "/usr/bin/qpdf"), ["--encrypt", "user", "owner", "256", "--", plain.path, url.path])
            XCTAssertEqual(result.status, 0, result.stderr)
            try FileManager.default.removeItem(at: plain)
        },
        Case(name: "a truncated PDF", expected: .refused(65, "invalid PDF"), file: "book.pdf") { url, _ in
            let bytes = validPDF()
            try Data(bytes.prefix(bytes.count / 2)).write(to: url)
        },
        Case(name: "a garbage PDF", expected: .refused(65, "invalid PDF"), file: "book.pdf") { url, _ in
            var generator = SplitMix64(seed: 42)
            try Data(Array("%PDF-1.7\n".utf8) + (0..<200_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).write(to: url)
        },
        Case(name: "a PDF whose page tree loops to itself", expected: .refused(65, "invalid PDF"), file: "book.pdf") { url, _ in
            try Data(pdf(pageObjects.merging([1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [4 0 R 2 0 R] /Count 2 >>"]) { a, _ in a }))
                .write(to: url)
        },
        Case(name: "a PDF whose page tree loops to its parent", expected: .refused(65, "invalid PDF"), file: "book.pdf") { url, _ in
            try Data(
                pdf(
                    pageObjects.merging([
                        1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [3 0 R] /Count 2 >>",
                        3: "<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 2 0 R] /Count 2 >>",
                    ]) { a, _ in a })
            ).write(to: url)
        },
        Case(name: "a PDF whose page count is absurd", expected: .refused(65, "no pages"), file: "book.pdf") { url, _ in
            try Data(
                pdf(pageObjects.merging([1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [" + String(repeating: "4 0 R ", count: 1000) + "] /Count 2147483647 >>"]) { a, _ in a })
            ).write(to: url)
        },
    ]

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
        var peakKB: Int
    }

    /// `quire ARGUMENTS` under GNU time (peak RSS) and timeout (the hang guard), in `directory`.
    static func run(_ arguments: [String], in directory: URL) throws -> Run {
        let (result, peak) = try TestSupport.quireMeasuringPeak(arguments, in: directory, timeLimitSeconds: hangGuardSeconds)
        return Run(status: result.status, stdout: result.stdoutText, stderr: result.stderr, peakKB: peak)
    }

    func testHostileBooksAreBoundedAndClean() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret.txt")
        try Data((Self.secretMarker + "\n").utf8).write(to: secret)
        for hostile in Self.cases {
            let caseDirectory = directory.appendingPathComponent("case")
            try? FileManager.default.removeItem(at: caseDirectory)
            let input = caseDirectory.appendingPathComponent("input")
            let work = caseDirectory.appendingPathComponent("work")
            try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let book = input.appendingPathComponent(hostile.file)
            try hostile.make(book, secret)
            let inputBefore = try FileManager.default.contentsOfDirectory(atPath: input.path).sorted()
            let out = work.appendingPathComponent("out")

            let info = try Self.run(["info", "--json", book.path], in: work)
            let render = try Self.run(["render", book.path, "--out", out.path, "--pages", "1-2", "--quiet"], in: work)
            for (command, run) in [("info", info), ("render", render)] {
                XCTAssertNotEqual(run.status, 137, "\(hostile.name): \(command) was killed by the \(Self.hangGuardSeconds) s hang guard")
                XCTAssertGreaterThan(run.peakKB, 0, "\(hostile.name): \(command)'s peak memory was measured")
                XCTAssertLessThan(run.peakKB, Self.memoryBoundKB, "\(hostile.name): \(command) peaked at \(run.peakKB) KB")
                XCTAssertFalse(run.stdout.contains(Self.secretMarker) || run.stderr.contains(Self.secretMarker), "\(hostile.name): \(command) showed the secret")
            }
            switch hostile.expected {
            case .refused(let status, let phrase):
                for (command, run) in [("info", info), ("render", render)] {
                    XCTAssertEqual(run.status, status, "\(hostile.name): \(command): \(run.stderr)")
                    XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "\(hostile.name): \(command): one line, got \(run.stderr)")
                    XCTAssertTrue(run.stderr.hasPrefix("quire: error: "), "\(hostile.name): \(run.stderr)")
                    XCTAssertTrue(run.stderr.localizedCaseInsensitiveContains(phrase), "\(hostile.name): '\(phrase)' in \(run.stderr)")
                }
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work.path), [], "\(hostile.name): nothing written")
            case .rendered(let warning):
                XCTAssertEqual(info.status, 0, "\(hostile.name): info: \(info.stderr)")
                XCTAssertEqual(render.status, 0, "\(hostile.name): render: \(render.stderr)")
                XCTAssertEqual(render.stderr, "", "\(hostile.name): a quiet render prints nothing")
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work.path), ["out"], "\(hostile.name): only --out is written")
                let mapBytes = try Data(contentsOf: out.appendingPathComponent("positions.json"))
                let map = try XCTUnwrap(JSONSerialization.jsonObject(with: mapBytes) as? [String: Any], hostile.name)
                XCTAssertGreaterThan(map["pageCount"] as? Int ?? 0, 0, hostile.name)
                if let warning {
                    let messages = (map["warnings"] as? [[String: Any]] ?? []).map { "\($0["code"] ?? ""): \($0["message"] ?? "")" }
                    XCTAssertTrue(messages.contains { $0.contains(warning) }, "\(hostile.name): a warning with '\(warning)' in \(messages.prefix(5))")
                }
                for (name, bytes) in try XCTUnwrap(OutputTests.snapshot(out)) {
                    XCTAssertNil(bytes.range(of: Data(Self.secretMarker.utf8)), "\(hostile.name): \(name) holds the secret")
                }
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: input.path).sorted(), inputBefore, "\(hostile.name): the input's directory")
            print("hostile: \(hostile.name): info \(info.status), render \(render.status), peak \(max(info.peakKB, render.peakKB) / 1024) MB")
        }
    }
}
