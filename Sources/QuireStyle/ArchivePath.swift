// Resolving hrefs inside the book (QuireStyle cannot import QuireContainer).

import QuireCore

enum ArchivePath {
    /// `href` resolved against the archive path of the document or stylesheet that contains it.
    /// nil for external URLs (`http:`, `data:` …) and paths escaping the archive root.
    static func resolve(_ href: String, against base: String) -> String? {
        // On UTF-8 bytes: splitting Strings by Character cost microseconds per stylesheet link.
        let slash = UInt8(ascii: "/")
        var reference = Array(href.trimmingCharacters().utf8)[...]
        if let hash = reference.firstIndex(of: UInt8(ascii: "#")) { reference = reference[..<hash] }
        if let query = reference.firstIndex(of: UInt8(ascii: "?")) { reference = reference[..<query] }
        if reference.isEmpty { return nil }
        if let colon = reference.firstIndex(of: UInt8(ascii: ":")), !reference[..<colon].contains(slash) { return nil }
        let decoded = PercentEncoding.decode(reference)
        var parts: [ArraySlice<UInt8>] = []
        if decoded.first != slash {
            parts = Array(base.utf8)[...].split(separator: slash, omittingEmptySubsequences: false)
            parts.removeLast()  // the file name
        }
        for segment in decoded.split(separator: slash, omittingEmptySubsequences: true) {
            if segment.elementsEqual([UInt8(ascii: ".")]) { continue }
            if segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
                continue
            }
            parts.append(segment)
        }
        let result = Array(parts.filter { !$0.isEmpty }.joined(separator: [slash]))
        return result.isEmpty ? nil : String(decoding: result, as: UTF8.self)
    }
}

extension String {
    func trimmingCharacters() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start...end])
    }
}
