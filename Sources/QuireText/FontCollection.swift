import CFontconfig
import Glibc
import QuireCore
import QuireStyle

/// What a run of text asks for: the CSS family list and the style bits that choose a face.
public struct FontRequest: Hashable, Sendable {
    public var families: [String]
    public var bold: Bool
    public var italic: Bool
    public var language: String?

    public init(families: [String], bold: Bool, italic: Bool, language: String?) {
        self.families = families
        self.bold = bold
        self.italic = italic
        self.language = language
    }

    public init(style: ComputedStyle, bookLanguage: String?) {
        self.init(
            families: style.fontFamilies, bold: style.fontWeight >= 600, italic: style.fontStyle != .normal,
            language: style.language ?? bookLanguage)
    }
}

/// A face registered by a book's `@font-face` rule.
public struct BookFont: Sendable {
    public var family: String
    public var bold: Bool
    public var italic: Bool
    public var face: FontFace
    public var unicodeRanges: [ClosedRange<UInt32>]

    public init(family: String, bold: Bool, italic: Bool, face: FontFace, unicodeRanges: [ClosedRange<UInt32>] = []) {
        self.family = family
        self.bold = bold
        self.italic = italic
        self.face = face
        self.unicodeRanges = unicodeRanges
    }
}

/// Chooses faces: book fonts first, then the bundled faces for generic families, then, per
/// character, system fonts through fontconfig for scripts the bundled faces do not cover.
/// Thread-safe; fallback answers are cached.
public final class FontCollection: @unchecked Sendable {
    public static let bundledFiles: [String: (regular: String, italic: String, bold: String, boldItalic: String)] = [
        "serif": ("LinLibertine_R.otf", "LinLibertine_RI.otf", "LinLibertine_RB.otf", "LinLibertine_RBI.otf"),
        "sans-serif": ("LinBiolinum_R.otf", "LinBiolinum_RI.otf", "LinBiolinum_RB.otf", "LinBiolinum_RB.otf"),
        "monospace": (
            "JetBrainsMono-Regular.ttf", "JetBrainsMono-Italic.ttf", "JetBrainsMono-Bold.ttf", "JetBrainsMono-BoldItalic.ttf"
        ),
    ]
    /// Family names that map onto the bundled generics.
    static let aliases: [String: String] = [
        "serif": "serif", "sans-serif": "sans-serif", "sans": "sans-serif", "monospace": "monospace",
        "cursive": "serif", "fantasy": "serif", "system-ui": "sans-serif", "ui-serif": "serif",
        "ui-sans-serif": "sans-serif", "ui-monospace": "monospace",
        "linux libertine": "serif", "linux libertine o": "serif", "linux biolinum": "sans-serif",
        "linux biolinum o": "sans-serif", "jetbrains mono": "monospace",
        "times": "serif", "times new roman": "serif", "georgia": "serif", "palatino": "serif", "garamond": "serif",
        "baskerville": "serif", "book antiqua": "serif", "cambria": "serif", "charter": "serif",
        "arial": "sans-serif", "helvetica": "sans-serif", "verdana": "sans-serif", "helvetica neue": "sans-serif",
        "courier": "monospace", "courier new": "monospace", "consolas": "monospace", "menlo": "monospace",
    ]
    /// The Noto CJK region whose glyph forms a language is written with: Traditional Chinese
    /// (Taiwan, Macau), Hong Kong, Simplified Chinese, Korean; Japanese's for anything else. The
    /// families' names outrank fontconfig's language match, so the region is named outright.
    static func cjkRegion(_ language: String?) -> String {
        let subtags = (language ?? "").lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        switch subtags.first {
        case "zh", "yue", "cmn":
            if subtags.contains("hk") { return "HK" }
            if subtags.contains("hant") || subtags.contains("tw") || subtags.contains("mo") { return "TC" }
            return subtags.first == "yue" ? "HK" : "SC"
        case "ko": return "KR"
        default: return "JP"
        }
    }

