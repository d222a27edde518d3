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

final class PreparationTests: XCTestCase {
    /// A bitmap whose every pixel is distinct, so a permutation can be checked exactly.
    func numbered(width: Int, height: Int, channels: Int = 3) -> Bitmap {
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let value = y * width + x
                let pixel = [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(x), UInt8(y)]
                bytes += pixel.prefix(channels)
            }
        }
        return Bitmap(width: width, height: height, channels: channels, bytes: bytes)
    }

    /// White page with black boxes.
    func page(width: Int, height: Int, boxes: [PixelRect], background: [UInt8] = [255, 255, 255], ink: [UInt8] = [0, 0, 0]) -> Bitmap {
        var bitmap = Bitmap(width: width, height: height, filledWith: background)
        for box in boxes { for y in box.y..<box.maxY { for x in box.x..<box.maxX { bitmap.setPixel(x: x, y: y, ink) } } }
        return bitmap
    }

    func testRotationIsAnExactPermutation() {
        let source = numbered(width: 3, height: 2)
        let turned = PagePreparation.rotate(source, .clockwise90)
        XCTAssertEqual(turned.width, 2)
        XCTAssertEqual(turned.height, 3)
        // Clockwise: the bottom-left pixel goes to the top-left, the top-left to the top-right.
        XCTAssertEqual(Array(turned.pixel(x: 0, y: 0)), Array(source.pixel(x: 0, y: 1)))
        XCTAssertEqual(Array(turned.pixel(x: 1, y: 0)), Array(source.pixel(x: 0, y: 0)))
        XCTAssertEqual(Array(turned.pixel(x: 1, y: 2)), Array(source.pixel(x: 2, y: 0)))
        let upside = PagePreparation.rotate(source, .upsideDown)
        XCTAssertEqual(Array(upside.pixel(x: 0, y: 0)), Array(source.pixel(x: 2, y: 1)))
        let counter = PagePreparation.rotate(source, .clockwise270)
        XCTAssertEqual(Array(counter.pixel(x: 0, y: 0)), Array(source.pixel(x: 2, y: 0)))
        for channels in [1, 3, 4] {
            let bitmap = numbered(width: 7, height: 5, channels: channels)
            var round = bitmap
            for _ in 0..<4 { round = PagePreparation.rotate(round, .clockwise90) }
            XCTAssertEqual(round, bitmap)
            XCTAssertEqual(PagePreparation.rotate(PagePreparation.rotate(bitmap, .clockwise90), .clockwise270), bitmap)
            XCTAssertEqual(PagePreparation.rotate(bitmap, .upsideDown), PagePreparation.rotate(PagePreparation.rotate(bitmap, .clockwise90), .clockwise90))
        }
    }

    func testCropFindsTheContentWithinTolerance() {
        var bitmap = page(width: 100, height: 80, boxes: [PixelRect(x: 20, y: 10, width: 40, height: 40)])
        // Near-white specks in the margin stay margin.
        bitmap.setPixel(x: 90, y: 70, [240, 240, 240])
        bitmap.setPixel(x: 3, y: 3, [255 - UInt8(PagePreparation.channelTolerance), 255, 255])
        XCTAssertEqual(PagePreparation.contentRect(bitmap), PixelRect(x: 20, y: 10, width: 40, height: 40))
        // Beyond the tolerance it is content.
        bitmap.setPixel(x: 90, y: 70, [255 - UInt8(PagePreparation.channelTolerance) - 1, 255, 255])
        XCTAssertEqual(PagePreparation.contentRect(bitmap), PixelRect(x: 20, y: 10, width: 71, height: 61))
    }

    func testCropUsesTheDominantBorderColour() {
        // A grey scan background with one stray white corner: grey wins.
        var bitmap = page(width: 60, height: 60, boxes: [PixelRect(x: 10, y: 15, width: 30, height: 20)], background: [200, 200, 190])
        bitmap.setPixel(x: 0, y: 0, [255, 255, 255])
        XCTAssertEqual(PagePreparation.borderColor(bitmap), [200, 200, 190])
        XCTAssertEqual(PagePreparation.contentRect(bitmap), PixelRect(x: 0, y: 0, width: 40, height: 35))
        bitmap.setPixel(x: 0, y: 0, [200, 200, 190])
        XCTAssertEqual(PagePreparation.contentRect(bitmap), PixelRect(x: 10, y: 15, width: 30, height: 20))
    }

    func testTinyOrEmptyContentKeepsThePageWhole() {
        let full = PixelRect(x: 0, y: 0, width: 200, height: 300)
        XCTAssertEqual(PagePreparation.contentRect(page(width: 200, height: 300, boxes: [])), full)
        // A lone page number is smaller than the minimum content size: not trusted.
        XCTAssertEqual(PagePreparation.contentRect(page(width: 200, height: 300, boxes: [PixelRect(x: 95, y: 280, width: 6, height: 8)])), full)
        let prepared = PagePreparation(crop: true).prepare(page(width: 200, height: 300, boxes: []))
        XCTAssertEqual(prepared.count, 1)
        XCTAssertEqual(prepared[0].crop, full)
    }

    func testSpreadSplitAfterCropKeepsOneCropRect() {
        // A 200×100 spread: content from x 30 to 169, y 20 to 79, with a gap at the gutter.
        let spread = page(
            width: 200, height: 100,
            boxes: [PixelRect(x: 30, y: 20, width: 60, height: 60), PixelRect(x: 110, y: 30, width: 60, height: 30)])
        let crop = PixelRect(x: 30, y: 20, width: 140, height: 60)
        let ltr = PagePreparation(crop: true, split: .ltr).prepare(spread)
        XCTAssertEqual(ltr.map(\.half), [.first, .second])
        XCTAssertEqual(ltr.map(\.crop), [crop, crop])
        XCTAssertEqual(ltr[0].region, PixelRect(x: 30, y: 20, width: 70, height: 60))
        XCTAssertEqual(ltr[1].region, PixelRect(x: 100, y: 20, width: 70, height: 60))
        // Both halves are as tall as the whole crop, though the right half's ink is shorter.
        XCTAssertEqual(ltr.map(\.bitmap.height), [60, 60])
        // Rejoined, the halves are the cropped spread, pixel for pixel.
        XCTAssertEqual(join(ltr[0].bitmap, ltr[1].bitmap), spread.cropped(to: crop))

        let rtl = PagePreparation(crop: true, split: .rtl).prepare(spread)
        XCTAssertEqual(rtl.map(\.crop), [crop, crop])
        XCTAssertEqual(rtl[0].region, ltr[1].region, "rtl reads the right half first")
        XCTAssertEqual(rtl[1].region, ltr[0].region)
        XCTAssertEqual(rtl[0].bitmap, ltr[1].bitmap)
    }

    func testNarrowPagesAreNotSplit() {
        let portrait = page(width: 100, height: 140, boxes: [PixelRect(x: 10, y: 10, width: 50, height: 50)])
        XCTAssertEqual(PagePreparation(split: .ltr).prepare(portrait).map(\.half), [.whole])
        // Just under the threshold stays whole; just over splits.
        XCTAssertFalse(PagePreparation(split: .ltr).splits(PixelSize(width: 120, height: 100)))
        XCTAssertTrue(PagePreparation(split: .ltr).splits(PixelSize(width: 121, height: 100)))
        // A portrait page turned a quarter is a spread.
        XCTAssertTrue(PagePreparation(rotate: .clockwise90, split: .rtl).splits(PixelSize(width: 100, height: 140)))
        XCTAssertFalse(PagePreparation(split: .none).splits(PixelSize(width: 400, height: 100)))
    }

    func testEveryRotationCropAndSplitCombination() {
        // Landscape content on a 90×60 page, off centre.
        let source = page(width: 90, height: 60, boxes: [PixelRect(x: 12, y: 8, width: 70, height: 40)])
        for rotation in Rotation.allCases {
            for crop in [false, true] {
                for split in SplitMode.allCases {
                    let preparation = PagePreparation(rotate: rotation, crop: crop, split: split)
                    let label = "\(rotation) crop \(crop) split \(split)"
                    let turned = PagePreparation.rotate(source, rotation)
                    let prepared = preparation.prepare(source)
                    let splits = preparation.splits(PixelSize(width: 90, height: 60))
                    XCTAssertEqual(splits, split != .none && (rotation == .none || rotation == .upsideDown), label)
                    XCTAssertEqual(prepared.count, splits ? 2 : 1, label)
                    let expectedCrop = crop ? PagePreparation.contentRect(turned) : PixelRect(x: 0, y: 0, width: turned.width, height: turned.height)
                    if crop {
                        let quarter = rotation == .clockwise90 || rotation == .clockwise270
                        XCTAssertEqual(expectedCrop.width, quarter ? 40 : 70, label)
                        XCTAssertEqual(expectedCrop.height, quarter ? 70 : 40, label)
                    }
                    for page in prepared {
                        XCTAssertEqual(page.crop, expectedCrop, label)
                        XCTAssertEqual(page.bitmap, turned.cropped(to: page.region), label)
                    }
                    if splits {
                        let (left, right) = split == .rtl ? (prepared[1], prepared[0]) : (prepared[0], prepared[1])
                        XCTAssertEqual(left.region.maxX, right.region.x, label)
                        XCTAssertEqual(join(left.bitmap, right.bitmap), turned.cropped(to: expectedCrop), label)
                    } else {
                        XCTAssertEqual(prepared[0].region, expectedCrop, label)
                        XCTAssertEqual(prepared[0].half, .whole, label)
                    }
                }
            }
        }
    }

    func testDecodeBudgetCapsTheShortEdge() {
        let target = PixelSize(width: 1072, height: 1448)
        let big = DecodeBudget.size(source: PixelSize(width: 4000, height: 6000), target: target)
        XCTAssertEqual(min(big.width, big.height), 2144)
        XCTAssertEqual(Double(big.width) / Double(big.height), 4000.0 / 6000.0, accuracy: 0.001)
        XCTAssertLessThanOrEqual(big.width * big.height, 2144 * 3216)
        // Never upscaled.
        XCTAssertEqual(DecodeBudget.size(source: PixelSize(width: 800, height: 1200), target: target), PixelSize(width: 800, height: 1200))
        // A landscape spread: its short edge (height) is what is capped.
        let spread = DecodeBudget.size(source: PixelSize(width: 9000, height: 6000), target: target)
        XCTAssertEqual(spread.height, 2144)
        XCTAssertEqual(spread.width, 3216)
        XCTAssertEqual(DecodeBudget.scale(source: PixelSize(width: 4288, height: 6000), target: target), 0.5, accuracy: 1e-9)
    }

    /// Two bitmaps of equal height side by side.
    func join(_ left: Bitmap, _ right: Bitmap) -> Bitmap {
        precondition(left.height == right.height && left.channels == right.channels)
        var bytes: [UInt8] = []
        for y in 0..<left.height {
            bytes += left.bytes[(y * left.stride)..<(y * left.stride + left.width * left.channels)]
            bytes += right.bytes[(y * right.stride)..<(y * right.stride + right.width * right.channels)]
        }
        return Bitmap(width: left.width + right.width, height: left.height, channels: left.channels, bytes: bytes)
    }
}
