import CCairo
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

private typealias F = ImageFixtures

/// Four quadrants: red, green / blue, white.
private func quadrant(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> (UInt8, UInt8, UInt8) {
    switch (x < w / 2, y < h / 2) {
    case (true, true): return (255, 0, 0)
    case (false, true): return (0, 255, 0)
    case (true, false): return (0, 0, 255)
    case (false, false): return (255, 255, 255)
    }
}

private func assertQuadrants(_ image: DecodedImage, tolerance: Int, file: StaticString = #filePath, line: UInt = #line) {
    let w = image.width, h = image.height
    let spots = [(w / 4, h / 4, (255, 0, 0)), (3 * w / 4, h / 4, (0, 255, 0)), (w / 4, 3 * h / 4, (0, 0, 255)), (3 * w / 4, 3 * h / 4, (255, 255, 255))]
    for (x, y, color) in spots { F.assertColor(image, x, y, color, tolerance: tolerance, file: file, line: line) }
}

private func assertThrows(_ body: () throws -> Void, kind: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
    do {
        try body()
        XCTFail("expected an error", file: file, line: line)
    } catch let error as QuireError {
        if let kind { XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line) }
        XCTAssertFalse(error.description.contains("\n"), file: file, line: line)
    } catch {
        XCTFail("not a QuireError: \(error)", file: file, line: line)
    }
}

final class ImageMeasureTests: XCTestCase {
    func testPNGSizeDPIAndAnimation() throws {
        var rgb = [UInt8]()
        for y in 0..<23 { for x in 0..<37 { let c = quadrant(x, y, 37, 23); rgb += [c.0, c.1, c.2] } }
        let written = try F.writtenPNG(width: 37, height: 23, rgb: rgb)
        let info = try ImageInfo.measure(written)
        XCTAssertEqual(info.format, .png)
        XCTAssertEqual([info.width, info.height, info.orientation], [37, 23, 1])
        XCTAssertNil(info.dpiX)
        XCTAssertFalse(info.isAnimated)

        let phys = F.chunk("pHYs", F.be32(3780) + F.be32(7559) + [1])
        let actl = F.chunk("acTL", F.be32(2) + F.be32(0))
        let apng = F.png(width: 5, height: 3, depth: 8, color: 0, extra: [phys, actl]) { _, _ in [0] }
        let apngInfo = try ImageInfo.measure(apng)
        XCTAssertEqual([apngInfo.width, apngInfo.height], [5, 3])
        XCTAssertEqual(apngInfo.dpiX!, 96.012, accuracy: 0.001)
        XCTAssertEqual(apngInfo.dpiY!, 192.0, accuracy: 0.01)
        XCTAssertTrue(apngInfo.isAnimated)
    }

    func testJPEGOrientationDPIAndMarkers() throws {
        let jpeg = F.jpeg(width: 40, height: 20, orientation: 6, dpi: 300) { x, y in quadrant(x, y, 40, 20) }
        let info = try ImageInfo.measure(jpeg)
        XCTAssertEqual(info.format, .jpeg)
        XCTAssertEqual([info.pixelWidth, info.pixelHeight, info.orientation], [40, 20, 6])
        XCTAssertEqual([info.width, info.height], [20, 40], "orientation 6 turns the picture a quarter")
        XCTAssertEqual(info.dpiX, 300)
        XCTAssertEqual(info.dpiY, 300)

        // COM and APP5 segments and fill bytes before the frame header; progressive.
        let progressive = F.jpeg(width: 33, height: 17, progressive: true) { _, _ in (10, 20, 30) }
        var padded = Array(progressive[0..<2])
        padded += [0xFF, 0xFE, 0x00, 0x07] + Array("hello".utf8)
        padded += [0xFF, 0xE5, 0x00, 0x04, 0xAB, 0xCD]
        padded += [0xFF, 0xFF, 0xFF]
        padded += progressive[2...]
        let paddedInfo = try ImageInfo.measure(padded)
        XCTAssertEqual([paddedInfo.width, paddedInfo.height, paddedInfo.orientation], [33, 17, 1])
        XCTAssertNil(paddedInfo.dpiX, "libjpeg's default JFIF density is an aspect ratio, not DPI")
    }

