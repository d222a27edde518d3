import CFreeType

/// WOFF and WOFF2 fonts unpacked to the sfnt (TrueType/OpenType) bytes HarfBuzz and cairo read.
/// FreeType (built with zlib and brotli on Debian) opens both and rebuilds the sfnt in memory;
/// `FT_Load_Sfnt_Table` with tag 0 hands back that whole rebuilt file.
enum WebFont {
    /// A WOFF file starts with 'wOFF', a WOFF2 file with 'wOF2'.
    static func isWebFont(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[0] == 0x77 && bytes[1] == 0x4F && bytes[2] == 0x46 && (bytes[3] == 0x46 || bytes[3] == 0x32)
    }

    /// The sfnt inside `bytes`, or nil if FreeType cannot decode it.
    static func sfnt(_ bytes: [UInt8]) -> [UInt8]? {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { return nil }
        defer { FT_Done_FreeType(library) }
        return bytes.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var face: FT_Face?
            guard FT_New_Memory_Face(library, buffer.baseAddress, FT_Long(buffer.count), 0, &face) == 0, let face else { return nil }
            defer { FT_Done_Face(face) }
            var length: FT_ULong = 0
            guard FT_Load_Sfnt_Table(face, 0, 0, nil, &length) == 0, length > 12 else { return nil }
            var sfnt = [UInt8](repeating: 0, count: Int(length))
            let loaded = sfnt.withUnsafeMutableBufferPointer { FT_Load_Sfnt_Table(face, 0, 0, $0.baseAddress, &length) }
            return loaded == 0 ? sfnt : nil
        }
    }
}
