extension String {
    /// Trims ASCII/XML whitespace (space, tab, CR, LF) from both ends.
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.isXMLWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.isXMLWhitespace })!
        return String(scalars[start...end])
    }

    /// Collapses runs of whitespace (including Unicode spaces such as NBSP in labels) to one space and trims.
    public func collapsingWhitespace() -> String {
        var result = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in unicodeScalars {
            if scalar.isXMLWhitespace || scalar.properties.isWhitespace {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Splits on XML whitespace, dropping empty tokens (for `properties`, `epub:type`, `rel`).
    public func whitespaceTokens() -> [String] {
        split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
    }
}

extension Unicode.Scalar {
    public var isXMLWhitespace: Bool { self == " " || self == "\t" || self == "\n" || self == "\r" }
}