    /// fontconfig families preferred for fallback, per generic family (CJK JP stands for the
    /// request's region, see `cjkRegion`).
    static let fallbackFamilies: [String: [String]] = [
        "serif": ["Noto Serif", "Noto Serif CJK JP", "Noto Sans"],
        "sans-serif": ["Noto Sans", "Noto Sans CJK JP"],
        "monospace": ["Noto Sans Mono", "Noto Sans Mono CJK JP", "Noto Sans"],
    ]

    public let fontsDirectory: String
    private let lock = Lock()
    private var faces: [String: FontFace] = [:]
    private var bundledFaces: [BundledKey: FontFace] = [:]
    private var fallbackCache: [FallbackKey: FontFace?] = [:]
    /// Fallback queries without their character, substituted by the configuration once per family,
    /// style and language (fontconfig's substitution was most of a query's cost).
    private var fallbackPatterns: [FallbackPatternKey: OpaquePointer] = [:]
    public private(set) var warnings: [Warning] = []

    /// A fallback query without its character: the generic family, the style and the language.
    struct FallbackPatternKey: Hashable {
        var generic: String
        var bold: Bool
        var italic: Bool
        var language: String

        init(generic: String, request: FontRequest) {
            self.generic = generic
            bold = request.bold
            italic = request.italic
            language = request.language ?? ""
        }
    }

    struct FallbackKey: Hashable {
        var query: FallbackPatternKey
        var scalar: UInt32
    }

    deinit {
        for pattern in fallbackPatterns.values { FcPatternDestroy(pattern) }
    }

    public init(fontsDirectory: String? = nil) throws {
        guard let directory = fontsDirectory ?? FontCollection.locateBundledFonts() else {
            throw QuireError.cannotOpen(
                path: "Fonts/", reason: "the bundled fonts were not found (set QUIRE_FONTS to the Fonts directory)")
        }
        self.fontsDirectory = directory
    }

    /// `QUIRE_FONTS`, else the installed fonts of the executable's prefix (`PREFIX/bin/quire` →
    /// `PREFIX/share/quire/fonts`), else a `Fonts` folder beside or above the executable (the
    /// package checkout), else `/usr/share/quire/fonts`.
    public static func locateBundledFonts() -> String? {
        let marker = "LinLibertine_R.otf"
        var candidates: [String] = []
        if let env = SystemEnvironment.variable("QUIRE_FONTS") { candidates.append(env) }
        var executable = CommandLine.arguments.first ?? "."
        if !executable.hasPrefix("/") { executable = FileSystem.currentDirectory + "/" + executable }
        var directory = FileSystem.parentDirectory(FileSystem.resolvingSymlinks(executable))
        candidates.append(FileSystem.parentDirectory(directory) + "/share/quire/fonts")
        for _ in 0..<8 where !directory.isEmpty {
            candidates.append(directory == "/" ? "/Fonts" : directory + "/Fonts")
            if directory == "/" { break }
            directory = FileSystem.parentDirectory(directory)
        }
        candidates.append(FileSystem.currentDirectory + "/Fonts")
        candidates.append("/usr/share/quire/fonts")
        return candidates.first { FileSystem.exists($0 + "/" + marker) }
    }

    /// Loads a book's font once per archive path (bytes already de-obfuscated by the container).
    public func bookFace(name: String, data: () throws -> [UInt8]) -> FontFace? {
        let key = "book:" + name
        lock.lock()
        if let face = faces[key] {
            lock.unlock()
            return face
        }
        lock.unlock()
        guard var bytes = try? data() else { return nil }
        if WebFont.isWebFont(bytes) {
            guard let sfnt = WebFont.sfnt(bytes) else { return nil }
            bytes = sfnt
        }
        guard let face = try? FontFace(source: .memory(name: name, data: bytes, index: 0)) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if let existing = faces[key] { return existing }
        faces[key] = face
        return face
    }