    func testGIFWebPAVIFJXLBMP() throws {
        let still = F.gif(width: 7, height: 5, palette: [0, 0, 0, 255, 255, 255]) { x, _ in x % 2 }
        XCTAssertEqual(try ImageInfo.measure(still), ImageInfo(format: .gif, pixelWidth: 7, pixelHeight: 5))
        let animated = F.gif(width: 7, height: 5, palette: [0, 0, 0, 255, 255, 255], frames: 2) { x, _ in x % 2 }
        XCTAssertTrue(try ImageInfo.measure(animated).isAnimated)

        let lossless = F.webp(width: 9, height: 4) { _, _ in [1, 2, 3, 255] }
        let lossy = F.webp(width: 17, height: 11, quality: 80) { _, _ in [200, 100, 50, 255] }
        let alpha = F.webp(width: 13, height: 6, quality: 80) { x, _ in [200, 100, 50, x < 6 ? 0 : 255] }
        for (bytes, w, h) in [(lossless, 9, 4), (lossy, 17, 11), (alpha, 13, 6)] {
            let info = try ImageInfo.measure(bytes)
            XCTAssertEqual([info.width, info.height], [w, h])
            XCTAssertEqual(info.format, .webp)
        }
        XCTAssertEqual(String(decoding: lossless[12..<16], as: UTF8.self), "VP8L")
        XCTAssertEqual(String(decoding: lossy[12..<16], as: UTF8.self), "VP8 ")
        XCTAssertEqual(String(decoding: alpha[12..<16], as: UTF8.self), "VP8X")

        // AVIF: ftyp, then meta (a full box) / iprp / ipco / ispe.
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { F.be32(UInt32(body.count + 8)) + Array(type.utf8) + body }
        let ispe = box("ispe", [0, 0, 0, 0] + F.be32(640) + F.be32(480))
        let avif = box("ftyp", Array("avif".utf8) + F.be32(0) + Array("mif1avif".utf8))
            + box("meta", [0, 0, 0, 0] + box("iprp", box("ipco", ispe)))
        let avifInfo = try ImageInfo.measure(avif)
        XCTAssertEqual(avifInfo.format, .avif)
        XCTAssertEqual([avifInfo.width, avifInfo.height], [640, 480])

        // JPEG XL codestream: small size header, height 4×8, ratio 0, width 8×8.
        let jxl: [UInt8] = [0xFF, 0x0A, 0x07, 0x0E, 0, 0]
        let jxlInfo = try ImageInfo.measure(jxl)
        XCTAssertEqual(jxlInfo.format, .jxl)
        XCTAssertEqual([jxlInfo.width, jxlInfo.height], [64, 32])

        var bmp = Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0]
        bmp += [10, 0, 0, 0] + [0xFB, 0xFF, 0xFF, 0xFF]  // 10 × -5 (top-down)
        bmp += [UInt8](repeating: 0, count: 28)
        let bmpInfo = try ImageInfo.measure(bmp)
        XCTAssertEqual([bmpInfo.width, bmpInfo.height], [10, 5])
        XCTAssertEqual(bmpInfo.format, .bmp)
    }

    func testSVGRootSizes() throws {
        let cases: [(String, Int, Int)] = [
            (#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"/>"#, 120, 80),
            (#"<?xml version="1.0"?><!-- c --><!DOCTYPE svg [<!ENTITY x "y>">]><svg width='72pt' height="1in">"#, 96, 96),
            (#"<svg width="100%" height="100%" viewBox="0 0 300 200">"#, 300, 200),
            (#"<svg viewBox="0,0,50.5,25">"#, 51, 25),
            (#"<svg width="25.4mm" viewBox="0 0 2 1">"#, 96, 48),
            (#"<svg height="2.54cm" viewBox="0 0 2 1">"#, 192, 96),
            (#"<svg width="10em" height="3e1">"#, 160, 30),
            (#"<svg:svg xmlns:svg="http://www.w3.org/2000/svg" width="5px" height="6px">"#, 5, 6),
            ("\u{FEFF}\n  <svg\n width = \"7\"\theight='8'\n>", 7, 8),
            (#"<svg>"#, 300, 150),
        ]
        for (text, w, h) in cases {
            let info = try ImageInfo.measure(Array(text.utf8))
            XCTAssertEqual(info.format, .svg, text)
            XCTAssertEqual([info.width, info.height], [w, h], text)
            XCTAssertEqual(info.hasIntrinsicSize, text.contains("width") && text.contains("height") && !text.contains("%"), text)
        }
        assertThrows({ _ = try ImageInfo.measure(Array("<html><svg width='1'/></html>".utf8)) }, kind: "invalid-image")
        assertThrows({ _ = try ImageInfo.measure(Array("<svg width='1".utf8)) }, kind: "invalid-image")
        assertThrows({ _ = try ImageInfo.measure(Array("hello".utf8)) }, kind: "unsupported")
        assertThrows({ _ = try ImageInfo.measure([]) }, kind: "unsupported")
    }

    func testHugeHeadersAreRefusedBeforeDecoding() throws {
        // IHDR only: a 60000×60000 claim must be refused from the header, with no IDAT to read.
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + F.chunk("IHDR", F.ihdr(width: 60000, height: 60000, depth: 8, color: 6, interlaced: false))
        assertThrows({ _ = try ImageInfo.measure(png) }, kind: "limit-exceeded")
        let tall = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + F.chunk("IHDR", F.ihdr(width: 20000, height: 20000, depth: 8, color: 2, interlaced: false))
        assertThrows({ _ = try ImageInfo.measure(tall) }, kind: "limit-exceeded")  // 400 MP

        // A JPEG frame header claiming 60000×60000.
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0xEA, 0x60, 0xEA, 0x60, 1, 1, 0x11, 0, 0xFF, 0xD9]
        assertThrows({ _ = try ImageInfo.measure(jpeg) }, kind: "limit-exceeded")
        // And the decoder refuses the same claim even when handed an info that says so.
        let claimed = ImageInfo(format: .jpeg, pixelWidth: 60000, pixelHeight: 60000)
        assertThrows({ _ = try ImageDecoder.decode(jpeg, info: claimed, maxWidth: 100, maxHeight: 100) }, kind: "limit-exceeded")

        var limits = Limits()
        limits.maxImagePixels = 100
        let small = F.png(width: 11, height: 10, depth: 8, color: 0) { _, _ in [0] }
        assertThrows({ _ = try ImageInfo.measure(small, limits: limits) }, kind: "limit-exceeded")
    }

    func testFittedSize() {
        let info = ImageInfo(format: .png, pixelWidth: 800, pixelHeight: 600)
        XCTAssertTrue(info.fittedSize(maxWidth: 400, maxHeight: 400) == (400, 300))
        XCTAssertTrue(info.fittedSize(maxWidth: 4000, maxHeight: 4000) == (800, 600), "never upscaled")
        XCTAssertTrue(info.fittedSize(maxWidth: 100, maxHeight: 30) == (40, 30))
        XCTAssertTrue(info.fittedSize(maxWidth: 0, maxHeight: 0) == (1, 1))
        let turned = ImageInfo(format: .jpeg, pixelWidth: 800, pixelHeight: 600, orientation: 8)
        XCTAssertTrue(turned.fittedSize(maxWidth: 400, maxHeight: 400) == (300, 400))
    }
}

final class ImageDecodeTests: XCTestCase {
    func decode(_ bytes: [UInt8], _ maxWidth: Int, _ maxHeight: Int) throws -> DecodedImage {
        let info = try ImageInfo.measure(bytes)
        let image = try ImageDecoder.decode(bytes, info: info, maxWidth: maxWidth, maxHeight: maxHeight)
        XCTAssertEqual(image.stride % 4, 0)
        XCTAssertGreaterThanOrEqual(image.stride, image.width * 4)
        XCTAssertEqual(image.pixels.count, image.stride * image.height)
        return image
    }

    func testPNGColourTypes() throws {
        var rgb = [UInt8]()
        for y in 0..<40 { for x in 0..<40 { let c = quadrant(x, y, 40, 40); rgb += [c.0, c.1, c.2] } }
        let written = try F.writtenPNG(width: 40, height: 40, rgb: rgb)
        let full = try decode(written, 100, 100)
        XCTAssertEqual([full.width, full.height], [40, 40])
        assertQuadrants(full, tolerance: 0)
        F.assertColor(full, 19, 19, (255, 0, 0), tolerance: 0)
        F.assertColor(full, 20, 20, (255, 255, 255), tolerance: 0)
        let half = try decode(written, 20, 100)
        XCTAssertEqual([half.width, half.height], [20, 20])
        assertQuadrants(half, tolerance: 0)
        let odd = try decode(written, 7, 7)
        XCTAssertEqual([odd.width, odd.height], [7, 7])
        F.assertColor(odd, 0, 0, (255, 0, 0), tolerance: 0)
        F.assertColor(odd, 6, 6, (255, 255, 255), tolerance: 0)

        // Palette at 2 bits with tRNS: index 0 transparent, 1 half-transparent red, 2 green, 3 blue.
        let palette: [UInt8] = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
        let indexed = F.png(width: 8, height: 2, depth: 2, color: 3, palette: palette, trns: [0, 128]) { x, _ in [x % 4] }
        let p = try decode(indexed, 8, 2)
        F.assertColor(p, 0, 0, (0, 0, 0), alpha: 0, tolerance: 0)
        XCTAssertEqual(p.pixel(x: 1, y: 0), 0x8080_0000, "premultiplied: alpha 128, red 128")
        F.assertColor(p, 2, 1, (0, 255, 0), tolerance: 0)
        F.assertColor(p, 7, 1, (0, 0, 255), tolerance: 0)

        // 16-bit grey, grey + alpha, 16-bit RGBA, 1-bit grey.
        let grey16 = try decode(F.png(width: 3, height: 1, depth: 16, color: 0) { x, _ in [[0, 0x8080, 0xFFFF][x]] }, 9, 9)
        F.assertColor(grey16, 1, 0, (128, 128, 128), tolerance: 0)
        F.assertColor(grey16, 2, 0, (255, 255, 255), tolerance: 0)
        let greyAlpha = try decode(F.png(width: 2, height: 1, depth: 8, color: 4) { x, _ in [200, x == 0 ? 255 : 0] }, 9, 9)
        F.assertColor(greyAlpha, 0, 0, (200, 200, 200), tolerance: 0)
        XCTAssertEqual(greyAlpha.pixel(x: 1, y: 0), 0)
        let rgba16 = try decode(F.png(width: 1, height: 1, depth: 16, color: 6) { _, _ in [0xFFFF, 0, 0x4000, 0xFFFF] }, 9, 9)
        F.assertColor(rgba16, 0, 0, (255, 0, 64), tolerance: 0)
        let bits = try decode(F.png(width: 9, height: 1, depth: 1, color: 0) { x, _ in [x % 2] }, 9, 9)
        F.assertColor(bits, 0, 0, (0, 0, 0), tolerance: 0)
        F.assertColor(bits, 8, 0, (0, 0, 0), tolerance: 0)
        F.assertColor(bits, 7, 0, (255, 255, 255), tolerance: 0)

        // Interlaced (Adam7) RGB, at full size and halved.
        let interlaced = F.png(width: 21, height: 13, depth: 8, color: 2, interlaced: true) { x, y in
            let c = quadrant(x, y, 21, 13)
            return [Int(c.0), Int(c.1), Int(c.2)]
        }
        let i1 = try decode(interlaced, 100, 100)
        XCTAssertEqual([i1.width, i1.height], [21, 13])
        for y in 0..<13 {
            for x in 0..<21 {
                let c = quadrant(x, y, 21, 13)
                F.assertColor(i1, x, y, (Int(c.0), Int(c.1), Int(c.2)), tolerance: 0)
            }
        }
    }

    func testJPEGDecodeScaledCMYKAndOrientation() throws {
        let jpeg = F.jpeg(width: 64, height: 64) { x, y in quadrant(x, y, 64, 64) }
        let full = try decode(jpeg, 64, 64)
        XCTAssertEqual([full.width, full.height], [64, 64])
        assertQuadrants(full, tolerance: 8)

        // DCT scaling: 800×600 into 100×100 decodes at 1/8 (exactly 100×75) with no further resampling.
        let big = F.jpeg(width: 800, height: 600, quality: 90) { x, y in quadrant(x, y, 800, 600) }
        let small = try decode(big, 100, 100)
        XCTAssertEqual([small.width, small.height], [100, 75])
        assertQuadrants(small, tolerance: 10)
        let odd = try decode(big, 333, 1000)
        XCTAssertEqual([odd.width, odd.height], [333, 250])
        assertQuadrants(odd, tolerance: 10)

        let progressive = F.jpeg(width: 64, height: 48, progressive: true) { x, y in quadrant(x, y, 64, 48) }
        assertQuadrants(try decode(progressive, 32, 32), tolerance: 10)

        let cmyk = F.jpeg(width: 64, height: 64, color: 1) { x, y in quadrant(x, y, 64, 64) }
        assertQuadrants(try decode(cmyk, 64, 64), tolerance: 10)
        let ycck = F.jpeg(width: 64, height: 64, color: 2) { x, y in quadrant(x, y, 64, 64) }
        assertQuadrants(try decode(ycck, 32, 32), tolerance: 10)
        let grey = F.jpeg(width: 16, height: 16, color: 3) { x, _ in x < 8 ? (0, 0, 0) : (255, 255, 255) }
        let greyImage = try decode(grey, 16, 16)
        F.assertColor(greyImage, 2, 8, (0, 0, 0), tolerance: 6)
        F.assertColor(greyImage, 13, 8, (255, 255, 255), tolerance: 6)

        // Orientation 6: the stored left half (red) is the displayed top.
        let turned = F.jpeg(width: 64, height: 32, orientation: 6) { x, _ in x < 32 ? (255, 0, 0) : (0, 0, 255) }
        let shown = try decode(turned, 100, 100)
        XCTAssertEqual([shown.width, shown.height], [32, 64])
        F.assertColor(shown, 16, 8, (255, 0, 0), tolerance: 10)
        F.assertColor(shown, 16, 56, (0, 0, 255), tolerance: 10)
        let shownSmall = try decode(turned, 16, 16)
        XCTAssertEqual([shownSmall.width, shownSmall.height], [8, 16])
        F.assertColor(shownSmall, 4, 2, (255, 0, 0), tolerance: 10)
        F.assertColor(shownSmall, 4, 13, (0, 0, 255), tolerance: 10)
        // Orientation 3 (half turn) and 8 (quarter turn the other way).
        let upside = F.jpeg(width: 32, height: 32, orientation: 3) { _, y in y < 16 ? (255, 0, 0) : (0, 0, 255) }
        F.assertColor(try decode(upside, 32, 32), 16, 4, (0, 0, 255), tolerance: 10)
        let left = F.jpeg(width: 64, height: 32, orientation: 8) { x, _ in x < 32 ? (255, 0, 0) : (0, 0, 255) }
        let leftShown = try decode(left, 100, 100)
        F.assertColor(leftShown, 16, 8, (0, 0, 255), tolerance: 10)
        F.assertColor(leftShown, 16, 56, (255, 0, 0), tolerance: 10)
    }

    func testGIFDecode() throws {
        let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
        let plain = F.gif(width: 30, height: 20, palette: palette) { x, y in (x < 15 ? 0 : 1) + (y < 10 ? 0 : 2) }
        let image = try decode(plain, 100, 100)
        XCTAssertEqual([image.width, image.height], [30, 20])
        assertQuadrants(image, tolerance: 0)
        assertQuadrants(try decode(plain, 15, 15), tolerance: 0)

        let interlaced = F.gif(width: 30, height: 21, palette: palette, interlaced: true) { x, y in (x < 15 ? 0 : 1) + (y < 10 ? 0 : 2) }
        let i = try decode(interlaced, 100, 100)
        for y in 0..<21 {
            F.assertColor(i, 2, y, y < 10 ? (255, 0, 0) : (0, 0, 255), tolerance: 0)
        }

        // Transparency, and a frame smaller than the logical screen.
        let framed = F.gif(width: 4, height: 4, palette: palette, transparent: 3, screen: (8, 8), offset: (2, 2)) { x, _ in x < 2 ? 3 : 1 }
        let f = try decode(framed, 8, 8)
        XCTAssertEqual(f.pixel(x: 0, y: 0), 0, "outside the frame")
        XCTAssertEqual(f.pixel(x: 2, y: 2), 0, "transparent index")
        F.assertColor(f, 4, 3, (0, 255, 0), tolerance: 0)
    }

    func testWebPDecode() throws {
        let lossless = F.webp(width: 40, height: 40) { x, y in
            let c = quadrant(x, y, 40, 40)
            return [c.0, c.1, c.2, 255]
        }
        assertQuadrants(try decode(lossless, 40, 40), tolerance: 0)
        let scaled = try decode(lossless, 10, 20)
        XCTAssertEqual([scaled.width, scaled.height], [10, 10])
        assertQuadrants(scaled, tolerance: 2)
        let alpha = F.webp(width: 8, height: 8) { x, _ in x < 4 ? [255, 0, 0, 0] : [0, 0, 255, 128] }
        let a = try decode(alpha, 8, 8)
        XCTAssertEqual(a.pixel(x: 1, y: 1) >> 24, 0)
        F.assertColor(a, 6, 1, (0, 0, 255), alpha: 128, tolerance: 2)
        let lossy = F.webp(width: 64, height: 64, quality: 90) { x, y in
            let c = quadrant(x, y, 64, 64)
            return [c.0, c.1, c.2, 255]
        }
        assertQuadrants(try decode(lossy, 32, 32), tolerance: 12)
    }

    func testSVGRender() throws {
        let svg = #"""
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 20 10">
              <rect x="0" y="0" width="10" height="10" fill="#ff0000"/>
              <rect x="10" y="0" width="10" height="10" fill="#0000ff" fill-opacity="0.5"/>
            </svg>
            """#
        let image = try decode(Array(svg.utf8), 100, 100)
        XCTAssertEqual([image.width, image.height], [100, 50])
        F.assertColor(image, 20, 25, (255, 0, 0), tolerance: 1)
        F.assertColor(image, 80, 25, (0, 0, 255), alpha: 128, tolerance: 2)
        let full = try decode(Array(svg.utf8), 1000, 1000)
        XCTAssertEqual([full.width, full.height], [200, 100], "not above the intrinsic size")
        let broken = Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect"#.utf8)
        assertThrows({ _ = try self.decode(broken, 10, 10) }, kind: "invalid-image")
    }

    func testUnsupportedFormats() throws {
        // JPEG XL decodes now (libjxl): a bare header with no frame is damaged data, not an unknown format.
        let jxl: [UInt8] = [0xFF, 0x0A, 0x07, 0x0E, 0, 0]
        assertThrows({ _ = try self.decode(jxl, 10, 10) }, kind: "invalid-image")
        var bmp = Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]
        bmp += [UInt8](repeating: 0, count: 28)
        assertThrows({ _ = try self.decode(bmp, 10, 10) }, kind: "unsupported")
    }

    /// Every prefix and a spread of single-byte corruptions: errors, never crashes. Truncation inside
    /// the pixel data is an error for PNG, JPEG, GIF and WebP (no invented pixels).
    func testCorruptAndTruncatedInput() throws {
        var rgb = [UInt8]()
        for y in 0..<16 { for x in 0..<16 { let c = quadrant(x, y, 16, 16); rgb += [c.0, c.1, c.2] } }
        let samples: [(String, [UInt8])] = [
            ("png", try F.writtenPNG(width: 16, height: 16, rgb: rgb)),
            ("interlaced png", F.png(width: 9, height: 9, depth: 8, color: 2, interlaced: true) { x, _ in [x * 20, 0, 0] }),
            ("jpeg", F.jpeg(width: 32, height: 32) { x, y in quadrant(x, y, 32, 32) }),
            ("progressive jpeg", F.jpeg(width: 32, height: 32, progressive: true) { x, y in quadrant(x, y, 32, 32) }),
            ("gif", F.gif(width: 16, height: 16, palette: [255, 0, 0, 0, 0, 255]) { x, _ in x % 2 }),
            ("webp", F.webp(width: 16, height: 16, quality: 80) { x, _ in [UInt8(x * 10), 0, 0, 255] }),
            ("svg", Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><rect width="8" height="8"/></svg>"#.utf8)),
        ]
        var outcomes: [String: (ok: Int, failed: Int)] = [:]
        for (name, bytes) in samples {
            var ok = 0, failed = 0
            // Prefixes: the last few bytes (trailers) may be missing without harm; earlier cuts must fail.
            for length in 0..<bytes.count {
                let cut = Array(bytes[0..<length])
                do {
                    let info = try ImageInfo.measure(cut)
                    _ = try ImageDecoder.decode(cut, info: info, maxWidth: 8, maxHeight: 8)
                    ok += 1
                    if length < bytes.count - 16 && name != "svg" {
                        XCTFail("\(name) cut to \(length) of \(bytes.count) bytes decoded without an error")
                    }
                } catch is QuireError {
                    failed += 1
                }
            }
            // Corruptions: any outcome but a crash or a non-QuireError.
            var generator = SplitMix(seed: 42)
            for _ in 0..<200 {
                var broken = bytes
                let index = Int(generator.next() % UInt64(bytes.count))
                broken[index] = UInt8(truncatingIfNeeded: generator.next())
                do {
                    let info = try ImageInfo.measure(broken)
                    let image = try ImageDecoder.decode(broken, info: info, maxWidth: 8, maxHeight: 8)
                    XCTAssertLessThanOrEqual(image.width, 8)
                    XCTAssertLessThanOrEqual(image.height, 8)
                } catch is QuireError {}
            }
            outcomes[name] = (ok, failed)
        }
        print("image truncation outcomes (decoded, refused):", outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" })
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

final class ImageBudgetTests: XCTestCase {
    /// Interlaced PNG and GIF need a full-size buffer: above the limit they are refused, not decoded.
    func testFullBufferFormatsRespectTheBufferLimit() throws {
        var limits = Limits()
        limits.maxImageBufferPixels = 50
        let interlaced = F.png(width: 10, height: 10, depth: 8, color: 0, interlaced: true) { _, _ in [7] }
        let gif = F.gif(width: 10, height: 10, palette: [0, 0, 0, 9, 9, 9]) { _, _ in 1 }
        for bytes in [interlaced, gif] {
            let info = try ImageInfo.measure(bytes)
            assertThrows({ _ = try ImageDecoder.decode(bytes, info: info, maxWidth: 5, maxHeight: 5, limits: limits) }, kind: "limit-exceeded")
        }
        // Row-by-row formats need no full-size buffer, so the same limit does not stop them.
        let plain = F.png(width: 10, height: 10, depth: 8, color: 0) { _, _ in [7] }
        let image = try ImageDecoder.decode(plain, info: try ImageInfo.measure(plain), maxWidth: 5, maxHeight: 5, limits: limits)
        XCTAssertEqual([image.width, image.height], [5, 5])
    }

    func testImagePainterScalesIntoARect() throws {
        let bytes = F.png(width: 2, height: 1, depth: 8, color: 2) { x, _ in x == 0 ? [255, 0, 0] : [0, 0, 255] }
        let image = try ImageDecoder.decode(bytes, info: try ImageInfo.measure(bytes), maxWidth: 10, maxHeight: 10)
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 40, 20)!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        ImagePainter.draw(image, in: Rect(x: 10, y: 5, width: 20, height: 10), cr: cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        func word(_ x: Int, _ y: Int) -> UInt32 {
            UnsafeRawPointer(data).load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
        }
        XCTAssertEqual(word(12, 10), 0xFFFF_0000)
        XCTAssertEqual(word(27, 10), 0xFF00_00FF)
        XCTAssertEqual(word(5, 10), 0, "outside the rect")
        XCTAssertEqual(word(12, 2), 0, "outside the rect")
    }
}
