import CCairo
import CQuireImage
import CGLib
import CQuireDelayLoad
import QuireCore

/// Decoded pixels in cairo's `CAIRO_FORMAT_ARGB32` layout: premultiplied alpha, one native-endian
/// 32-bit word per pixel (0xAARRGGBB), `stride` bytes per row (a multiple of 4).
public struct DecodedImage: Sendable {
    public let width: Int
    public let height: Int
    public let stride: Int
    public let pixels: [UInt8]

    public init(width: Int, height: Int, stride: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.stride = stride
        self.pixels = pixels
    }

    /// The premultiplied 0xAARRGGBB word at (x, y).
    public func pixel(x: Int, y: Int) -> UInt32 {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel outside the image")
        return pixels.withUnsafeBytes { $0.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
    }
}

public enum ImageDecoder {
    /// Decodes to the largest size that fits `maxWidth` × `maxHeight`, keeping the aspect ratio and
    /// never above the intrinsic size, with EXIF orientation applied. JPEG (DCT scaling), WebP and SVG
    /// decode straight to that size; PNG and GIF are box-averaged row by row as they decode.
    /// AVIF and JPEG XL decode whole frames and are box-averaged down; BMP throws `.unsupported`.
    public static func decode(
        _ bytes: [UInt8], info: ImageInfo, maxWidth: Int, maxHeight: Int, limits: Limits = .standard
    ) throws -> DecodedImage {
        try DelayLoad.requireCairo()
        if info.format != .svg { try info.checkLimits(limits) }
        let target = info.fittedSize(maxWidth: maxWidth, maxHeight: maxHeight)
        if info.format == .svg { return try renderSVG(bytes, width: target.width, height: target.height) }

        // Decoders work in stored orientation; the picture is turned afterwards.
        let transposed = info.orientation >= 5
        let width = transposed ? target.height : target.width
        let height = transposed ? target.width : target.height
        let stride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, Int32(width)))
        var pixels = [UInt8](repeating: 0, count: stride * height)
        var message = [CChar](repeating: 0, count: 256)
        let bufferPixels = limits.maxImageBufferPixels
        let status: Int32 = bytes.withUnsafeBufferPointer { data in
            pixels.withUnsafeMutableBufferPointer { out in
                message.withUnsafeMutableBufferPointer { error in
                    let w = Int32(width), h = Int32(height), s = Int32(stride)
                    switch info.format {
                    case .png:
                        return quire_png_decode(data.baseAddress, data.count, w, h, bufferPixels, out.baseAddress, s, error.baseAddress, 256)
                    case .jpeg:
                        // Progressive JPEGs keep every coefficient: about 8 bytes a pixel at worst.
                        return quire_jpeg_decode(data.baseAddress, data.count, w, h, bufferPixels * 8, out.baseAddress, s, error.baseAddress, 256)
                    case .gif:
                        return quire_gif_decode(data.baseAddress, data.count, w, h, bufferPixels, out.baseAddress, s, error.baseAddress, 256)
                    case .webp:
                        return quire_webp_decode(data.baseAddress, data.count, w, h, out.baseAddress, s, error.baseAddress, 256)
                    case .avif:
                        return quire_avif_decode(data.baseAddress, data.count, w, h, bufferPixels, out.baseAddress, s, error.baseAddress, 256)
                    case .jxl:
                        return quire_jxl_decode(data.baseAddress, data.count, w, h, bufferPixels, out.baseAddress, s, error.baseAddress, 256)
                    default:
                        return Int32(QUIRE_IMAGE_UNSUPPORTED)
                    }
                }
            }
        }
        let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch status {
        case Int32(QUIRE_IMAGE_OK): break
        case Int32(QUIRE_IMAGE_UNSUPPORTED):
            throw QuireError.unsupported(
                detail.isEmpty ? "decoding \(info.format.rawValue.uppercased()) images is not supported" : detail)
        case Int32(QUIRE_IMAGE_TOO_LARGE):
            throw QuireError.limitExceeded(limit: "max-image-buffer-pixels", detail: detail)
        case Int32(QUIRE_IMAGE_NO_MEMORY):
            throw QuireError.limitExceeded(limit: "memory", detail: detail)
        default:
            throw QuireError.invalidImage(detail.isEmpty ? "\(info.format.rawValue.uppercased()) data is corrupt" : detail)
        }
        guard info.orientation != 1 else { return DecodedImage(width: width, height: height, stride: stride, pixels: pixels) }
        let turnedStride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, Int32(target.width)))
        var turned = [UInt8](repeating: 0, count: turnedStride * target.height)
        pixels.withUnsafeBufferPointer { source in
            turned.withUnsafeMutableBufferPointer { destination in
                quire_orient(source.baseAddress, Int32(width), Int32(height), Int32(stride), Int32(info.orientation),
                             destination.baseAddress, Int32(turnedStride))
            }
        }
        return DecodedImage(width: target.width, height: target.height, stride: turnedStride, pixels: turned)
    }

    /// librsvg renders the whole document into the target viewport (its own preserveAspectRatio applies).
    static func renderSVG(_ bytes: [UInt8], width: Int, height: Int) throws -> DecodedImage {
        try DelayLoad.requireRsvg()
        var error: UnsafeMutablePointer<GError>?
        func failure(_ what: String) -> QuireError {
            let reason = error.flatMap { $0.pointee.message.map { String(cString: $0).collapsingWhitespace() } } ?? "unknown error"
            if let error { g_error_free(error) }
            return QuireError.invalidImage("SVG: \(what): \(reason)")
        }
        let bytes = SVGPatterns.startAligned(bytes)
        guard let handle = bytes.withUnsafeBufferPointer({ rsvg_handle_new_from_data($0.baseAddress, gsize($0.count), &error) })
        else { throw failure("cannot parse") }
        defer { g_object_unref(UnsafeMutableRawPointer(handle)) }
        rsvg_handle_set_dpi(handle, 96)
        let stride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, Int32(width)))
        var pixels = [UInt8](repeating: 0, count: stride * height)
        let rendered = pixels.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let surface = cairo_image_surface_create_for_data(buffer.baseAddress, CAIRO_FORMAT_ARGB32, Int32(width), Int32(height), Int32(stride))
            else { return false }
            defer { cairo_surface_destroy(surface) }
            guard let cr = cairo_create(surface) else { return false }
            defer { cairo_destroy(cr) }
            let ok = quire_rsvg_render(handle, cr, Double(width), Double(height), &error) != 0
            cairo_surface_flush(surface)
            return ok
        }
        guard rendered else { throw failure("cannot render") }
        return DecodedImage(width: width, height: height, stride: stride, pixels: pixels)
    }
}
