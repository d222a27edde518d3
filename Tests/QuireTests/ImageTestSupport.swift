import CQuireImage
import CQuirePNG
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

/// Test images built at test time: hand-written PNG and GIF bytes, libjpeg and libwebp encodes.
enum ImageFixtures {
    // MARK: PNG (stored deflate blocks, so any colour type, depth and interlace can be written by hand)

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<offset + n]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + be32(b << 16 | a)
    }

    static func ihdr(width: Int, height: Int, depth: UInt8, color: UInt8, interlaced: Bool) -> [UInt8] {
        be32(UInt32(width)) + be32(UInt32(height)) + [depth, color, 0, 0, interlaced ? 1 : 0]
    }

    /// `sample(x, y)` gives the channel values (or the palette index) of a pixel at the PNG's depth.
    static func png(
        width: Int, height: Int, depth: UInt8, color: UInt8, interlaced: Bool = false, palette: [UInt8]? = nil,
        trns: [UInt8]? = nil, extra: [[UInt8]] = [], sample: (Int, Int) -> [Int]
    ) -> [UInt8] {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(color)]!
        let bitsPerPixel = channels * Int(depth)
        func rows(_ xs: [Int], _ ys: [Int]) -> [UInt8] {
            guard !xs.isEmpty else { return [] }
            var out: [UInt8] = []
            for y in ys {
                out.append(0)  // filter: none
                var line = [UInt8](repeating: 0, count: (xs.count * bitsPerPixel + 7) / 8)
                var bit = 0
                for x in xs {
                    for value in sample(x, y) {
                        if depth == 16 {
                            line[bit / 8] = UInt8(value >> 8)
                            line[bit / 8 + 1] = UInt8(value & 0xFF)
                        } else {
                            line[bit / 8] |= UInt8(value << (8 - Int(depth) - bit % 8) & 0xFF)
                        }
                        bit += Int(depth)
                    }
                }
                out += line
            }
            return out
        }
        var raw: [UInt8] = []
        if interlaced {
            let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            for (x0, y0, dx, dy) in passes {
                let xs = Array(stride(from: x0, to: width, by: dx)), ys = Array(stride(from: y0, to: height, by: dy))
                if !ys.isEmpty { raw += rows(xs, ys) }
            }
        } else {
            raw = rows(Array(0..<width), Array(0..<height))
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", ihdr(width: width, height: height, depth: depth, color: color, interlaced: interlaced))
        for c in extra { out += c }
        if let palette { out += chunk("PLTE", palette) }
        if let trns { out += chunk("tRNS", trns) }
        out += chunk("IDAT", zlibStored(raw))
        out += chunk("IEND", [])
        return out
    }

    /// An 8-bit RGB PNG through the project's own libpng writer.
    static func writtenPNG(width: Int, height: Int, rgb: [UInt8]) throws -> [UInt8] {
        let path = NSTemporaryDirectory() + "quire-image-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var error = [CChar](repeating: 0, count: 256)
        let status = quire_png_write(path, rgb, Int32(width), Int32(height), Int32(width * 3), 3, 6, &error, 256)
        XCTAssertEqual(status, 0)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    // MARK: JPEG and WebP through the C helpers

    static func jpeg(
        width: Int, height: Int, quality: Int = 95, progressive: Bool = false, color: Int = 0, orientation: Int = 0,
        dpi: Int = 0, rgb: (Int, Int) -> (UInt8, UInt8, UInt8)
    ) -> [UInt8] {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = rgb(x, y)
                pixels += [r, g, b]
            }
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = quire_jpeg_encode(
            pixels, Int32(width), Int32(height), Int32(quality), progressive ? 1 : 0, Int32(color), Int32(orientation),
            Int32(dpi), &out, &size)
        precondition(status == 0 && out != nil)
        defer { quire_image_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    static func webp(width: Int, height: Int, quality: Float = -1, rgba: (Int, Int) -> [UInt8]) -> [UInt8] {
        var pixels = [UInt8]()
        for y in 0..<height { for x in 0..<width { pixels += rgba(x, y) } }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = quire_webp_encode(pixels, Int32(width), Int32(height), quality, &out, &size)
        precondition(status == 0 && out != nil)
        defer { quire_image_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    // MARK: GIF: 9-bit codes with a clear code before the table grows, which any LZW decoder reads.

    static func gif(
        width: Int, height: Int, palette: [UInt8], transparent: Int? = nil, interlaced: Bool = false,
        screen: (Int, Int)? = nil, offset: (Int, Int) = (0, 0), frames: Int = 1, index: (Int, Int) -> Int
    ) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let entries = palette.count / 3
        var bits = 0
        while (1 << (bits + 1)) < entries { bits += 1 }
        let tableSize = 1 << (bits + 1)
        let table = palette + [UInt8](repeating: 0, count: tableSize * 3 - palette.count)
        let (sw, sh) = screen ?? (width, height)
        var out = Array("GIF89a".utf8) + le16(sw) + le16(sh) + [0x80 | UInt8(bits), 0, 0] + table
        var rowOrder = Array(0..<height)
        if interlaced {
            rowOrder = Array(stride(from: 0, to: height, by: 8)) + Array(stride(from: 4, to: height, by: 8))
                + Array(stride(from: 2, to: height, by: 4)) + Array(stride(from: 1, to: height, by: 2))
        }
        for _ in 0..<frames {
            if let transparent { out += [0x21, 0xF9, 4, 1, 0, 0, UInt8(transparent), 0] }
            out += [0x2C] + le16(offset.0) + le16(offset.1) + le16(width) + le16(height) + [interlaced ? 0x40 : 0]
            out.append(8)  // LZW minimum code size
            var codes: [Int] = [256]
            var sinceClear = 0
            for y in rowOrder {
                for x in 0..<width {
                    if sinceClear == 254 {
                        codes.append(256)
                        sinceClear = 0
                    }
                    codes.append(index(x, y))
                    sinceClear += 1
                }
            }
            codes.append(257)
            var data: [UInt8] = []
            var accumulator = 0, count = 0
            for code in codes {
                accumulator |= code << count
                count += 9
                while count >= 8 {
                    data.append(UInt8(accumulator & 0xFF))
                    accumulator >>= 8
                    count -= 8
                }
            }
            if count > 0 { data.append(UInt8(accumulator & 0xFF)) }
            var position = 0
            while position < data.count {
                let n = min(255, data.count - position)
                out.append(UInt8(n))
                out += data[position..<position + n]
                position += n
            }
            out.append(0)
        }
        out.append(0x3B)
        return out
    }

    // MARK: Pixel checks

    /// Straight (un-premultiplied) RGBA of a decoded pixel.
    static func rgba(_ image: DecodedImage, _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int, a: Int) {
        let word = image.pixel(x: x, y: y)
        let a = Int(word >> 24), r = Int((word >> 16) & 0xFF), g = Int((word >> 8) & 0xFF), b = Int(word & 0xFF)
        guard a > 0 else { return (0, 0, 0, 0) }
        return (min(255, (r * 255 + a / 2) / a), min(255, (g * 255 + a / 2) / a), min(255, (b * 255 + a / 2) / a), a)
    }

    static func assertColor(
        _ image: DecodedImage, _ x: Int, _ y: Int, _ expected: (Int, Int, Int), alpha: Int = 255, tolerance: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let p = rgba(image, x, y)
        let ok = abs(p.r - expected.0) <= tolerance && abs(p.g - expected.1) <= tolerance
            && abs(p.b - expected.2) <= tolerance && abs(p.a - alpha) <= tolerance
        XCTAssertTrue(ok, "pixel (\(x), \(y)) is \(p), expected \(expected) alpha \(alpha) ±\(tolerance)", file: file, line: line)
    }
}
