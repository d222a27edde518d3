extension String {
    /// Trims ASCII/XML whitespace (space, tab, CR, LF) from both ends.
    public func trimmingWhitespace() -> String { trimming { $0.isXMLWhitespace } }

    /// Trims every Unicode White_Space character (NBSP, ideographic space…) from both ends.
    public func trimmingUnicodeWhitespace() -> String { trimming { $0.properties.isWhitespace } }

    private func trimming(_ isSpace: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = scalars.lastIndex(where: { !isSpace($0) })!
        return String(scalars[start...end])
    }

    /// Padded with spaces, or cut, to exactly `length` characters (a column in plain-text reports).
    public func padded(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : self + String(repeating: " ", count: length - count)
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

    /// The UTF-16 length, counted on the UTF-8 bytes: `utf16.count` on non-ASCII text builds an
    /// index of breadcrumbs first, and the layout asks once for every text node.
    public var utf16Length: Int {
        let counted: Int? = utf8.withContiguousStorageIfAvailable { bytes in
            var count = 0
            var index = 0
            while index < bytes.count {
                if index + 8 <= bytes.count, UTF8Words.ascii(bytes, at: index) != nil {
                    count += 8
                    index += 8
                    continue
                }
                // One unit per scalar (every byte but continuation bytes); two for 4-byte scalars.
                let byte = bytes[index]
                if byte & 0xC0 != 0x80 { count += 1 }
                if byte >= 0xF0 { count += 1 }
                index += 1
            }
            return count
        }
        return counted ?? utf16.count
    }

    /// The UTF-16 code units, transcoded straight from the UTF-8 bytes into the array's storage
    /// (several times faster than `Array(utf16)`, which goes through a generic sequence copy).
    public var utf16Units: [UInt16] {
        let units: [UInt16]? = utf8.withContiguousStorageIfAvailable { bytes in
            // A String's bytes are valid UTF-8, and never fewer than its UTF-16 units.
            [UInt16](capacity: bytes.count) { buffer in String.transcode(bytes, into: buffer) }
        }
        return units ?? Array(utf16)
    }

    /// Appends the UTF-16 code units to `units` (see `utf16Units`).
    public func appendUTF16(to units: inout [UInt16]) {
        // Through a temporary buffer (on the stack when small), not an array made for each text.
        let appended: Void? = utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.isEmpty else { return }
            withUnsafeTemporaryAllocation(of: UInt16.self, capacity: bytes.count) { buffer in
                let count = String.transcode(bytes, into: buffer)
                units.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
            }
        }
        if appended == nil { units.append(contentsOf: utf16) }
    }

    private static func transcode(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt16>) -> Int {
        var index = 0
        var written = 0
        let end = bytes.count
        while index < end {
            // Eight ASCII bytes at a time (most of a book's text), widened together.
            while index + 8 <= end, let ascii = UTF8Words.ascii(bytes, at: index) {
                UnsafeMutableRawPointer(out.baseAddress! + written).storeBytes(of: SIMD8<UInt16>(truncatingIfNeeded: ascii), as: SIMD8<UInt16>.self)
                index += 8
                written += 8
            }
            guard index < end else { break }
            let lead = UInt32(bytes[index])
            if lead < 0x80 {
                out[written] = UInt16(lead)
                written += 1
                index += 1
            } else if lead < 0xE0 {
                out[written] = UInt16((lead & 0x1F) << 6 | UInt32(bytes[index + 1]) & 0x3F)
                written += 1
                index += 2
            } else if lead < 0xF0 {
                out[written] = UInt16((lead & 0x0F) << 12 | (UInt32(bytes[index + 1]) & 0x3F) << 6 | UInt32(bytes[index + 2]) & 0x3F)
                written += 1
                index += 3
            } else {
                let scalar =
                    (lead & 0x07) << 18 | (UInt32(bytes[index + 1]) & 0x3F) << 12 | (UInt32(bytes[index + 2]) & 0x3F) << 6
                    | UInt32(bytes[index + 3]) & 0x3F
                out[written] = UInt16(0xD800 + ((scalar - 0x10000) >> 10))
                out[written + 1] = UInt16(0xDC00 + ((scalar - 0x10000) & 0x3FF))
                written += 2
                index += 4
            }
        }
        return written
    }

    /// `String(decoding: units, as: UTF16.self).collapsingWhitespace()`, several times faster: the
    /// standard library decodes UTF-16 through a slow generic path, so this writes UTF-8 directly.
    /// Every White_Space character is in the BMP, so whitespace is tested on single units; an
    /// unpaired surrogate becomes U+FFFD, as in the standard library.
    public static func collapsingWhitespace<Units: Collection<UInt16>>(utf16 units: Units) -> String {
        // One call through the collection's witness table, not one per unit (unspecialized across
        // modules, iterating cost a map's text excerpts 600 instructions a unit).
        if let collapsed = units.withContiguousStorageIfAvailable({ collapsingWhitespace(buffer: $0) }) { return collapsed }
        return Array(units).withUnsafeBufferPointer { collapsingWhitespace(buffer: $0) }
    }

    private static func collapsingWhitespace(buffer units: UnsafeBufferPointer<UInt16>) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(units.count)
        var pendingSpace = false
        var lead: UInt32? = nil
        func append(_ scalar: UInt32) {
            if pendingSpace { bytes.append(0x20) }
            pendingSpace = false
            switch scalar {
            case 0..<0x80: bytes.append(UInt8(scalar))
            case 0x80..<0x800: bytes.append(contentsOf: [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)])
            case 0x800..<0x10000:
                bytes.append(contentsOf: [UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)])
            default:
                bytes.append(contentsOf: [
                    UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F), UInt8(0x80 | scalar >> 6 & 0x3F),
                    UInt8(0x80 | scalar & 0x3F),
                ])
            }
        }
        for unit in units {
            let value = UInt32(unit)
            if let high = lead {
                lead = nil
                if value & 0xFC00 == 0xDC00 {
                    append(0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00))
                    continue
                }
                append(0xFFFD)
            }
            if value & 0xFC00 == 0xD800 {
                lead = value
            } else if value & 0xFC00 == 0xDC00 {
                append(0xFFFD)
            } else if isWhiteSpace(value) {
                pendingSpace = !bytes.isEmpty
            } else {
                append(value)
            }
        }
        if lead != nil { append(0xFFFD) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Unicode's White_Space property (a superset of XML whitespace), for a BMP code point.
    static func isWhiteSpace(_ value: UInt32) -> Bool {
        switch value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// Splits on XML whitespace, dropping empty tokens (for `properties`, `epub:type`, `rel`).
    public func whitespaceTokens() -> [String] {
        split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
    }

    /// Whether `token` is one of `whitespaceTokens()`, found on the UTF-8 bytes without making the
    /// tokens (checks that run on every element of every chapter).
    public func containsWhitespaceToken(_ token: String) -> Bool {
        let needle = Array(token.utf8)
        guard !needle.isEmpty, utf8.count >= needle.count else { return false }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var text = self
        return text.withUTF8 { bytes in
            var start = 0
            while start < bytes.count {
                while start < bytes.count && isSpace(bytes[start]) { start += 1 }
                var end = start
                while end < bytes.count && !isSpace(bytes[end]) { end += 1 }
                if end - start == needle.count && (0..<needle.count).allSatisfy({ bytes[start + $0] == needle[$0] }) { return true }
                start = end
            }
            return false
        }
    }
}

extension Unicode.Scalar {
    public var isXMLWhitespace: Bool { self == " " || self == "\t" || self == "\n" || self == "\r" }
}

/// Percent-encoding in hrefs (`%20`) and IRIs.
public enum PercentEncoding {
    /// Decodes %XX sequences as UTF-8. A malformed sequence, or one that decodes to invalid UTF-8,
    /// is kept literally (some archives have a real `%` in a file name).
    public static func decode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        return String(decoding: decode(Array(text.utf8)[...]), as: UTF8.self)
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "%")) else { return Array(bytes) }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(validating: result, as: UTF8.self) != nil ? result : Array(bytes)
    }

    /// A path as a URL path: UTF-8, `%XX` (upper-case hex) for every byte outside the unreserved
    /// characters, the sub-delimiters, `:`, `@` and `/` (RFC 3986 pchar), as Readium's
    /// `RelativeURL(path:)` writes hrefs.
    public static func encodePath(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where "-._~!$&'()*+,;=:@/".utf8.contains(byte):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return result
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

/// Reading UTF-8 a machine word at a time: a book's text and markup are mostly ASCII.
public enum UTF8Words {
    /// The eight bytes at `index` (at most `count - 8`) when all are ASCII, else nil.
    @inline(__always)
    public static func ascii(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> SIMD8<UInt8>? {
        let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
        guard word & 0x8080_8080_8080_8080 == 0 else { return nil }
        return unsafeBitCast(word, to: SIMD8<UInt8>.self)
    }
}
