import QuireCore

/// A reference from inside a book to a resource in its archive: the archive path (decoded, normalised,
/// clamped to the root) and the fragment, if any. External URLs are not resolved.
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
        isExternal(Array(href.utf8)[...])
    }

    static func isExternal(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isASCIILetter(first) else { return false }
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: ":") { return true }
            guard isASCIILetter(byte) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            else { return false }
        }
        return false
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// Directory part of an archive path, with trailing slash ("" at the root).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    /// Resolves `href` (a URL, possibly percent-encoded or an IRI, relative to the document at
    /// `base`) to an archive path. Returns nil for external URLs; a `..` that would climb above
    /// the root is clamped to it, as URL parsing does.
    /// An empty path part (`#note`) refers to the base document itself.
    public static func resolve(_ href: String, relativeTo base: String) -> ResourceRef? {
        var bytes = Array(href.utf8)[...]
        while let first = bytes.first, isSpace(first) { bytes.removeFirst() }
        while let last = bytes.last, isSpace(last) { bytes.removeLast() }
        guard !isExternal(bytes) else { return nil }
        var fragment: String?
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) {
            fragment = String(decoding: PercentEncoding.decode(bytes[(hash + 1)...]), as: UTF8.self)
            bytes = bytes[..<hash]
        }
        if let query = bytes.firstIndex(of: UInt8(ascii: "?")) { bytes = bytes[..<query] }
        if bytes.isEmpty { return ResourceRef(path: base, fragment: fragment) }
        var joined: [UInt8]
        if bytes.first == UInt8(ascii: "/") {
            joined = []
        } else {
            joined = Array(base.utf8)
            if let slash = joined.lastIndex(of: UInt8(ascii: "/")) {
                joined.removeSubrange((slash + 1)...)
            } else {
                joined.removeAll()
            }
        }
        joined.append(contentsOf: PercentEncoding.decode(bytes))
        return ResourceRef(path: normalise(joined), fragment: fragment)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Removes `.` and `..` segments; a `..` at the root is dropped.
    public static func normalise(_ path: String) -> String {
        normalise(Array(path.utf8))
    }

    static func normalise(_ path: [UInt8]) -> String {
        var segments: [ArraySlice<UInt8>] = []
        let parts = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, segment) in parts.enumerated() {
            if segment.elementsEqual([UInt8(ascii: ".")]) { continue }
            if segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                // URL resolution stops at the root: `../` there is dropped (OCF resolves against
                // the container's root URL), so the path never leaves the archive.
                if !segments.isEmpty { segments.removeLast() }
                continue
            }
            if segment.isEmpty && index != parts.count - 1 { continue }
            segments.append(segment)
        }
        var result: [UInt8] = []
        result.reserveCapacity(path.count)
        for (index, segment) in segments.enumerated() {
            if index > 0 { result.append(UInt8(ascii: "/")) }
            result.append(contentsOf: segment)
        }
        return String(validating: result, as: UTF8.self) ?? String(decoding: result, as: UTF8.self)
    }
}
