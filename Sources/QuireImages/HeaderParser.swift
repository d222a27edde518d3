import QuireCore

/// Per-format header readers: bounds-checked, no pixel data touched.
enum HeaderParser {
    static func bad(_ format: String, _ reason: String) -> QuireError {
        QuireError.invalidImage("\(format): \(reason)")
    }

    // MARK: PNG: IHDR, then chunks up to the first IDAT for pHYs and acTL (APNG).

    static func png(_ b: [UInt8]) throws -> ImageInfo {
        guard let length = readBE32(b, 8), fourCC(b, 12) == "IHDR", let width = readBE32(b, 16),
            let height = readBE32(b, 20), b.count >= 29
        else { throw bad("PNG", "truncated header (no complete IHDR chunk)") }
        guard length == 13 else { throw bad("PNG", "IHDR chunk has length \(length), not 13") }
        let depth = b[24], color = b[25]
        guard [1, 2, 4, 8, 16].contains(depth), [0, 2, 3, 4, 6].contains(color) else {
            throw bad("PNG", "bit depth \(depth) with colour type \(color) is not valid")
        }
        guard width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else { throw bad("PNG", "size out of range") }
        var info = ImageInfo(format: .png, pixelWidth: Int(width), pixelHeight: Int(height))
        var offset = 33
        while let chunkLength = readBE32(b, offset), let type = fourCC(b, offset + 4) {
            if type == "IDAT" || type == "IEND" { break }
            if type == "acTL" { info.isAnimated = true }
            if type == "pHYs", chunkLength == 9, let x = readBE32(b, offset + 8), let y = readBE32(b, offset + 12),
                offset + 16 < b.count, b[offset + 16] == 1, x > 0, y > 0
            {
                info.dpiX = Double(x) * 0.0254
                info.dpiY = Double(y) * 0.0254
            }
            offset += 12 + Int(chunkLength)
        }
        return info
    }

    // MARK: JPEG: markers up to the first SOFn, reading JFIF density and EXIF orientation on the way.