    /// Loads a face once per file.
    public func face(file path: String, index: Int = 0, bold: Bool = false, italic: Bool = false) throws -> FontFace {
        try cached(FontFace.Source.file(path: path, index: index).key, in: \.faces) {
            try FontFace(source: .file(path: path, index: index), isBold: bold, isItalic: italic)
        }
    }

    /// The value kept under `key` in one of the caches, made outside the lock when missing (making
    /// one takes milliseconds); when two threads make it at once, the first kept is everyone's.
    private func cached<Key: Hashable, Value>(
        _ key: Key, in cache: ReferenceWritableKeyPath<FontCollection, [Key: Value]>, make: () throws -> Value
    ) rethrows -> Value {
        lock.lock()
        if let known = self[keyPath: cache][key] {
            lock.unlock()
            return known
        }
        lock.unlock()
        let made = try make()
        lock.lock()
        defer { lock.unlock() }
        if let existing = self[keyPath: cache][key] { return existing }
        self[keyPath: cache][key] = made
        return made
    }

    /// The generic family a request ends up in (for bundled faces and fallback preferences).
    public func generic(for families: [String]) -> String {
        for family in families {
            if let generic = FontCollection.aliases[family.lowercased()] { return generic }
        }
        return "serif"
    }

    /// The primary face for a request: a matching book font, else the bundled face of the first
    /// family we know (unknown names are skipped), else the bundled serif.
    public func primaryFace(for request: FontRequest, bookFonts books: [BookFont] = []) -> FontFace {
        // Without book fonts no family can match one: straight to the bundled face.
        guard !books.isEmpty else { return bundledFace(generic: generic(for: request.families), bold: request.bold, italic: request.italic) }
        for family in request.families {
            let name = family.lowercased()
            let matches = books.filter { $0.family.lowercased() == name }
            if !matches.isEmpty {
                let best = matches.min { score($0, request) < score($1, request) }!
                return best.face
            }
            if FontCollection.aliases[name] != nil { break }
        }
        return bundledFace(generic: generic(for: request.families), bold: request.bold, italic: request.italic)
    }

    private func score(_ font: BookFont, _ request: FontRequest) -> Int {
        (font.bold == request.bold ? 0 : 2) + (font.italic == request.italic ? 0 : 1)
    }

    public func bundledFace(generic: String, bold: Bool, italic: Bool) -> FontFace {
        // Asked for every paragraph's strut and every style's primary face: kept by generic and
        // style, not looked up by the file's path each time.
        cached(BundledKey(generic: generic, bold: bold, italic: italic), in: \.bundledFaces) {
            let files = FontCollection.bundledFiles[generic] ?? FontCollection.bundledFiles["serif"]!
            let file = bold ? (italic ? files.boldItalic : files.bold) : (italic ? files.italic : files.regular)
            // The bundled files are checked at start-up; failing here means the install is broken.
            return try! face(file: fontsDirectory + "/" + file, bold: bold, italic: italic)
        }
    }

    private struct BundledKey: Hashable {
        var generic: String
        var bold: Bool
        var italic: Bool
    }

    /// A face covering `scalar` when the primary face does not: fontconfig's best match for the
    /// character, the language and the style, preferring Noto families. nil when nothing covers it.
    public func fallbackFace(for scalar: Unicode.Scalar, request: FontRequest) -> FontFace? {
        let generic = generic(for: request.families)
        let key = FallbackKey(query: FallbackPatternKey(generic: generic, request: request), scalar: scalar.value)
        return cached(key, in: \.fallbackCache) { queryFontconfig(scalar: scalar, generic: generic, request: request) }
    }

    /// fontconfig's configuration (about 3 ms: dozens of XML files and caches), loaded once:
    /// workers asking for a fallback at the same moment would otherwise each parse it, and
    /// fontconfig keeps only the first.
    private static let fontconfigLoaded: Bool = FcInit() != 0

