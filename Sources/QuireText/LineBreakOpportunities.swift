import CQuireICU

/// UAX #14 line-break opportunities from ICU (correct for CJK, emoji sequences and URLs).
public enum LineBreakOpportunities {
    public struct Break: Hashable, Sendable {
        /// Offset in UTF-16 units: a line may end before this unit.
        public var offset: Int
        /// A forced break (after a newline in preformatted text, for instance).
        public var mandatory: Bool
    }

    /// The ICU locale for a BCP 47 tag: ICU tailors line breaking for Japanese, Chinese and Korean.
    public static func locale(for language: String?) -> String {
        guard let language else { return "" }
        return String(language.split(separator: "-").first ?? "").lowercased()
    }

    /// CSS `line-break` strictness, as ICU's `lb` locale keyword.
    public enum Strictness: String, Sendable, CaseIterable {
        case standard = "", loose, normal, strict
        public var ordinal: Int { Self.allCases.firstIndex(of: self)! }
    }
    /// CSS `word-break`, as ICU's `lw` locale keyword.
    public enum WordRule: String, Sendable, CaseIterable {
        case normal = "", breakAll = "breakall", keepAll = "keepall"
        public var ordinal: Int { Self.allCases.firstIndex(of: self)! }
    }

    /// The ICU locale with its `lb` and `lw` keywords.
    public static func locale(for language: String?, strictness: Strictness, words: WordRule) -> String {
        var locale = locale(for: language)
        let keywords = [("lb", strictness.rawValue), ("lw", words.rawValue)].filter { !$0.1.isEmpty }.map { "\($0.0)=\($0.1)" }
        if !keywords.isEmpty { locale += "@" + keywords.joined(separator: ";") }
        return locale
    }

    /// Marks the offsets a line may end before in `breakable` (length text.count + 1), for an ICU
    /// locale from `locale(for:strictness:words:)`, with `words` applied by hand (ICU ignores the
    /// `lw` keyword); the layout's hot path, with no array of breaks.
    public static func mark(in text: [UInt16], locale: String, words: WordRule = .normal, breakable: inout [Bool]) {
        precondition(breakable.count == text.count + 1)
        guard !text.isEmpty else { return }
        let count = text.withUnsafeBufferPointer { units in
            breakable.withUnsafeMutableBytes { flags in
                let bytes = flags.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let found = quire_line_break_flags(units.baseAddress, Int32(units.count), locale, bytes)
                if found > 0 && words != .normal { quire_apply_word_break(units.baseAddress, Int32(units.count), Int32(words.ordinal), bytes) }
                return found
            }
        }
        if count <= 0 { breakable[text.count] = true }
    }

    public static func find(in text: [UInt16], language: String?, strictness: Strictness = .standard, words: WordRule = .normal) -> [Break] {
        guard !text.isEmpty else { return [] }
        var offsets = [Int32](repeating: 0, count: text.count + 1)
        var mandatory = [UInt8](repeating: 0, count: text.count + 1)
        let locale = locale(for: language, strictness: strictness, words: words)
        let count = text.withUnsafeBufferPointer { units in
            quire_line_breaks(units.baseAddress, Int32(units.count), locale, &offsets, &mandatory, Int32(text.count + 1))
        }
        guard count > 0 else { return [Break(offset: text.count, mandatory: false)] }
        return (0..<Int(count)).map { Break(offset: Int(offsets[$0]), mandatory: mandatory[$0] != 0) }
    }
}

/// Unicode properties ICU answers for us.
public enum UnicodeInfo {
    public static func script(of scalar: Unicode.Scalar) -> Int32 { quire_script(scalar.value) }
    public static let commonScript: Int32 = 0
    public static let inheritedScript: Int32 = 1

    public static func isDefaultIgnorable(_ scalar: Unicode.Scalar) -> Bool { quire_is_default_ignorable(scalar.value) != 0 }

    /// Whether vertical text sets the character upright (UAX #50: U, Tu and Tr, whose vertical
    /// forms the font's `vert` feature gives) rather than turned on its side with the line (R).
    public static func isUprightInVerticalText(_ scalar: Unicode.Scalar) -> Bool { quire_vertical_orientation(scalar.value) != 0 }

    public static func uppercased(_ text: [UInt16], language: String?) -> [UInt16] {
        caseMap(text, language: language, upper: true)
    }

    public static func lowercased(_ text: [UInt16], language: String?) -> [UInt16] {
        caseMap(text, language: language, upper: false)
    }

    private static func caseMap(_ text: [UInt16], language: String?, upper: Bool) -> [UInt16] {
        var output = [UInt16](repeating: 0, count: text.count * 3 + 4)
        let locale = LineBreakOpportunities.locale(for: language)
        let count = text.withUnsafeBufferPointer { source in
            upper
                ? quire_to_upper(source.baseAddress, Int32(source.count), &output, Int32(output.count), locale)
                : quire_to_lower(source.baseAddress, Int32(source.count), &output, Int32(output.count), locale)
        }
        return count < 0 ? text : Array(output.prefix(Int(count)))
    }
}
