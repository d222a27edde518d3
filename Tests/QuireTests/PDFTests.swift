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

/// Writes small PDFs by hand (with a correct xref table) so the PDF tests need no corpus.
enum TinyPDF {
    struct Page {
        var width: Double
        var height: Double
        var content: String
        var rotate = 0
    }

    static func data(_ pages: [Page]) -> Data {
        var objects: [String] = []
        let kids = pages.indices.map { "\(3 + 2 * $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages.count) >>")
        for (index, page) in pages.enumerated() {
            objects.append(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(page.width) \(page.height)] /Rotate \(page.rotate) /Contents \(4 + 2 * index) 0 R /Resources << >> >>")
            objects.append("<< /Length \(page.content.utf8.count) >>\nstream\n\(page.content)\nendstream")
        }
        var out = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(out.utf8.count)
            out += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = out.utf8.count
        out += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { out += String(format: "%010d 00000 n \n", offset) }
        out += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Data(out.utf8)
    }

    /// Three pages: portrait, a landscape spread, and a portrait page with /Rotate 90.
    static let sample: [Page] = [
        Page(width: 200, height: 300, content: "0 0 0 rg 40 60 120 180 re f"),
        Page(width: 400, height: 250, content: "1 0 0 rg 50 50 130 150 re f 0 0 1 rg 220 50 130 150 re f"),
        Page(width: 200, height: 300, content: "0 0.5 0 rg 10 10 50 280 re f", rotate: 90),
    ]
}

