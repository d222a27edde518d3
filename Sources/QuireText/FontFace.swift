import CHarfBuzz
import Glibc
import QuireCore

/// One font face, shared read-only across threads. HarfBuzz gets its own face made from the font
/// data (never an FT_Face shared with cairo, which rescales it); painting opens its own FreeType face
/// from `source`.
public final class FontFace: @unchecked Sendable {
    public enum Source: Sendable, Hashable {
        case file(path: String, index: Int)
        /// Font bytes from a book (de-obfuscated), identified by the archive path.
        case memory(name: String, data: [UInt8], index: Int)

        public var key: String {
            switch self {
            case .file(let path, let index): return index == 0 ? path : "\(path)#\(index)"
            case .memory(let name, _, let index): return index == 0 ? "book:\(name)" : "book:\(name)#\(index)"
            }
        }
    }

    public let source: Source
    /// A stable name for display lists and golden files (file name or book path, never a pointer).
    public let key: String
    public let familyName: String
    public let unitsPerEm: Double
    /// Metrics in font units (ascender positive up, descender negative).
    public let ascender: Double
    public let descender: Double
    public let lineGap: Double
    public let xHeight: Double
    /// The highest and lowest ink of any glyph above the baseline (the head table's yMax and
    /// yMin, font units; 2 em either way for a font without one): what painting may touch.
    public let inkTop: Double
    public let inkBottom: Double
    public let isBold: Bool
    public let isItalic: Bool
    public let hasSmallCaps: Bool
    let hbFace: OpaquePointer
    let hbFont: OpaquePointer
    private let memory: UnsafeMutableRawBufferPointer?

    public init(source: Source, isBold: Bool = false, isItalic: Bool = false) throws {
        self.source = source
        self.key = source.key
        self.isBold = isBold
        self.isItalic = isItalic
        let blob: OpaquePointer
        let faceIndex: Int
        switch source {
        case .file(let path, let index):
            guard let fileBlob = hb_blob_create_from_file_or_fail(path) else {
                throw QuireError.cannotOpen(path: path, reason: "cannot read font")
            }
            blob = fileBlob
            memory = nil
            faceIndex = index
        case .memory(let name, let data, let index):
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
            data.withUnsafeBytes { buffer.copyMemory(from: $0) }
            memory = buffer
            guard let memoryBlob = hb_blob_create_or_fail(
                buffer.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(data.count), HB_MEMORY_MODE_READONLY, nil, nil)
            else {
                buffer.deallocate()
                throw QuireError.invalidXML(document: name, reason: "cannot load font data")
            }
            blob = memoryBlob
            faceIndex = index
        }
        defer { hb_blob_destroy(blob) }
        let face = hb_face_create(blob, UInt32(faceIndex))!
        guard hb_face_get_glyph_count(face) > 0 else {
            hb_face_destroy(face)
            memory?.deallocate()
            throw QuireError.unsupported("\(source.key) is not a usable font")
        }
        hb_face_make_immutable(face)
        hbFace = face
        let upem = hb_face_get_upem(face)
        unitsPerEm = Double(upem)
        let font = hb_font_create(face)!
        hb_font_set_scale(font, Int32(upem), Int32(upem))
        hb_font_make_immutable(font)
        hbFont = font
        var extents = hb_font_extents_t()
        if hb_font_get_h_extents(font, &extents) != 0 && extents.ascender != 0 {
            ascender = Double(extents.ascender)
            descender = Double(extents.descender)
            lineGap = Double(extents.line_gap)
        } else {
            ascender = 0.8 * Double(upem)
            descender = -0.2 * Double(upem)
            lineGap = 0
        }
        var x: hb_position_t = 0
        xHeight =
            hb_ot_metrics_get_position(font, HB_OT_METRICS_TAG_X_HEIGHT, &x) != 0 && x > 0 ? Double(x) : 0.5 * Double(upem)
        var words: [UInt64] = [0, 0, 0, 0]
        for value in UInt32(0)..<256 {
            var glyph: hb_codepoint_t = 0
            if hb_font_get_nominal_glyph(font, value, &glyph) != 0 { words[Int(value >> 6)] |= 1 << UInt64(value & 63) }
        }
        latinCoverage = (words[0], words[1], words[2], words[3])
        (inkTop, inkBottom) = FontFace.readInkBounds(face) ?? (2 * Double(upem), -2 * Double(upem))
        familyName = FontFace.readFamilyName(face) ?? source.key
        hasSmallCaps = FontFace.hasFeature(face, "smcp")
    }

