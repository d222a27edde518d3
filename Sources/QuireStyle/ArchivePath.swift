// Resolving hrefs inside the book (QuireStyle cannot import QuireContainer).

enum ArchivePath {
    /// `href` resolved against the archive path of the document or stylesheet that contains it.
    /// nil for external URLs (`http:`, `data:` …) and paths escaping the archive root.
    static func resolve(_ href: String, against base: String) -> String? {
        var reference = Substring(href.trimmingCharacters())
        if let hash = reference.firstIndex(of: "#") { reference = reference[..<hash] }
        if let query = reference.firstIndex(of: "?") { reference = reference[..<query] }
        if reference.isEmpty { return nil }
        if let colon = reference.firstIndex(of: ":"), !reference[..<colon].contains("/") { return nil }
        let decoded = percentDecode(String(reference))
        var parts: [Substring] = []
        if !decoded.hasPrefix("/") {
            parts = base.split(separator: "/", omittingEmptySubsequences: false)
            parts.removeLast()  // the file name
        }
        for segment in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." { continue }
            if segment == ".." {
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
                continue
            }
            parts.append(segment)
        }
        let result = parts.filter { !$0.isEmpty }.joined(separator: "/")
        return result.isEmpty ? nil : result
    }

    static func percentDecode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
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
