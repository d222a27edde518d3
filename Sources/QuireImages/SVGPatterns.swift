/// A workaround for librsvg 2.54 (Debian 12), which draws nothing for a `<pattern>` whose
/// `viewBox` is fitted to its tile with a centred or end alignment (`xMid…`/`xMax…`/`…YMid`/
/// `…YMax`, and so the initial `xMidYMid meet`) when the tile's shape differs from the viewBox's.
/// Aligned at the tile's start instead, the pattern is drawn at the same scale and period; only
/// its place inside each tile moves, by at most the tile's slack. `none` and start-aligned
/// patterns are left as they are. Works on the bytes (UTF-8 and its ASCII subsets).
enum SVGPatterns {
    static func startAligned(_ bytes: [UInt8]) -> [UInt8] {
        let pattern = Array("pattern".utf8), viewBox = Array("viewBox".utf8)
        var result: [UInt8] = []
        var copied = 0
        var from = 0
        while let open = find(pattern, in: bytes, from: from, to: bytes.count) {
            from = open + pattern.count
            // A start tag: `<pattern` or `<prefix:pattern`, then white space.
            guard open > 0, bytes[open - 1] == UInt8(ascii: "<") || bytes[open - 1] == UInt8(ascii: ":"),
                from < bytes.count, isSpace(bytes[from]),
                let close = bytes[from...].firstIndex(of: UInt8(ascii: ">")),
                find(viewBox, in: bytes, from: from, to: close) != nil,
                let fixed = startAlignedTag(Array(bytes[from..<close]))
            else { continue }
            result += bytes[copied..<from]
            result += fixed
            copied = close
            from = close
        }
        guard copied > 0 else { return bytes }
        return result + bytes[copied...]
    }

    /// A tag's attributes with its alignment at the start, or nil when that changes nothing.
    static func startAlignedTag(_ attributes: [UInt8]) -> [UInt8]? {
        let name = Array("preserveAspectRatio".utf8)
        guard let at = find(name, in: attributes, from: 0, to: attributes.count) else {
            let added = Array(" preserveAspectRatio=\"xMinYMin meet\"".utf8)
            if attributes.last == UInt8(ascii: "/") { return attributes.dropLast() + added + [UInt8(ascii: "/")] }
            return attributes + added
        }
        guard let quote = attributes[(at + name.count)...].firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") }),
            let end = attributes[(quote + 1)...].firstIndex(of: attributes[quote])
        else { return nil }
        let words = attributes[(quote + 1)..<end].split(whereSeparator: isSpace).map { String(decoding: $0, as: UTF8.self) }
        guard let align = words.first, align != "none", align != "xMinYMin" else { return nil }
        let fit = words.count > 1 ? words[1] : "meet"
        return Array(attributes[...quote]) + Array("xMinYMin \(fit)".utf8) + Array(attributes[end...])
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int, to end: Int) -> Int? {
        guard !needle.isEmpty, end - from >= needle.count else { return nil }
        var index = from
        while index + needle.count <= end {
            if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
