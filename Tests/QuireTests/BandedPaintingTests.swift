import Foundation
import QuireContainer
import QuireLayout
import QuirePaint
import QuirePreparation
import XCTest

/// PNGs are painted and packed a band of rows at a time (`Painter.bandRows`); the pixels and
/// bytes must be those of the whole page painted and packed at once.
final class BandedPaintingTests: XCTestCase {
    /// Rows 0–29 grey, a coloured pixel in row 31: packed in bands of any size, including one
    /// that starts grey and meets the colour, the bytes are the whole image's.
    func testRowsAddedInBandsMakeTheBytesOfTheWholeImage() throws {
        let (width, height) = (37, 50)
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let value = UInt32((x * 7 + y * 3) & 0xFF)
                pixels[y * width + x] = value << 16 | value << 8 | value
            }
        }
        let greyOnly = pixels
        pixels[31 * width + 5] = 0x00C0_4020
        for (image, expectGrey) in [(greyOnly, true), (pixels, false)] {
            try image.withUnsafeBytes { raw in
                let data = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for (gray, dither16) in [(false, false), (true, false), (true, true)] {
                    let whole = try PNGWriter.encode(xrgb: data, width: width, height: height, stride: width * 4, gray: gray, dither16: dither16, level: 2)
                    XCTAssertEqual(whole[25], gray || expectGrey ? 0 : 2, "colour type")
                    for bandHeights in [[7], [1], [30, 1, 19], [31, 19], [50]] {
                        var rows = PNGRows(width: width, height: height, gray: gray, dither16: dither16, level: 2)
                        var (row, next) = (0, 0)
                        while row < height {
                            let count = min(bandHeights[next % bandHeights.count], height - row)
                            rows.add(xrgb: data + row * width * 4, stride: width * 4, count: count)
                            row += count
                            next += 1
                        }
                        let banded = try rows.encoded()
                        XCTAssertEqual(banded, whole, "bands \(bandHeights), gray \(gray), dither \(dither16)")
                    }
                }
            }
        }
    }

    /// Too few rows is an error, never a PNG with a black or stale bottom.
    func testAPNGMissingRowsIsRefused() throws {
        var rows = PNGRows(width: 4, height: 4, gray: false, dither16: false, level: 2)
        add([UInt32](repeating: 0x00FF_FFFF, count: 4 * 4), rows: 3, to: &rows)
        assertRefused(rows, saying: "3 of 4 rows")
    }

    /// Rows live in the thread's scratch: a PNG begun before another on the same thread is
    /// refused when written, never made of the other's rows; the later one is whole.
    func testAPNGWhoseScratchWasTakenIsRefused() throws {
        let white = [UInt32](repeating: 0x00FF_FFFF, count: 4 * 4)
        let black = [UInt32](repeating: 0, count: 4 * 4)
        var first = PNGRows(width: 4, height: 4, gray: false, dither16: false, level: 2)
        var second = PNGRows(width: 4, height: 4, gray: false, dither16: false, level: 2)
        add(white, rows: 4, to: &first)
        add(black, rows: 4, to: &second)
        let made = try second.encoded()
        let alone = try black.withUnsafeBytes {
            try PNGWriter.encode(xrgb: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), width: 4, height: 4, stride: 16, gray: false, dither16: false, level: 2)
        }
        XCTAssertEqual(made, alone)
        assertRefused(first, saying: "another PNG was begun")
    }

    /// Adds the first `rows` rows of 4-pixel-wide `pixels`.
    private func add(_ pixels: [UInt32], rows count: Int, to rows: inout PNGRows) {
        pixels.withUnsafeBytes { rows.add(xrgb: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), stride: 16, count: count) }
    }

    /// Encoding `rows` fails with an error that says `reason`.
    private func assertRefused(_ rows: consuming PNGRows, saying reason: String, line: UInt = #line) {
        do {
            _ = try rows.encoded()
            XCTFail("a PNG was made that should have been refused (\(reason))", line: line)
        } catch {
            XCTAssert("\(error)".contains(reason), "\(error)", line: line)
        }
    }

    /// Every page of the sample book: the banded PNG's pixels are those of the page painted whole.
    func testSampleBookPagesMatchThePagePaintedWhole() throws {
        let (_, result) = try LayoutTests.layout(try LayoutTests.sampleBook().path)
        try assertBandedMatchesWhole(result.chapters.flatMap(\.pages), painter: Painter())
    }

    /// Moby-Dick at the bench geometry and at kobo-clara: text across band edges at several sizes,
    /// the cover and title page (images, painted whole). 60 pages of each.
    func testMobyDickPagesMatchThePagePaintedWhole() throws {
        let book = try TestSupport.corpusFile("standardebooks/herman-melville_moby-dick.epub")
        let container = try EPUBContainer.open(path: book.path)
        var bench = LayoutSettings(profile: PageProfile(name: "bench", width: 800, height: 1067, dpi: 96))
        bench.fontSizePt = 12
        bench.marginPt = 36
        for settings in [bench, LayoutSettings(profile: PageProfile.named("kobo-clara")!)] {
            let result = try BookLayout(container: container, settings: settings).layout(jobs: 1)
            try assertBandedMatchesWhole(Array(result.chapters.flatMap(\.pages).prefix(60)), painter: Painter(book: container))
        }
    }

    private func assertBandedMatchesWhole(_ pages: [Page], painter: Painter, file: StaticString = #filePath, line: UInt = #line) throws {
        let directory = try TestSupport.temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("page.png").path
        XCTAssertGreaterThan(pages.filter { $0.height > Painter.bandRows }.count, 0, file: file, line: line)
        for (index, page) in pages.enumerated() {
            let whole = painter.bitmap(page, settings: PaintSettings())
            try painter.writePNG(page, settings: PaintSettings(), to: path)
            let banded = try PNGReader.read(path, asRGB: true)
            XCTAssertEqual(banded.width, whole.width, file: file, line: line)
            XCTAssertEqual(banded.height, whole.height, file: file, line: line)
            XCTAssert(banded.pixels == whole.bytes, "page \(index + 1): the banded PNG differs from the page painted whole", file: file, line: line)
        }
    }
}
