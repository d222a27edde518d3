import QuireCore
import QuireImages
import QuireLayout
import QuirePreparation

/// A synthetic spread as one picture: page images already written, placed side by side on the
/// device page. Composed from the page PNGs (two at a time), so painting stays one page per worker.
public enum SpreadImage {
    /// One page of the spread: the columns `sourceX ..< sourceX + width` of its image, placed at `x`.
    public struct Placement: Sendable {
        public var page: String
        public var sourceX: Int
        public var width: Int
        public var x: Int

        public init(page: String, sourceX: Int, width: Int, x: Int) {
            self.page = page
            self.sourceX = sourceX
            self.width = width
            self.x = x
        }
    }

    /// Where a page goes in a spread `pageWidth` × 2 wide. A fixed-layout page (`content`: its
    /// viewport on the page) meets its neighbour at the spine with no gap; a reflowable page
    /// fills its half.
    public static func placement(page: String, side: Side, pageWidth: Int, content: Rect?) -> Placement {
        guard let content, side != .center else {
            let x = side == .left ? 0 : side == .right ? pageWidth : pageWidth / 2
            return Placement(page: page, sourceX: 0, width: pageWidth, x: x)
        }
        let from = max(0, Int(content.x.rounded(.down)))
        let width = min(pageWidth, Int(content.maxX.rounded(.up))) - from
        return Placement(page: page, sourceX: from, width: width, x: side == .left ? pageWidth - width : pageWidth)
    }

    public enum Side: Sendable { case left, right, center }

    /// Composes `placements` on a `width` × `height` page of the theme's background and writes
    /// it as PNG (atomically), grey and dithered as the pages were: dithering pixels already on
    /// the 16 levels leaves them there, and the background between pages gets the same levels.
    public static func write(_ placements: [Placement], width: Int, height: Int, paint: PaintSettings, to path: String) throws {
        let stride = width * 4
        let background = paint.theme.background
        var pixels = [UInt8](repeating: 0, count: stride * height)
        let word = UInt32(background.red) << 16 | UInt32(background.green) << 8 | UInt32(background.blue) | 0xFF00_0000
        pixels.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            for index in words.indices { words[index] = word }
        }
        for placement in placements {
            guard let bytes = FileSystem.read(placement.page) else { throw QuireError.io("\(placement.page): cannot be read back for its spread") }
            let info = try ImageInfo.measure(bytes)
            let image = try ImageDecoder.decode(bytes, info: info, maxWidth: info.width, maxHeight: info.height)
            let columns = min(placement.width, image.width - placement.sourceX, width - placement.x)
            guard columns > 0, placement.x >= 0 else { continue }
            for y in 0..<min(image.height, height) {
                let from = y * image.stride + placement.sourceX * 4
                let to = y * stride + placement.x * 4
                pixels.replaceSubrange(to..<(to + columns * 4), with: image.pixels[from..<(from + columns * 4)])
            }
        }
        try pixels.withUnsafeBufferPointer { buffer in
            try PNGWriter.write(
                xrgb: buffer.baseAddress!, width: width, height: height, stride: stride, gray: paint.gray, dither16: paint.dither16,
                level: paint.compressionLevel, to: path)
        }
    }
}