    /// The system's and the application's fonts (the sets FcFontSort sorts) that have `codepoint`,
    /// in their order, as a set holding a reference to each.
    private static func fontsCovering(_ codepoint: UInt32) -> UnsafeMutablePointer<FcFontSet>? {
        guard let covering = FcFontSetCreate() else { return nil }
        for which in [FcSetSystem, FcSetApplication] {
            guard let fonts = FcConfigGetFonts(nil, which) else { continue }
            for index in 0..<Int(fonts.pointee.nfont) {
                guard let font = fonts.pointee.fonts[index] else { continue }
                var charset: OpaquePointer?
                guard FcPatternGetCharSet(font, FC_CHARSET, 0, &charset) == FcResultMatch, FcCharSetHasChar(charset, codepoint) != 0 else {
                    continue
                }
                FcPatternReference(font)
                if FcFontSetAdd(covering, font) == 0 { FcPatternDestroy(font) }
            }
        }
        return covering
    }

    /// The fontconfig pattern of a fallback query: the generic family's preferred families, the
    /// character (when given: FcFontSort's query), the language and the style, with the
    /// configuration's substitutions.
    private static func fallbackPattern(scalar: Unicode.Scalar?, generic: String, request: FontRequest) -> OpaquePointer? {
        guard fontconfigLoaded, let pattern = FcPatternCreate() else { return nil }
        let region = cjkRegion(request.language)
        for family in fallbackFamilies[generic] ?? [] {
            FcPatternAddString(pattern, FC_FAMILY, family.hasSuffix(" CJK JP") ? String(family.dropLast(2)) + region : family)
        }
        FcPatternAddString(pattern, FC_FAMILY, generic)
        if let scalar {
            let charset = FcCharSetCreate()
            FcCharSetAddChar(charset, scalar.value)
            FcPatternAddCharSet(pattern, FC_CHARSET, charset)
            FcCharSetDestroy(charset)
        }
        if let language = request.language, !language.isEmpty {
            FcPatternAddString(pattern, FC_LANG, language.lowercased())
        }
        FcPatternAddInteger(pattern, FC_WEIGHT, request.bold ? Int32(FC_WEIGHT_BOLD) : Int32(FC_WEIGHT_REGULAR))
        FcPatternAddInteger(pattern, FC_SLANT, request.italic ? Int32(FC_SLANT_ITALIC) : Int32(FC_SLANT_ROMAN))
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        return pattern
    }

    /// The substituted query of `fallbackPattern` without a character, made once per family, style
    /// and language. Sorting fonts that all have the character, the character set in the query
    /// scores them alike, and no configuration rule tests a query's character set, so the order is
    /// the one the query with the character gets (the test compares the two).
    private func fallbackPattern(generic: String, request: FontRequest) -> OpaquePointer? {
        let key = FallbackPatternKey(generic: generic, request: request)
        lock.lock()
        if let known = fallbackPatterns[key] {
            lock.unlock()
            return known
        }
        lock.unlock()
        guard let made = Self.fallbackPattern(scalar: nil, generic: generic, request: request) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if let known = fallbackPatterns[key] {
            FcPatternDestroy(made)
            return known
        }
        fallbackPatterns[key] = made
        return made
    }

