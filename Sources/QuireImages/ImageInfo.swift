import QuireCore

public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case png, jpeg, gif, webp, svg, avif, jxl, bmp, unknown

    /// The format from the first bytes (magic numbers; SVG is any document that starts with `<`).
    public static func sniff(_ bytes: [UInt8]) -> ImageFormat {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && bytes[offset..<offset + magic.count].elementsEqual(magic)
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts(Array("ftyp".utf8), at: 4), isAVIF(bytes) { return .avif }
        if starts(Array("BM".utf8)) { return .bmp }
        if SVGHeader.looksLikeMarkup(bytes) { return .svg }
        return .unknown
    }

    private static func isAVIF(_ bytes: [UInt8]) -> Bool {
        let size = min(Int(readBE32(bytes, 0) ?? 0), bytes.count, 4096)
        var offset = 8
        while offset + 4 <= size {
            if offset != 12, let brand = fourCC(bytes, offset), brand == "avif" || brand == "avis" { return true }
            offset += 4
        }
        return false
    }
}

/// What an image's header says, read without decoding any pixels.
public struct ImageInfo: Sendable, Hashable {
    public var format: ImageFormat
    /// The size as displayed, with EXIF orientation applied: pixels, or CSS px for SVG.
    public var width: Int
    public var height: Int
    /// The size as stored in the file (before orientation).
    public var pixelWidth: Int
    public var pixelHeight: Int
    /// EXIF orientation 1–8 (JPEG); 1 when absent.
    public var orientation: Int
    /// Resolution where the file states one (PNG pHYs in metres, JPEG JFIF, BMP).
    public var dpiX: Double?
    public var dpiY: Double?
    public var isAnimated: Bool
    /// False for an SVG without absolute width and height: its size then comes from the viewBox
    /// (or CSS's 300×150 default) and says little more than the aspect ratio.
    public var hasIntrinsicSize = true

    public init(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, orientation: Int = 1, dpiX: Double? = nil,
        dpiY: Double? = nil, isAnimated: Bool = false
    ) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        let transposed = self.orientation >= 5
        self.width = transposed ? pixelHeight : pixelWidth
        self.height = transposed ? pixelWidth : pixelHeight
        self.dpiX = dpiX
        self.dpiY = dpiY
        self.isAnimated = isAnimated
    }

    /// Reads only the header. Throws `.invalidImage` for corrupt or truncated headers, `.unsupported`
    /// for unrecognised data, and `.limitExceeded` when a raster claims more than the limits allow.
    public static func measure(_ bytes: [UInt8], limits: Limits = .standard) throws -> ImageInfo {
        let info: ImageInfo
        switch ImageFormat.sniff(bytes) {
        case .png: info = try HeaderParser.png(bytes)
        case .jpeg: info = try HeaderParser.jpeg(bytes)
        case .gif: info = try HeaderParser.gif(bytes)
        case .webp: info = try HeaderParser.webp(bytes)
        case .bmp: info = try HeaderParser.bmp(bytes)
        case .avif: info = try HeaderParser.avif(bytes)
        case .jxl: info = try HeaderParser.jxl(bytes)
        case .svg: return try SVGHeader.measure(bytes)
        case .unknown:
            let head = bytes.prefix(8).map { hexString([$0]) }.joined(separator: " ")
            throw QuireError.unsupported("unrecognised image format (first bytes: \(head.isEmpty ? "none" : head))")
        }
        guard info.pixelWidth > 0, info.pixelHeight > 0 else {
            throw QuireError.invalidImage("\(info.format.rawValue.uppercased()) header has a zero size")
        }
        try info.checkLimits(limits)
        return info
    }

    /// Refuses sizes no decoder should attempt (SVG is exempt: it renders at the target size).
    func checkLimits(_ limits: Limits) throws {
        let name = format.rawValue.uppercased()
        if pixelWidth > limits.maxImageDimension || pixelHeight > limits.maxImageDimension {
            throw QuireError.limitExceeded(
                limit: "max-image-side",
                detail: "\(name) header claims \(pixelWidth)×\(pixelHeight) pixels, more than \(limits.maxImageDimension) a side")
        }
        let (pixels, overflow) = pixelWidth.multipliedReportingOverflow(by: pixelHeight)
        if overflow || pixels > limits.maxImagePixels {
            throw QuireError.limitExceeded(
                limit: "max-image-pixels",
                detail: "\(name) header claims \(pixelWidth)×\(pixelHeight) pixels, more than \(limits.maxImagePixels)")
        }
    }

    /// The largest size within the box that keeps the displayed aspect ratio and never exceeds the
    /// displayed size. Both sides are at least 1.
    public func fittedSize(maxWidth: Int, maxHeight: Int) -> (width: Int, height: Int) {
        let boxWidth = max(1, maxWidth), boxHeight = max(1, maxHeight)
        let w = Double(max(1, width)), h = Double(max(1, height))
        let scale = min(1, Double(boxWidth) / w, Double(boxHeight) / h)
        let fitted = (
            width: min(boxWidth, max(1, Int((w * scale).rounded()))),
            height: min(boxHeight, max(1, Int((h * scale).rounded())))
        )
        return (min(fitted.width, max(1, width)), min(fitted.height, max(1, height)))
    }
}

// MARK: - Byte helpers (nil when out of range)

func readBE16(_ b: [UInt8], _ i: Int) -> Int? {
    guard i >= 0, i + 2 <= b.count else { return nil }
    return Int(b[i]) << 8 | Int(b[i + 1])
}

func readLE16(_ b: [UInt8], _ i: Int) -> Int? {
    guard i >= 0, i + 2 <= b.count else { return nil }
    return Int(b[i]) | Int(b[i + 1]) << 8
}

func readBE32(_ b: [UInt8], _ i: Int) -> UInt32? {
    guard i >= 0, i + 4 <= b.count else { return nil }
    return UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
}

func readLE32(_ b: [UInt8], _ i: Int) -> UInt32? {
    guard i >= 0, i + 4 <= b.count else { return nil }
    return UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
}

func readLE24(_ b: [UInt8], _ i: Int) -> Int? {
    guard i >= 0, i + 3 <= b.count else { return nil }
    return Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16
}

func fourCC(_ b: [UInt8], _ i: Int) -> String? {
    guard i >= 0, i + 4 <= b.count else { return nil }
    return String(decoding: b[i..<i + 4], as: UTF8.self)
}
