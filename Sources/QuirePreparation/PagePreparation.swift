/// Quarter turns, clockwise.
public enum Rotation: Int, Sendable, CaseIterable {
    case none = 0, clockwise90 = 90, upsideDown = 180, clockwise270 = 270

    public init?(degrees: Int) { self.init(rawValue: ((degrees % 360) + 360) % 360) }

    /// The size after turning a `width`×`height` image.
    public func rotated(_ size: PixelSize) -> PixelSize {
        self == .clockwise90 || self == .clockwise270 ? PixelSize(width: size.height, height: size.width) : size
    }
}

/// Whether and how wide pages (two-page spreads) are cut in two.
public enum SplitMode: String, Sendable, CaseIterable {
    case none
    /// Left half first (most books).
    case ltr
    /// Right half first (manga, right-to-left books).
    case rtl
}

public struct PreparedPage: Sendable {
    public enum Half: String, Sendable { case whole, first, second }

    public var bitmap: Bitmap
    /// The whole page's crop rect, in pixels of the rotated page. Both halves of a spread carry the same rect.
    public var crop: PixelRect
    /// The part of the rotated page this output shows: `crop`, or one half of it.
    public var region: PixelRect
    public var half: Half
}

/// Rotate → border-crop → split, always in that order. The crop rect is found once for the whole
/// page and both halves of a split spread take it, so the halves rejoin without a seam.
public struct PagePreparation: Sendable, Hashable {
    /// A colour channel within this distance of the border colour counts as margin (anti-aliasing,
    /// JPEG noise and scanner grain stay inside it).
    public static let channelTolerance = 24
    /// Content smaller than this fraction of the page (either way) is not trusted: the page is kept whole.
    public static let minimumContentFraction = 0.1
    /// Content smaller than this many pixels (either way) is not trusted either.
    public static let minimumContentPixels = 8
    /// Pages wider than this (width / height, after rotation) are spreads.
    public static let spreadAspectRatio = 1.2

    public var rotation: Rotation
    public var crop: Bool
    public var split: SplitMode

    public init(rotate: Rotation = .none, crop: Bool = false, split: SplitMode = .none) {
        self.rotation = rotate
        self.crop = crop
        self.split = split
    }

    /// True when `prepare` would return the bitmap unchanged.
    public var isIdentity: Bool { rotation == .none && !crop && split == .none }

    /// Whether a page of this size (before rotation) is split. The whole page's shape decides, not
    /// the cropped shape, so output page numbers are known before any pixel is rendered.
    public func splits(_ size: PixelSize) -> Bool {
        splits(width: Double(size.width), height: Double(size.height))
    }

    /// The same decision from a size in any unit (PDF points), before rotation.
    public func splits(width: Double, height: Double) -> Bool {
        guard split != .none else { return false }
        let quarter = rotation == .clockwise90 || rotation == .clockwise270
        let (w, h) = quarter ? (height, width) : (width, height)
        return h > 0 && w / h > Self.spreadAspectRatio
    }

    /// How many output pages a page of this size (before rotation) gives.
    public func outputCount(for size: PixelSize) -> Int { splits(size) ? 2 : 1 }

    public func prepare(_ bitmap: Bitmap) -> [PreparedPage] {
        prepare(bitmap, splitting: splits(PixelSize(width: bitmap.width, height: bitmap.height)))
    }

    /// `splitting` is the caller's own `splits` answer (from a size it knew before rendering).
    public func prepare(_ bitmap: Bitmap, splitting: Bool) -> [PreparedPage] {
        let turned = Self.rotate(bitmap, rotation)
        let full = PixelRect(x: 0, y: 0, width: turned.width, height: turned.height)
        let cropRect = crop ? Self.contentRect(turned) : full
        guard splitting, split != .none, cropRect.width >= 2 else {
            let out = cropRect == full ? turned : turned.cropped(to: cropRect)
            return [PreparedPage(bitmap: out, crop: cropRect, region: cropRect, half: .whole)]
        }
        let leftWidth = cropRect.width / 2
        let left = PixelRect(x: cropRect.x, y: cropRect.y, width: leftWidth, height: cropRect.height)
        let right = PixelRect(x: cropRect.x + leftWidth, y: cropRect.y, width: cropRect.width - leftWidth, height: cropRect.height)
        let ordered = split == .rtl ? [right, left] : [left, right]
        return [
            PreparedPage(bitmap: turned.cropped(to: ordered[0]), crop: cropRect, region: ordered[0], half: .first),
            PreparedPage(bitmap: turned.cropped(to: ordered[1]), crop: cropRect, region: ordered[1], half: .second),
        ]
    }

    // MARK: - Rotation