    static func jpeg(_ b: [UInt8]) throws -> ImageInfo {
        var offset = 2
        var orientation = 1
        var dpi: (Double, Double)?
        while offset < b.count {
            // Skip to a marker: stray bytes are tolerated, fill bytes (repeated 0xFF) too.
            guard b[offset] == 0xFF else {
                offset += 1
                continue
            }
            while offset < b.count && b[offset] == 0xFF { offset += 1 }
            guard offset < b.count else { break }
            let marker = b[offset]
            offset += 1
            if marker == 0x00 || marker == 0x01 || marker == 0xD8 || (0xD0...0xD7).contains(marker) { continue }
            if marker == 0xD9 || marker == 0xDA { throw bad("JPEG", "no frame header before the image data") }
            guard let length = readBE16(b, offset), length >= 2 else { break }
            let start = offset + 2, end = offset + length
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard let height = readBE16(b, start + 1), let width = readBE16(b, start + 3) else { break }
                guard height > 0 else { throw bad("JPEG", "height defined later in the stream (DNL) is not supported") }
                return ImageInfo(format: .jpeg, pixelWidth: width, pixelHeight: height, orientation: orientation,
                                 dpiX: dpi?.0, dpiY: dpi?.1)
            case 0xE0 where end <= b.count && b[start..<min(end, start + 5)].elementsEqual([0x4A, 0x46, 0x49, 0x46, 0]):
                // JFIF: version (2), units (1: per inch, 2: per cm), X and Y density.
                if let units = b.count > start + 7 ? b[start + 7] : nil, let x = readBE16(b, start + 8),
                    let y = readBE16(b, start + 10), x > 0, y > 0, units == 1 || units == 2
                {
                    let factor = units == 1 ? 1 : 2.54
                    dpi = (Double(x) * factor, Double(y) * factor)
                }
            case 0xE1 where end <= b.count && b[start..<min(end, start + 6)].elementsEqual([0x45, 0x78, 0x69, 0x66, 0, 0]):
                if let value = exifOrientation(Array(b[(start + 6)..<end])) { orientation = value }
            default: break
            }
            offset = end
        }
        throw bad("JPEG", "truncated header (no frame header)")
    }

    /// The Orientation tag (0x0112) of IFD0 in a TIFF structure.
    static func exifOrientation(_ t: [UInt8]) -> Int? {
        guard t.count >= 8 else { return nil }
        let little = t[0] == 0x49 && t[1] == 0x49
        guard little || (t[0] == 0x4D && t[1] == 0x4D) else { return nil }
        func u16(_ i: Int) -> Int? { little ? readLE16(t, i) : readBE16(t, i) }
        func u32(_ i: Int) -> Int? { (little ? readLE32(t, i) : readBE32(t, i)).map(Int.init) }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for index in 0..<min(count, 512) {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            if tag == 0x0112, u16(entry + 2) == 3, let value = u16(entry + 8) {
                return (1...8).contains(value) ? value : nil
            }
        }
        return nil
    }

    // MARK: GIF: logical screen (or first image descriptor); animated when a second frame follows.

    static func gif(_ b: [UInt8]) throws -> ImageInfo {
        guard var width = readLE16(b, 6), var height = readLE16(b, 8), b.count >= 13 else {
            throw bad("GIF", "truncated header")
        }
        var offset = 13
        if b[10] & 0x80 != 0 { offset += 3 << (Int(b[10] & 7) + 1) }
        var frames = 0
        var sawImage = false
        // Data sub-blocks are skipped by their length bytes: cheap, and it tells a still from an animation.
        func skipBlocks() -> Bool {
            while offset < b.count {
                let length = Int(b[offset])
                offset += 1 + length
                if length == 0 { return true }
            }
            return false
        }
        scan: while offset < b.count && frames < 2 {
            switch b[offset] {
            case 0x21:
                offset += 2
                if !skipBlocks() { break scan }
            case 0x2C:
                guard let w = readLE16(b, offset + 5), let h = readLE16(b, offset + 7), offset + 9 < b.count else { break scan }
                if !sawImage && (width == 0 || height == 0) {
                    width = w
                    height = h
                }
                sawImage = true
                let flags = b[offset + 9]
                offset += 10
                if flags & 0x80 != 0 { offset += 3 << (Int(flags & 7) + 1) }
                offset += 1  // LZW minimum code size
                frames += 1
                if !skipBlocks() { break scan }
            default:
                break scan
            }
        }
        if width == 0 || height == 0 { throw bad("GIF", sawImage ? "zero size" : "truncated header (no image)") }
        return ImageInfo(format: .gif, pixelWidth: width, pixelHeight: height, isAnimated: frames > 1)
    }

    // MARK: WebP: the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended, with canvas size).

    static func webp(_ b: [UInt8]) throws -> ImageInfo {
        guard let chunk = fourCC(b, 12) else { throw bad("WebP", "truncated header") }
        switch chunk {
        case "VP8 ":
            guard b.count >= 30, b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A, let w = readLE16(b, 26),
                let h = readLE16(b, 28)
            else { throw bad("WebP", "truncated or corrupt VP8 header") }
            return ImageInfo(format: .webp, pixelWidth: w & 0x3FFF, pixelHeight: h & 0x3FFF)
        case "VP8L":
            guard b.count >= 25, b[20] == 0x2F, let bits = readLE32(b, 21) else {
                throw bad("WebP", "truncated or corrupt VP8L header")
            }
            return ImageInfo(format: .webp, pixelWidth: Int(bits & 0x3FFF) + 1, pixelHeight: Int((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            guard b.count >= 30, let w = readLE24(b, 24), let h = readLE24(b, 27) else {
                throw bad("WebP", "truncated VP8X header")
            }
            return ImageInfo(format: .webp, pixelWidth: w + 1, pixelHeight: h + 1, isAnimated: b[20] & 0x02 != 0)
        default:
            throw bad("WebP", "unknown first chunk \"\(chunk)\"")
        }
    }

    // MARK: BMP: the DIB header (OS/2 core or Windows info headers).

    static func bmp(_ b: [UInt8]) throws -> ImageInfo {
        guard let headerSize = readLE32(b, 14) else { throw bad("BMP", "truncated header") }
        if headerSize == 12 {
            guard let w = readLE16(b, 18), let h = readLE16(b, 20) else { throw bad("BMP", "truncated header") }
            return ImageInfo(format: .bmp, pixelWidth: w, pixelHeight: h)
        }
        guard headerSize >= 40, let w = readLE32(b, 18), let h = readLE32(b, 22) else {
            throw bad("BMP", "truncated or unknown header")
        }
        var info = ImageInfo(
            format: .bmp, pixelWidth: Int(Int32(bitPattern: w).magnitude), pixelHeight: Int(Int32(bitPattern: h).magnitude))
        if let x = readLE32(b, 38), let y = readLE32(b, 42), x > 0, y > 0, x < 1_000_000, y < 1_000_000 {
            info.dpiX = Double(x) * 0.0254
            info.dpiY = Double(y) * 0.0254
        }
        return info
    }

    /// An ISO BMFF box header at `offset`: its type, header length and whole size (a 64-bit size
    /// must fit 32 bits; size 0 runs to `end`). Nil when it cannot be read.
    static func boxHeader(_ b: [UInt8], _ offset: Int, end: Int) -> (type: String, header: Int, size: Int)? {
        guard let size32 = readBE32(b, offset), let type = fourCC(b, offset + 4) else { return nil }
        var header = 8
        var size = Int(size32)
        if size32 == 1 {
            guard let high = readBE32(b, offset + 8), let low = readBE32(b, offset + 12), high == 0 else { return nil }
            size = Int(low)
            header = 16
        } else if size32 == 0 {
            size = end - offset
        }
        return (type, header, size)
    }

    // MARK: AVIF (ISO BMFF): the largest `ispe` property in meta/iprp/ipco.

    static func avif(_ b: [UInt8]) throws -> ImageInfo {
        var best: (Int, Int)?
        var animated = false
        func walk(_ start: Int, _ end: Int, depth: Int) {
            var offset = start
            while offset + 8 <= end, depth < 8 {
                guard let (type, header, size) = boxHeader(b, offset, end: end), size >= header, offset + size <= end else { return }
                switch type {
                case "ftyp":
                    var brand = offset + 8
                    while brand + 4 <= offset + size {
                        if fourCC(b, brand) == "avis" { animated = true }
                        brand += 4
                    }
                case "meta": walk(offset + header + 4, offset + size, depth: depth + 1)
                case "iprp", "ipco": walk(offset + header, offset + size, depth: depth + 1)
                case "ispe":
                    // Areas as UInt64: two 32-bit sides can overflow Int.
                    if let w = readBE32(b, offset + header + 4), let h = readBE32(b, offset + header + 8),
                        UInt64(w) * UInt64(h) > (best.map { UInt64($0.0) * UInt64($0.1) } ?? 0)
                    {
                        best = (Int(w), Int(h))
                    }
                case "moov": animated = true
                default: break
                }
                offset += size
            }
        }
        walk(0, b.count, depth: 0)
        guard let (w, h) = best else { throw bad("AVIF", "no image size (ispe) in the header") }
        return ImageInfo(format: .avif, pixelWidth: w, pixelHeight: h, isAnimated: animated)
    }

    // MARK: JPEG XL: the SizeHeader after the codestream signature (bare, or in a jxlc/jxlp box).

    static func jxl(_ b: [UInt8]) throws -> ImageInfo {
        var codestream = 0
        if b.count >= 2, b[0] == 0xFF, b[1] == 0x0A {
            codestream = 0
        } else {
            var offset = 0
            var found: Int?
            while let (type, header, size) = boxHeader(b, offset, end: b.count) {
                if type == "jxlc" { found = offset + header; break }
                if type == "jxlp" { found = offset + header + 4; break }
                guard size >= header else { break }
                offset += size
            }
            guard let found else { throw bad("JPEG XL", "no codestream box") }
            codestream = found
        }
        guard codestream + 2 <= b.count, b[codestream] == 0xFF, b[codestream + 1] == 0x0A else {
            throw bad("JPEG XL", "missing codestream signature")
        }
        var bits = BitReader(bytes: b, offset: codestream + 2)
        func u32Size() -> Int? {
            guard let selector = bits.read(2) else { return nil }
            return bits.read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let small = bits.read(1) else { throw bad("JPEG XL", "truncated size header") }
        let height: Int?
        if small == 1 { height = bits.read(5).map { ($0 + 1) * 8 } } else { height = u32Size() }
        guard let height, let ratio = bits.read(3) else { throw bad("JPEG XL", "truncated size header") }
        var width: Int?
        switch ratio {
        case 0: width = small == 1 ? bits.read(5).map { ($0 + 1) * 8 } : u32Size()
        default:
            let (num, den) = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)][ratio - 1]
            width = height * num / den
        }
        guard let width else { throw bad("JPEG XL", "truncated size header") }
        return ImageInfo(format: .jxl, pixelWidth: width, pixelHeight: height)
    }
}

/// Least-significant-bit-first reader (JPEG XL).
struct BitReader {
    let bytes: [UInt8]
    var offset: Int
    var bit = 0

    init(bytes: [UInt8], offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func read(_ count: Int) -> Int? {
        var value = 0
        for index in 0..<count {
            guard offset < bytes.count else { return nil }
            value |= Int((bytes[offset] >> UInt8(bit)) & 1) << index
            bit += 1
            if bit == 8 {
                bit = 0
                offset += 1
            }
        }
        return value
    }
}
