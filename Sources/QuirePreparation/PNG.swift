import CQuirePNG
import Glibc
import QuireCore

/// PNG files with libpng (its setjmp errors are caught in CQuirePNG): cairo RGB24 pixels or packed
/// rows out, and PNGs read back for tests and tools.
public enum PNGWriter {
    /// cairo RGB24 pixels as PNG bytes: exactly what `write(xrgb:…)` puts in a file.
    public static func encode(
        xrgb data: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, gray: Bool, dither16: Bool, level: Int
    ) throws -> [UInt8] {
        var rows = PNGRows(width: width, height: height, gray: gray, dither16: dither16, level: level)
        rows.add(xrgb: data, stride: stride, count: height)
        return try rows.encoded()
    }

    /// cairo RGB24 pixels as packed RGB, or grey (16 dithered levels with `dither16`).
    public static func bitmap(xrgb data: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, gray: Bool, dither16: Bool) -> Bitmap {
        let channels = gray ? 1 : 3
        var bytes = [UInt8](repeating: 0, count: width * height * channels)
        bytes.withUnsafeMutableBufferPointer { buffer in
            if gray {
                quire_xrgb_to_gray(data, Int32(stride), buffer.baseAddress, Int32(width), Int32(height), dither16 ? 16 : 256)
            } else {
                quire_xrgb_to_rgb(data, Int32(stride), buffer.baseAddress, Int32(width), Int32(height))
            }
        }
        return Bitmap(width: width, height: height, channels: channels, bytes: bytes)
    }

    /// Native-endian 0xXXRRGGBB pixels (cairo's RGB24 layout, wherever they live) to a PNG,
    /// converted row by row inside the writer (no whole-image copy).
    public static func write(
        xrgb data: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, gray: Bool, dither16: Bool, level: Int, to path: String
    ) throws {
        var rows = PNGRows(width: width, height: height, gray: gray, dither16: dither16, level: level)
        rows.add(xrgb: data, stride: stride, count: height)
        try rows.write(to: path)
    }

    /// Packed 8-bit grey (`channels` 1) or RGB (3) rows to a PNG, atomically (temporary name, then rename).
    public static func write(
        rows: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, channels: Int, level: Int, to path: String
    ) throws {
        try writeAtomically(to: path) { temporary, error in
            quire_png_write(temporary, rows, Int32(width), Int32(height), Int32(stride), Int32(channels), Int32(level), error, 256)
        }
    }

    /// Runs `write` (a C writer: 0, or -1 with a message in its 256-byte error buffer) on a
    /// temporary name, then renames it to `path`; nothing is left behind when either fails.
    static func writeAtomically(to path: String, _ write: (String, UnsafeMutablePointer<CChar>) -> Int32) throws {
        let temporary = path + ".tmp-\(getpid())"
        var error = [CChar](repeating: 0, count: 256)
        guard error.withUnsafeMutableBufferPointer({ write(temporary, $0.baseAddress!) }) == 0 else {
            unlink(temporary)
            throw QuireError.cannotCreateOutput(path: path, reason: message(error))
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw QuireError.cannotCreateOutput(path: path, reason: String(cString: strerror(errno)))
        }
    }

    static func message(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A PNG made from bands of cairo RGB24 rows, top to bottom: a page painted a band at a time
/// needs no surface of the whole page. The bytes are those `PNGWriter.write(xrgb:…)` makes from
/// the whole surface. The rows live in the calling thread's scratch (CQuirePNG), so a `PNGRows`
/// is begun, filled and written on one thread, one at a time; it cannot be copied.
public struct PNGRows: ~Copyable {
    private var state = quire_png_rows()

    /// A PNG of `height` rows: RGB, or exact grey when no pixel has colour; with `gray`, grey
    /// (16 dithered levels with `dither16`). `level` is libdeflate's, 1–12.
    public init(width: Int, height: Int, gray: Bool, dither16: Bool, level: Int) {
        // Memory running out is reported when the PNG is written.
        _ = quire_png_rows_begin(&state, Int32(width), Int32(height), gray ? (dither16 ? 16 : 256) : 0, Int32(level))
    }

    /// Adds the next `count` rows of native-endian 0xXXRRGGBB pixels.
    public mutating func add(xrgb data: UnsafePointer<UInt8>, stride: Int, count: Int) {
        quire_png_rows_add(&state, data, Int32(stride), Int32(count))
    }

    /// Writes the PNG to `path`, atomically (a temporary name, then rename).
    public consuming func write(to path: String) throws {
        try PNGWriter.writeAtomically(to: path) { temporary, error in quire_png_rows_write(&state, temporary, error, 256) }
    }

    /// The PNG's bytes: what `write(to:)` puts in a file.
    public consuming func encoded() throws -> [UInt8] {
        var error = [CChar](repeating: 0, count: 256)
        var bytes: UnsafeMutablePointer<UInt8>?
        var count = 0
        guard quire_png_rows_encode(&state, &bytes, &count, &error, 256) == 0, let bytes else {
            throw QuireError.io("cannot encode a PNG: " + PNGWriter.message(error))
        }
        defer { free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }
}

/// Reads PNGs back (tests and tools): 8-bit grey or RGB, alpha flattened onto white.
public enum PNGReader {
    public struct Image: Sendable {
        public var width: Int
        public var height: Int
        public var channels: Int
        public var pixels: [UInt8]
    }

    /// Reads a PNG as grey (1 channel) or RGB (3); `asRGB` expands grey images to RGB.
    public static func read(_ path: String, asRGB: Bool = false) throws -> Image {
        var pointer: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0, channels: Int32 = 0
        var error = [CChar](repeating: 0, count: 256)
        guard quire_png_read(path, asRGB ? 1 : 0, &pointer, &width, &height, &channels, &error, 256) == 0, let pointer else {
            throw QuireError.io("cannot read PNG \(path): \(PNGWriter.message(error))")
        }
        defer { free(pointer) }
        let count = Int(width) * Int(height) * Int(channels)
        return Image(width: Int(width), height: Int(height), channels: Int(channels), pixels: Array(UnsafeBufferPointer(start: pointer, count: count)))
    }
}
