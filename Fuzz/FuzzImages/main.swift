import FuzzSupport
import QuireCore
@testable import QuireImages

// The image header parsers: the input goes through every header parser whatever its magic says,
// through the SVG root-tag scan, through `ImageInfo.measure` as layout calls it, and, when it
// measures, is decoded to at most 48 × 48 (Quire's own GIF decoder and scaler, libpng, libjpeg,
// libwebp, libavif, libjxl; SVG rendering through librsvg is left out).

@_cdecl("FuzzImages_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    _ = ImageFormat.sniff(bytes)
    _ = try? HeaderParser.png(bytes)
    _ = try? HeaderParser.jpeg(bytes)
    _ = try? HeaderParser.gif(bytes)
    _ = try? HeaderParser.webp(bytes)
    _ = try? HeaderParser.bmp(bytes)
    _ = try? HeaderParser.avif(bytes)
    _ = try? HeaderParser.jxl(bytes)
    _ = try? SVGHeader.measure(bytes)
    guard let info = try? ImageInfo.measure(bytes, limits: Fuzz.limits), info.format != .svg else { return 0 }
    _ = info.fittedSize(maxWidth: 48, maxHeight: 48)
    _ = try? ImageDecoder.decode(bytes, info: info, maxWidth: 48, maxHeight: 48, limits: Fuzz.limits)
    return 0
}
