import QuireCore

/// The intrinsic size of an SVG from its root start tag alone. A bounded scan of the first bytes:
/// far cheaper than parsing megabytes of path data, and nothing (entities, DTDs) is ever expanded.
enum SVGHeader {
    /// The root tag must start within this many bytes (XML declaration, comments, doctype before it).
    static let scanLimit = 256 << 10

    static func looksLikeMarkup(_ b: [UInt8]) -> Bool {
        var i = b.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while i < min(b.count, 1024), isSpace(b[i]) { i += 1 }
        return i < b.count && b[i] == UInt8(ascii: "<")
    }

    static func measure(_ bytes: [UInt8]) throws -> ImageInfo {
        let attributes = try rootAttributes(bytes)
        let viewBox = attributes["viewBox"].flatMap(parseViewBox)
        var width = attributes["width"].flatMap(parseLength)
        var height = attributes["height"].flatMap(parseLength)
        let intrinsic = width != nil && height != nil
        if let box = viewBox {
            if width == nil && height == nil {
                width = box.width
                height = box.height
            } else if width == nil, let h = height {
                width = h * box.width / box.height
            } else if height == nil, let w = width {
                height = w * box.height / box.width
            }
        }
        // CSS's default size for a replaced element with no intrinsic dimensions.
        let w = width ?? 300, h = height ?? 150
        func pixels(_ v: Double) -> Int { v.isFinite ? max(1, Int(min(v, 1e9).rounded())) : 1 }
        var info = ImageInfo(format: .svg, pixelWidth: pixels(w), pixelHeight: pixels(h))
        info.hasIntrinsicSize = intrinsic
        return info
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    /// The attributes of the first element, which must be `svg` (any prefix).
    static func rootAttributes(_ bytes: [UInt8]) throws -> [String: String] {
        let end = min(bytes.count, scanLimit)
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func at(_ text: String) -> Bool {
            let utf8 = Array(text.utf8)
            return i + utf8.count <= end && bytes[i..<i + utf8.count].elementsEqual(utf8)
        }
        func skip(past text: String) throws {
            let utf8 = Array(text.utf8)
            while i + utf8.count <= end {
                if bytes[i..<i + utf8.count].elementsEqual(utf8) {
                    i += utf8.count
                    return
                }
                i += 1
            }
            throw truncated()
        }
        func truncated() -> QuireError {
            end < bytes.count
                ? QuireError.invalidImage("SVG: no <svg> start tag in the first \(scanLimit >> 10) KB")
                : QuireError.invalidImage("SVG: truncated before the end of the <svg> start tag")
        }
        while true {
            while i < end, isSpace(bytes[i]) { i += 1 }
            guard i < end else { throw truncated() }
            guard bytes[i] == UInt8(ascii: "<") else { throw QuireError.invalidImage("SVG: text before the root element") }
            if at("<?") {
                try skip(past: "?>")
            } else if at("<!--") {
                try skip(past: "-->")
            } else if at("<!") {
                // DOCTYPE, possibly with an internal subset in brackets; quoted strings may hold '>'.
                var depth = 0
                var quote: UInt8?
                i += 2
                while true {
                    guard i < end else { throw truncated() }
                    let c = bytes[i]
                    i += 1
                    if let q = quote {
                        if c == q { quote = nil }
                    } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                        quote = c
                    } else if c == UInt8(ascii: "[") {
                        depth += 1
                    } else if c == UInt8(ascii: "]") {
                        depth -= 1
                    } else if c == UInt8(ascii: ">") && depth <= 0 {
                        break
                    }
                }
            } else {
                break
            }
        }
        // The root start tag.
        i += 1
        let nameStart = i
        while i < end, !isSpace(bytes[i]), bytes[i] != UInt8(ascii: ">"), bytes[i] != UInt8(ascii: "/") { i += 1 }
        guard i < end else { throw truncated() }
        let name = String(decoding: bytes[nameStart..<i], as: UTF8.self)
        let localName = name.split(separator: ":").last.map(String.init) ?? name
        guard localName == "svg" else {
            throw QuireError.invalidImage("SVG: the root element is <\(name)>, not <svg>")
        }
        var attributes: [String: String] = [:]
        while true {
            while i < end, isSpace(bytes[i]) { i += 1 }
            guard i < end else { throw truncated() }
            if bytes[i] == UInt8(ascii: ">") || bytes[i] == UInt8(ascii: "/") { return attributes }
            let attributeStart = i
            while i < end, !isSpace(bytes[i]), bytes[i] != UInt8(ascii: "="), bytes[i] != UInt8(ascii: ">") { i += 1 }
            let attribute = String(decoding: bytes[attributeStart..<i], as: UTF8.self)
            while i < end, isSpace(bytes[i]) { i += 1 }
            guard i < end else { throw truncated() }
            guard bytes[i] == UInt8(ascii: "=") else { throw QuireError.invalidImage("SVG: malformed attribute \(attribute) on <svg>") }
            i += 1
            while i < end, isSpace(bytes[i]) { i += 1 }
            guard i < end else { throw truncated() }
            let quote = bytes[i]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw QuireError.invalidImage("SVG: unquoted attribute \(attribute) on <svg>")
            }
            i += 1
            let valueStart = i
            while i < end, bytes[i] != quote { i += 1 }
            guard i < end else { throw truncated() }
            attributes[attribute] = String(decoding: bytes[valueStart..<i], as: UTF8.self)
            i += 1
        }
    }

    /// A length in CSS px; nil for percentages, entity references, zero, negative or malformed values.
    static func parseLength(_ text: String) -> Double? {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.contains("&") else { return nil }
        let (number, unit) = splitNumber(trimmed)
        guard let value = number, value > 0, value.isFinite else { return nil }
        let perUnit: Double
        switch unit.lowercased() {
        case "", "px": perUnit = 1
        case "pt": perUnit = 96.0 / 72
        case "pc": perUnit = 16
        case "mm": perUnit = 96 / 25.4
        case "cm": perUnit = 96 / 2.54
        case "in": perUnit = 96
        case "q": perUnit = 96 / 101.6
        case "em": perUnit = 16  // the initial font size: the image has no context yet
        case "ex": perUnit = 8
        default: return nil  // %, and anything unknown, falls back to viewBox
        }
        return value * perUnit
    }

    static func splitNumber(_ text: String) -> (Double?, String) {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        if i < scalars.count, scalars[i] == "+" || scalars[i] == "-" { i += 1 }
        while i < scalars.count, ("0"..."9").contains(scalars[i]) || scalars[i] == "." { i += 1 }
        if i < scalars.count, scalars[i] == "e" || scalars[i] == "E" {
            // An exponent only if digits follow ("1em" is a unit, "1e2" is a number).
            var j = i + 1
            if j < scalars.count, scalars[j] == "+" || scalars[j] == "-" { j += 1 }
            if j < scalars.count, ("0"..."9").contains(scalars[j]) {
                while j < scalars.count, ("0"..."9").contains(scalars[j]) { j += 1 }
                i = j
            }
        }
        var number = String.UnicodeScalarView()
        number.append(contentsOf: scalars[0..<i])
        var unit = String.UnicodeScalarView()
        unit.append(contentsOf: scalars[i...])
        return (Double(String(number)), String(unit).trimmingWhitespace())
    }

    static func parseViewBox(_ text: String) -> (width: Double, height: Double)? {
        let parts = text.split { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard parts.count == 4, let w = Double(parts[2]), let h = Double(parts[3]), w > 0, h > 0, w.isFinite, h.isFinite
        else { return nil }
        return (w, h)
    }
}
