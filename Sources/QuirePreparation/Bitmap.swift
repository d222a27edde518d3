/// An 8-bit bitmap: `channels` bytes per pixel (1 grey, 3 RGB, 4 RGBA or cairo's BGRX), rows
/// `stride` bytes apart. Preparation never looks at a fourth byte (alpha or padding) when it compares colours.
public struct Bitmap: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var channels: Int
    public var stride: Int
    public var bytes: [UInt8]

    public init(width: Int, height: Int, channels: Int, stride: Int? = nil, bytes: [UInt8]) {
        precondition(channels == 1 || channels == 3 || channels == 4, "channels must be 1, 3 or 4")
        let stride = stride ?? width * channels
        precondition(width >= 0 && height >= 0 && stride >= width * channels && bytes.count >= stride * height)
        self.width = width
        self.height = height
        self.channels = channels
        self.stride = stride
        self.bytes = bytes
    }

    /// A bitmap filled with one colour (`color` has `channels` bytes).
    public init(width: Int, height: Int, filledWith color: [UInt8]) {
        let channels = color.count
        var bytes = [UInt8](repeating: 0, count: width * height * channels)
        for index in 0..<(width * height) { for c in 0..<channels { bytes[index * channels + c] = color[c] } }
        self.init(width: width, height: height, channels: channels, bytes: bytes)
    }

    public func pixel(x: Int, y: Int) -> ArraySlice<UInt8> {
        let start = y * stride + x * channels
        return bytes[start..<(start + channels)]
    }

    public mutating func setPixel(x: Int, y: Int, _ color: [UInt8]) {
        let start = y * stride + x * channels
        for c in 0..<channels { bytes[start + c] = color[c] }
    }

    /// A tightly packed copy of `rect`.
    public func cropped(to rect: PixelRect) -> Bitmap {
        precondition(rect.x >= 0 && rect.y >= 0 && rect.maxX <= width && rect.maxY <= height)
        let rowBytes = rect.width * channels
        var out = [UInt8](repeating: 0, count: rowBytes * rect.height)
        bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for row in 0..<rect.height {
                    let from = (rect.y + row) * stride + rect.x * channels
                    (dst.baseAddress! + row * rowBytes).update(from: src.baseAddress! + from, count: rowBytes)
                }
            }
        }
        return Bitmap(width: rect.width, height: rect.height, channels: channels, bytes: out)
    }
}

/// A rectangle in pixels (origin top-left).
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var description: String { "\(x),\(y) \(width)x\(height)" }
}

/// A size in pixels.
public struct PixelSize: Sendable, Hashable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}
