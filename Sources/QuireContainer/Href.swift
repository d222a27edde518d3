import QuireCore

/// A reference from inside a book to a resource in its archive: the archive path (decoded, normalised,
/// never escaping the root) and the fragment, if any. External URLs are not resolved.
public struct ResourceRef: Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var fragment: String?

    public init(path: String, fragment: String? = nil) {
        self.path = path
        self.fragment = fragment
    }

    public var description: String { fragment.map { "\(path)#\($0)" } ?? path }
}

public enum Href {
    /// True for `http:`, `mailto:`, `data:` and other URLs with a scheme.
    public static func isExternal(_ href: String) -> Bool {
        guard let colon = href.firstIndex(of: ":") else { return false }
        let scheme = href[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// Directory part of an archive path, with trailing slash ("" at the root).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    /// Resolves `href` (a URL, possibly percent-encoded or an IRI, relative to the document at
    /// `base`) to an archive path. Returns nil for external URLs and for paths above the root.
    /// An empty path part (`#note`) refers to the base document itself.
    public static func resolve(_ href: String, relativeTo base: String) -> ResourceRef? {
        let trimmed = href.trimmingWhitespace()
        guard !isExternal(trimmed) else { return nil }
        var pathPart = Substring(trimmed)
        var fragment: String?
        if let hash = pathPart.firstIndex(of: "#") {
            fragment = percentDecode(String(pathPart[pathPart.index(after: hash)...]))
            pathPart = pathPart[..<hash]
        }
        if let query = pathPart.firstIndex(of: "?") { pathPart = pathPart[..<query] }
        let decoded = percentDecode(String(pathPart))
        if decoded.isEmpty { return ResourceRef(path: base, fragment: fragment) }
        let joined = decoded.hasPrefix("/") ? String(decoded.dropFirst()) : directory(of: base) + decoded
        guard let normalised = normalise(joined) else { return nil }
        return ResourceRef(path: normalised, fragment: fragment)
    }

    /// Removes `.` and `..` segments; nil when `..` would climb above the root.
    public static func normalise(_ path: String) -> String? {
        var segments: [Substring] = []
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in parts.enumerated() {
            switch segment {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { return nil }
                segments.removeLast()
            case "" where index != parts.count - 1: continue
            default: segments.append(segment)
            }
        }
        return segments.joined(separator: "/")
    }

    /// Decodes %XX sequences as UTF-8. A malformed sequence is kept literally (some archives have a
    /// real `%` in a file name).
    public static func percentDecode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