    /// The fonts that have the character, best first, as FcFontSort (trimmed) lists them, handed
    /// to `visit` until it returns true. Sorted from those fonts alone: the charset outranks every
    /// other criterion a request sets, so they head FcFontSort's list in the order they keep among
    /// themselves, and scoring only them (not every font of the system for each new character,
    /// which was most of a Chinese book's layout) gives the same fonts in the same order.
    /// FcFontSort's trimming (a font that adds no character to those before it is left out) is
    /// done here as it does it, and only as far as the caller looks: the first font, nearly always
    /// the one taken, is never trimmed, and merging CJK fonts' charsets cost more than the sort.
    /// `fromAllFonts` asks FcFontSort itself, for the test that holds the two to the same answer.
    private static func visitFallbacks(
        _ pattern: OpaquePointer, scalar: Unicode.Scalar, fromAllFonts: Bool = false, _ visit: (_ file: String, _ index: Int, _ weight: Int32) -> Bool
    ) {
        var result = FcResultNoMatch
        let set: UnsafeMutablePointer<FcFontSet>?
        if fromAllFonts {
            set = FcFontSort(nil, pattern, 1, nil, &result)
        } else {
            guard let covering = fontsCovering(scalar.value) else { return }
            defer { FcFontSetDestroy(covering) }
            var sets: [UnsafeMutablePointer<FcFontSet>?] = [covering]
            set = FcFontSetSort(nil, &sets, 1, pattern, 0, nil, &result)
        }
        guard let set else { return }
        defer { FcFontSetDestroy(set) }
        /// The characters of the fonts before (FcFontSort merges every font's, kept or not), made
        /// from the first font's when the second is looked at.
        var first: OpaquePointer? = nil
        var union: OpaquePointer? = nil
        defer { if let union { FcCharSetDestroy(union) } }
        for index in 0..<Int(set.pointee.nfont) {
            guard let font = set.pointee.fonts[index] else { continue }
            var fontCharset: OpaquePointer?
            guard FcPatternGetCharSet(font, FC_CHARSET, 0, &fontCharset) == FcResultMatch else { continue }
            if !fromAllFonts {
                if index == 0 {
                    first = fontCharset
                } else {
                    if union == nil {
                        union = FcCharSetCreate()
                        FcCharSetMerge(union, first, nil)
                    }
                    var adds: FcBool = 0
                    FcCharSetMerge(union, fontCharset, &adds)
                    if adds == 0 { continue }
                }
            }
            guard FcCharSetHasChar(fontCharset, scalar.value) != 0 else { continue }
            var file: UnsafeMutablePointer<FcChar8>?
            guard FcPatternGetString(font, FC_FILE, 0, &file) == FcResultMatch, let file else { continue }
            var faceIndex: Int32 = 0
            FcPatternGetInteger(font, FC_INDEX, 0, &faceIndex)
            var weight: Int32 = 0
            FcPatternGetInteger(font, FC_WEIGHT, 0, &weight)
            if visit(String(cString: file), Int(faceIndex), weight) { return }
        }
    }

    /// The font files (path#index), best first, that a fallback for `scalar` is chosen from: from
    /// the fonts that have it, or from FcFontSort over every font (`fromAllFonts`, for the test).
    func fallbackFiles(for scalar: Unicode.Scalar, generic: String, request: FontRequest, fromAllFonts: Bool) -> [String] {
        var files: [String] = []
        let visit: (String, Int, Int32) -> Bool = { file, index, _ in
            files.append("\(file)#\(index)")
            return false
        }
        if fromAllFonts {
            guard let pattern = Self.fallbackPattern(scalar: scalar, generic: generic, request: request) else { return [] }
            defer { FcPatternDestroy(pattern) }
            Self.visitFallbacks(pattern, scalar: scalar, fromAllFonts: true, visit)
        } else if let pattern = fallbackPattern(generic: generic, request: request) {
            Self.visitFallbacks(pattern, scalar: scalar, visit)
        }
        return files
    }

    private func queryFontconfig(scalar: Unicode.Scalar, generic: String, request: FontRequest) -> FontFace? {
        guard let pattern = fallbackPattern(generic: generic, request: request) else { return nil }
        var found: FontFace? = nil
        Self.visitFallbacks(pattern, scalar: scalar) { file, index, weight in
            // Bitmap and Type 1 fonts cannot be shaped well; skip them.
            if file.hasSuffix(".pcf.gz") || file.hasSuffix(".pfb") { return false }
            if let face = try? face(file: file, index: index, bold: weight >= Int32(FC_WEIGHT_BOLD), italic: request.italic), face.covers(scalar) {
                found = face
                return true
            }
            return false
        }
        return found
    }
}