final class PDFTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = try TestSupport.temporaryDirectory(name)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func writeSample() throws -> URL {
        let url = directory.appendingPathComponent("sample.pdf")
        try TinyPDF.data(TinyPDF.sample).write(to: url)
        return url
    }

    func map(_ out: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: out.appendingPathComponent("positions.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func assertOneErrorLine(_ result: TestSupport.Result, status: Int32, contains text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, status, result.stderr, file: file, line: line)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, result.stderr, file: file, line: line)
        XCTAssertTrue(lines.first?.hasPrefix("quire: error: ") ?? false, result.stderr, file: file, line: line)
        XCTAssertTrue(result.stderr.contains(text), result.stderr, file: file, line: line)
    }

    func testDocumentInfoAndRotation() throws {
        let info = try PDFDocument(path: try writeSample().path).info()
        XCTAssertEqual(info.pageCount, 3)
        XCTAssertEqual(info.pages.map(\.width), [200, 400, 300], "/Rotate 90 turns the third page")
        XCTAssertEqual(info.pages.map(\.height), [300, 250, 200])
        XCTAssertFalse(info.hasLabels)
        XCTAssertEqual(info.outlineCount, 0)
    }

    func testRenderWritesPagesAndMap() throws {
        let pdf = try writeSample()
        let out = directory.appendingPathComponent("out")
        let result = try TestSupport.quire("render", pdf.path, "--out", out.path, "--dpi", "72", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        // A page with no colour in it (a black box on white) is stored as exact 8-bit grey.
        XCTAssertEqual(try PNGReader.read(out.appendingPathComponent("pages/0001.png").path).channels, 1)
        let first = try PNGReader.read(out.appendingPathComponent("pages/0001.png").path, asRGB: true)
        XCTAssertEqual([first.width, first.height, first.channels], [200, 300, 3])
        // The black box: PDF y 60…240 from the bottom is rows 60…240 from the top; white outside.
        XCTAssertEqual(Array(first.pixels[(150 * 200 + 100) * 3..<(150 * 200 + 100) * 3 + 3]), [0, 0, 0])
        XCTAssertEqual(Array(first.pixels[(10 * 200 + 10) * 3..<(10 * 200 + 10) * 3 + 3]), [255, 255, 255])
        let third = try PNGReader.read(out.appendingPathComponent("pages/0003.png").path)
        XCTAssertEqual([third.width, third.height], [300, 200], "rendered upright with /Rotate applied")
        let map = try map(out)
        XCTAssertEqual(map["format"] as? String, "quire-position-map")
        XCTAssertEqual(map["pageCount"] as? Int, 3)
        let book = try XCTUnwrap(map["book"] as? [String: Any])
        XCTAssertEqual(book["mediaType"] as? String, "application/pdf")
        XCTAssertEqual(book["layout"] as? String, "pre-paginated")
        XCTAssertTrue(book["identifier"] is NSNull)
        XCTAssertEqual((book["sha256"] as? String)?.count, 64)
        let pages = try XCTUnwrap(map["pages"] as? [[String: Any]])
        XCTAssertEqual(pages.map { $0["image"] as? String }, ["pages/0001.png", "pages/0002.png", "pages/0003.png"])
        let locator = try XCTUnwrap(pages[1]["locator"] as? [String: Any])
        XCTAssertEqual(locator["href"] as? String, "#page=2")
        XCTAssertEqual(locator["type"] as? String, "application/pdf")
        XCTAssertEqual((locator["locations"] as? [String: Any])?["position"] as? Int, 2)
    }

    func testSplitCropAndRtlThroughTheCLI() throws {
        let pdf = try writeSample()
        let out = directory.appendingPathComponent("out")
        let result = try TestSupport.quire("render", pdf.path, "--out", out.path, "--dpi", "72", "--crop", "--split", "rtl", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let map = try map(out)
        let pages = try XCTUnwrap(map["pages"] as? [[String: Any]])
        // Page 3 is portrait turned by /Rotate 90: upright it is landscape, so it splits too.
        XCTAssertEqual(pages.map { $0["sourcePage"] as? Int }, [1, 2, 2, 3, 3])
        XCTAssertEqual(pages.map { $0["half"] as? String }, ["whole", "first", "second", "first", "second"])
        // Spread content runs x 50…350, y 50…200 (PDF) → rows 50…200 from the top; halves of 150 px.
        let first = try PNGReader.read(out.appendingPathComponent("pages/0002.png").path, asRGB: true)
        let second = try PNGReader.read(out.appendingPathComponent("pages/0003.png").path, asRGB: true)
        XCTAssertEqual([first.width, first.height], [150, 150])
        XCTAssertEqual([second.width, second.height], [150, 150])
        // rtl: the first output is the right (blue) half.
        XCTAssertEqual(Array(first.pixels[(75 * 150 + 100) * 3..<(75 * 150 + 100) * 3 + 3]), [0, 0, 255])
        XCTAssertEqual(Array(second.pixels[(75 * 150 + 40) * 3..<(75 * 150 + 40) * 3 + 3]), [255, 0, 0])
        // The cropped portrait page is its black box.
        let whole = try PNGReader.read(out.appendingPathComponent("pages/0001.png").path)
        XCTAssertEqual([whole.width, whole.height], [120, 180])
    }

    func testGrayDitherAndProfileFit() throws {
        let pdf = try writeSample()
        let out = directory.appendingPathComponent("out")
        let result = try TestSupport.quire("render", pdf.path, "--out", out.path, "--size", "100x100", "--dither", "--pages", "2", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        let image = try PNGReader.read(out.appendingPathComponent("pages/0002.png").path)
        XCTAssertEqual([image.width, image.height, image.channels], [100, 63, 1])
        XCTAssertTrue(image.pixels.allSatisfy { $0 % 17 == 0 }, "16 grey levels")
        let pages = try XCTUnwrap(try map(out)["pages"] as? [[String: Any]])
        XCTAssertEqual(pages.map { $0["image"] is NSNull }, [true, false, true])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("pages/0001.png").path))
    }

    func testJobsDoNotChangeBytes() throws {
        var pdf = try writeSample()
        if let corpus = TestSupport.corpus { pdf = corpus.appendingPathComponent("pdfjs-test-pdfs/tracemonkey.pdf") }
        var outputs: [[Data]] = []
        for jobs in ["1", "2"] {
            let out = directory.appendingPathComponent("jobs\(jobs)")
            let result = try TestSupport.quire("render", pdf.path, "--out", out.path, "--dpi", "60", "--jobs", jobs, "--quiet")
            XCTAssertEqual(result.status, 0, result.stderr)
            let names = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("pages").path).sorted()
            outputs.append(try names.map { try Data(contentsOf: out.appendingPathComponent("pages/" + $0)) } + [Data(contentsOf: out.appendingPathComponent("positions.json"))])
        }
        XCTAssertGreaterThan(outputs[0].count, 2)
        XCTAssertEqual(outputs[0], outputs[1])
    }

    func testEncryptedPDFNeedsItsPassword() throws {
        let plain = try writeSample()
        let encrypted = directory.appendingPathComponent("encrypted.pdf")
        let qpdf = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/qpdf"), ["--encrypt", "user", "owner", "256", "--", plain.path, encrypted.path])
        XCTAssertEqual(qpdf.status, 0, qpdf.stderr)
        let out = directory.appendingPathComponent("out")
        assertOneErrorLine(try TestSupport.quire("render", encrypted.path, "--out", out.path, "--quiet"), status: 69, contains: "--password")
        assertOneErrorLine(
            try TestSupport.quire("render", encrypted.path, "--out", out.path, "--password", "wrong", "--quiet"), status: 69,
            contains: "password")
        assertOneErrorLine(try TestSupport.quire("info", encrypted.path), status: 69, contains: "encrypted")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "nothing is written on failure")
        let result = try TestSupport.quire("render", encrypted.path, "--out", out.path, "--password", "user", "--dpi", "72", "--quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try map(out)["pageCount"] as? Int, 3)
    }

    func testDamagedInputGivesOneClearLine() throws {
        let full = TinyPDF.data(TinyPDF.sample)
        let truncated = directory.appendingPathComponent("truncated.pdf")
        try full.prefix(60).write(to: truncated)
        let out = directory.appendingPathComponent("out").path
        assertOneErrorLine(try TestSupport.quire("render", truncated.path, "--out", out), status: 65, contains: "truncated")
        assertOneErrorLine(try TestSupport.quire("info", truncated.path), status: 65, contains: "invalid PDF")
        let garbage = directory.appendingPathComponent("garbage.pdf")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: garbage)
        assertOneErrorLine(try TestSupport.quire("render", garbage.path, "--out", out), status: 65, contains: "garbage.pdf")
        let header = directory.appendingPathComponent("header.pdf")
        try (Data("%PDF-1.7\n".utf8) + Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })).write(to: header)
        assertOneErrorLine(try TestSupport.quire("render", header.path, "--out", out), status: 65, contains: "invalid PDF")
    }

    func testInfoOnAPDF() throws {
        let result = try TestSupport.quire("info", "--json", try writeSample().path)
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        XCTAssertEqual(json["mediaType"] as? String, "application/pdf")
        XCTAssertEqual(json["pageCount"] as? Int, 3)
        XCTAssertEqual((json["pageSizes"] as? [Any])?.count, 3)
        let text = try TestSupport.quire("info", try writeSample().path)
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdoutText.contains("PDF, 3 pages"), text.stdoutText)
    }

    /// The row-by-row XRGB writer (libpng drops the padding byte and swaps to RGB) writes the
    /// pixels the whole-image conversions would: checked on a gradient with odd sizes and a padded stride.
    func testXRGBWriterStoresColourlessPagesAsExactGrey() throws {
        let width = 23, height = 11, stride = 24 * 4
        var words = [UInt32](repeating: 0, count: stride / 4 * height)
        for y in 0..<height { for x in 0..<width { let v = UInt32((x * 11 + y * 5) & 0xFF); words[y * stride / 4 + x] = v << 16 | v << 8 | v } }
        let path = directory.appendingPathComponent("grey.png").path
        func write() throws {
            try words.withUnsafeBytes { raw in
                try PNGWriter.write(
                    xrgb: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), width: width, height: height, stride: stride, gray: false,
                    dither16: false, level: 1, to: path)
            }
        }
        try write()
        XCTAssertEqual(try PNGReader.read(path).channels, 1)
        let rgb = try PNGReader.read(path, asRGB: true)
        for y in 0..<height {
            for x in 0..<width {
                let v = UInt8((x * 11 + y * 5) & 0xFF)
                XCTAssertEqual(Array(rgb.pixels[(y * width + x) * 3..<(y * width + x) * 3 + 3]), [v, v, v])
            }
        }
        // One coloured pixel keeps the page in RGB.
        words[5 * stride / 4 + 7] = 0x00FF_0000
        try write()
        let colour = try PNGReader.read(path)
        XCTAssertEqual(colour.channels, 3)
        XCTAssertEqual(Array(colour.pixels[(5 * width + 7) * 3..<(5 * width + 7) * 3 + 3]), [255, 0, 0])
    }

    func testXRGBWriterKeepsEveryPixel() throws {
        let width = 37, height = 19, stride = 40 * 4
        var words = [UInt32](repeating: 0xDEADBEEF, count: stride / 4 * height)
        for y in 0..<height { for x in 0..<width { words[y * stride / 4 + x] = 0xAB00_0000 | UInt32(x * 7) << 16 | UInt32(y * 13) << 8 | UInt32((x * y) & 0xFF) } }
        for (gray, dither) in [(false, false), (true, false), (true, true)] {
            let path = directory.appendingPathComponent("xrgb-\(gray)-\(dither).png").path
            try words.withUnsafeBytes { raw in
                try PNGWriter.write(
                    xrgb: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), width: width, height: height, stride: stride, gray: gray,
                    dither16: dither, level: 1, to: path)
            }
            let image = try PNGReader.read(path)
            XCTAssertEqual([image.width, image.height, image.channels], [width, height, gray ? 1 : 3])
            for y in 0..<height {
                for x in 0..<width {
                    let (r, g, b) = (x * 7, y * 13, (x * y) & 0xFF)
                    if !gray {
                        XCTAssertEqual(Array(image.pixels[(y * width + x) * 3..<(y * width + x) * 3 + 3]), [UInt8(r), UInt8(g), UInt8(b)])
                    } else if !dither {
                        XCTAssertEqual(Int(image.pixels[y * width + x]), (r * 77 + g * 150 + b * 29 + 128) >> 8)
                    } else {
                        XCTAssertEqual(image.pixels[y * width + x] % 17, 0)
                        XCTAssertLessThanOrEqual(abs(Int(image.pixels[y * width + x]) - (r * 77 + g * 150 + b * 29 + 128) >> 8), 17)
                    }
                }
            }
        }
    }

    // MARK: - Corpus

    func corpusPDFs() throws -> [URL] {
        let corpus = try TestSupport.requireCorpus()
        let enumerator = FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)!
        return enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "pdf" }.sorted { $0.path < $1.path }
    }

    /// Every corpus PDF renders (pages 1–2), its page count matches pdfinfo, and page 1 agrees with
    /// pdftocairo's (the same poppler and cairo): mean absolute difference per channel under 2 and
    /// 99% of pixels within 8 on every channel. pdftocairo gets -cropbox because readers show the crop box.
    func testCorpusRendersAndMatchesPdftocairo() throws {
        let pdfs = try corpusPDFs()
        XCTAssertGreaterThan(pdfs.count, 0)
        for pdf in pdfs {
            let name = pdf.lastPathComponent
            let out = directory.appendingPathComponent(pdf.deletingPathExtension().lastPathComponent)
            let result = try TestSupport.quire("render", pdf.path, "--out", out.path, "--dpi", "72", "--pages", "1-2", "--quiet")
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            guard result.status == 0 else { continue }
            let info = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/pdfinfo"), [pdf.path])
            let pages = info.stdoutText.split(separator: "\n").first { $0.hasPrefix("Pages:") }.flatMap { Int($0.split(separator: " ").last ?? "") }
            XCTAssertEqual(try map(out)["pageCount"] as? Int, pages, name)
            let reference = out.appendingPathComponent("reference")
            let cairo = try TestSupport.run(
                URL(fileURLWithPath: "/usr/bin/pdftocairo"), ["-png", "-cropbox", "-r", "72", "-f", "1", "-l", "1", "-singlefile", pdf.path, reference.path])
            XCTAssertEqual(cairo.status, 0, name)
            let ours = try PNGReader.read(out.appendingPathComponent("pages/0001.png").path, asRGB: true)
            let theirs = try PNGReader.read(reference.path + ".png", asRGB: true)
            XCTAssertEqual([ours.width, ours.height], [theirs.width, theirs.height], name)
            guard ours.width == theirs.width, ours.height == theirs.height, ours.channels == 3, theirs.channels == 3 else { continue }
            var total = 0, within = 0
            for pixel in 0..<(ours.width * ours.height) {
                var worst = 0
                for c in 0..<3 {
                    let difference = abs(Int(ours.pixels[pixel * 3 + c]) - Int(theirs.pixels[pixel * 3 + c]))
                    total += difference
                    worst = max(worst, difference)
                }
                if worst <= 8 { within += 1 }
            }
            let pixels = Double(ours.width * ours.height)
            XCTAssertLessThan(Double(total) / (pixels * 3), 2, name)
            XCTAssertGreaterThanOrEqual(Double(within) / pixels, 0.99, name)
        }
    }

    func testCorpusInfoOutlineAndSizes() throws {
        let corpus = try TestSupport.requireCorpus()
        let info = try PDFDocument(path: corpus.appendingPathComponent("pdfjs-test-pdfs/freeculture.pdf").path).info()
        XCTAssertEqual(info.pageCount, 352)
        XCTAssertEqual(info.metadata.title, "Free Culture")
        XCTAssertEqual(info.metadata.author, "Lawrence Lessig")
        XCTAssertGreaterThan(info.outlineCount, 20)
        XCTAssertEqual(info.outline.first?.title, "COVER")
        XCTAssertEqual(info.outline.first?.page, 1)
        XCTAssertGreaterThan(PDFInfoReport.sizes(info).count, 1, "mixed page sizes")
        let rotated = try PDFDocument(path: corpus.appendingPathComponent("pdfjs-test-pdfs/hello_world_rotated.pdf").path).info()
        XCTAssertEqual(rotated.pages.first?.width, 792)
        XCTAssertEqual(rotated.pages.first?.height, 612)
    }
}