    deinit {
        hb_font_destroy(hbFont)
        hb_face_destroy(hbFace)
        memory?.deallocate()
    }

    /// Coverage of U+0000–U+00FF, precomputed: most text in most books is in this range.
    /// Which of U+0000…U+00FF the face has glyphs for, one bit each.
    public let latinCoverage: (UInt64, UInt64, UInt64, UInt64)

    /// The glyph for a code point, if the face covers it.
    public func glyph(for scalar: Unicode.Scalar) -> UInt32? {
        var glyph: hb_codepoint_t = 0
        return hb_font_get_nominal_glyph(hbFont, scalar.value, &glyph) != 0 ? glyph : nil
    }

    public func covers(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 256 { return Self.covers(latin: latinCoverage, UInt16(scalar.value)) }
        return glyph(for: scalar) != nil
    }

    /// Whether a Latin-1 unit (below U+0100) is in a face's `latinCoverage` (inlinable: layout
    /// asks for every character of a paragraph).
    @inlinable @inline(__always)
    public static func covers(latin coverage: (UInt64, UInt64, UInt64, UInt64), _ unit: UInt16) -> Bool {
        let word: UInt64
        switch unit >> 6 {
        case 0: word = coverage.0
        case 1: word = coverage.1
        case 2: word = coverage.2
        default: word = coverage.3
        }
        return word & (1 << UInt64(unit & 63)) != 0
    }

    /// Ascent and descent (both positive) in px at `size` px.
    public func ascent(at size: Double) -> Double { ascender / unitsPerEm * size }
    public func descent(at size: Double) -> Double { -descender / unitsPerEm * size }
    /// The font's "normal" line height as a multiple of the font size.
    public var normalLineHeightFactor: Double {
        let factor = (ascender - descender + lineGap) / unitsPerEm
        return factor > 0.5 && factor < 3 ? factor : 1.2
    }

    /// The head table's yMax and yMin (signed 16-bit at bytes 42 and 38).
    private static func readInkBounds(_ face: OpaquePointer) -> (top: Double, bottom: Double)? {
        guard let blob = hb_face_reference_table(face, hb_tag_from_string("head", -1)) else { return nil }
        defer { hb_blob_destroy(blob) }
        var length: UInt32 = 0
        let data = hb_blob_get_data(blob, &length)
        let table = FontTable(bytes: data.map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) }, count: Int(length))
        func int16(_ offset: Int) throws(FontTable.Malformed) -> Double { Double(Int16(truncatingIfNeeded: try table.u16(offset))) }
        guard let top = try? int16(42), let bottom = try? int16(38), top > bottom else { return nil }
        return (top, bottom)
    }

    private static func readFamilyName(_ face: OpaquePointer) -> String? {
        for nameID in [hb_ot_name_id_t(HB_OT_NAME_ID_TYPOGRAPHIC_FAMILY), hb_ot_name_id_t(HB_OT_NAME_ID_FONT_FAMILY)] {
            var length: UInt32 = 128
            var buffer = [CChar](repeating: 0, count: 129)
            let total = hb_ot_name_get_utf8(face, nameID, hb_language_from_string("en", -1), &length, &buffer)
            if total > 0 { return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return nil
    }

    static func hasFeature(_ face: OpaquePointer, _ tag: String) -> Bool {
        let gsub = hb_tag_from_string("GSUB", -1)
        let wanted = hb_tag_from_string(tag, -1)
        var tags = [hb_tag_t](repeating: 0, count: 64)
        var offset: UInt32 = 0
        while true {
            var count = UInt32(tags.count)
            let total = hb_ot_layout_table_get_feature_tags(face, gsub, offset, &count, &tags)
            if tags.prefix(Int(count)).contains(wanted) { return true }
            offset += count
            if count == 0 || offset >= total { return false }
        }
    }
}
