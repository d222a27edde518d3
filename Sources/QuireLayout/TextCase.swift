import QuireText

/// text-transform through ICU's full case mappings.
enum TextCase {
    static func upper(_ units: [UInt16], language: String?) -> [UInt16] { UnicodeInfo.uppercased(units, language: language) }
    static func lower(_ units: [UInt16], language: String?) -> [UInt16] { UnicodeInfo.lowercased(units, language: language) }
}