    /// An exact pixel permutation: no resampling.
    public static func rotate(_ bitmap: Bitmap, _ rotation: Rotation) -> Bitmap {
        guard rotation != .none else { return bitmap }
        let size = rotation.rotated(PixelSize(width: bitmap.width, height: bitmap.height))
        let channels = bitmap.channels
        let w = bitmap.width, h = bitmap.height
        let outStride = size.width * channels
        var out = [UInt8](repeating: 0, count: outStride * size.height)
        bitmap.bytes.withUnsafeBufferPointer { srcBuffer in
            out.withUnsafeMutableBufferPointer { dstBuffer in
                let src = srcBuffer.baseAddress!, dst = dstBuffer.baseAddress!
                for y in 0..<h {
                    let row = src + y * bitmap.stride
                    for x in 0..<w {
                        let (nx, ny): (Int, Int)
                        switch rotation {
                        case .clockwise90: (nx, ny) = (h - 1 - y, x)
                        case .upsideDown: (nx, ny) = (w - 1 - x, h - 1 - y)
                        case .clockwise270: (nx, ny) = (y, w - 1 - x)
                        case .none: (nx, ny) = (x, y)
                        }
                        let from = row + x * channels
                        let to = dst + ny * outStride + nx * channels
                        for c in 0..<channels { to[c] = from[c] }
                    }
                }
            }
        }
        return Bitmap(width: size.width, height: size.height, channels: channels, bytes: out)
    }

    // MARK: - Border crop

    /// The most frequent colour on the four edges (colour channels only).
    public static func borderColor(_ bitmap: Bitmap) -> [UInt8] {
        let compared = min(bitmap.channels, 3)
        var counts: [UInt32: Int] = [:]
        func count(_ x: Int, _ y: Int) {
            let start = y * bitmap.stride + x * bitmap.channels
            var key: UInt32 = 0
            for c in 0..<compared { key = key << 8 | UInt32(bitmap.bytes[start + c]) }
            counts[key, default: 0] += 1
        }
        guard bitmap.width > 0, bitmap.height > 0 else { return [UInt8](repeating: 255, count: compared) }
        for x in 0..<bitmap.width {
            count(x, 0)
            count(x, bitmap.height - 1)
        }
        for y in 0..<bitmap.height {
            count(0, y)
            count(bitmap.width - 1, y)
        }
        // Ties go to the larger key so the answer never depends on dictionary order.
        let best = counts.max { $0.value != $1.value ? $0.value < $1.value : $0.key < $1.key }!.key
        return (0..<compared).map { UInt8(truncatingIfNeeded: best >> (8 * UInt32(compared - 1 - $0))) }
    }

    /// The smallest rect holding every pixel that differs from the border colour by more than the
    /// tolerance; the whole page when that content is too small to trust.
    public static func contentRect(_ bitmap: Bitmap) -> PixelRect {
        let full = PixelRect(x: 0, y: 0, width: bitmap.width, height: bitmap.height)
        guard bitmap.width > 2, bitmap.height > 2 else { return full }
        let border = borderColor(bitmap)
        let compared = border.count
        let channels = bitmap.channels
        let tolerance = channelTolerance
        var minX = bitmap.width, minY = bitmap.height, maxX = -1, maxY = -1
        bitmap.bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            for y in 0..<bitmap.height {
                let row = base + y * bitmap.stride
                var first = -1, last = -1
                for x in 0..<bitmap.width {
                    let pixel = row + x * channels
                    var differs = false
                    for c in 0..<compared where abs(Int(pixel[c]) - Int(border[c])) > tolerance {
                        differs = true
                        break
                    }
                    if differs {
                        if first < 0 { first = x }
                        last = x
                    }
                }
                guard first >= 0 else { continue }
                minX = min(minX, first)
                maxX = max(maxX, last)
                minY = min(minY, y)
                maxY = y
            }
        }
        guard maxX >= 0 else { return full }
        let rect = PixelRect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
        let minimumWidth = max(minimumContentPixels, Int((Double(bitmap.width) * minimumContentFraction).rounded(.up)))
        let minimumHeight = max(minimumContentPixels, Int((Double(bitmap.height) * minimumContentFraction).rounded(.up)))
        guard rect.width >= minimumWidth, rect.height >= minimumHeight else { return full }
        return rect
    }
}

/// How large to decode a raster source for a target page: the short edge at most twice the
/// target's short edge (headroom for zooming), never upscaled, one scale for both axes.
public enum DecodeBudget {
    public static let zoomHeadroom = 2.0

    public static func scale(source: PixelSize, target: PixelSize) -> Double {
        let sourceShort = min(source.width, source.height)
        let targetShort = min(target.width, target.height)
        guard sourceShort > 0, targetShort > 0 else { return 1 }
        return min(1, zoomHeadroom * Double(targetShort) / Double(sourceShort))
    }

    public static func size(source: PixelSize, target: PixelSize) -> PixelSize {
        let scale = scale(source: source, target: target)
        guard scale < 1 else { return source }
        return PixelSize(
            width: max(1, Int((Double(source.width) * scale).rounded())), height: max(1, Int((Double(source.height) * scale).rounded())))
    }
}
