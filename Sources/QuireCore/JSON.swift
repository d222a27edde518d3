/// A JSON value with ordered object keys, so documents are stable byte for byte and read in a
/// sensible order (Foundation's encoder can only sort keys alphabetically).
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public static func int(_ value: Int) -> JSON { .int(Int64(value)) }

    /// From Foundation's JSON objects (JSONSerialization results), keys sorted for stable output.
    public static func from(_ value: Any) -> JSON {
        switch value {
        case let string as String: return .string(string)
        case let dictionary as [String: Any]:
            return .object(dictionary.keys.sorted().map { ($0, from(dictionary[$0]!)) })
        case let array as [Any]: return .array(array.map(from))
        case let bool as Bool where String(describing: type(of: value)).contains("Bool"): return .bool(bool)
        case let int as Int: return .int(Int64(int))
        case let double as Double: return double.rounded() == double && abs(double) < 1e15 ? .int(Int64(double)) : .double(double)
        default: return .null
        }
    }
    public static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

    /// Serialises with two-space indentation (`pretty`) or compactly, always ending without a newline.
    public func serialized(pretty: Bool = true) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The UTF-8 bytes of `serialized(pretty:)`, built without intermediate strings (maps get large).
    public func serializedBytes(pretty: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        write(to: &out, indent: pretty ? 0 : -1)
        return out
    }

    private func write(to out: inout [UInt8], indent: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .double(let value): out.append(contentsOf: JSON.format(value).utf8)
        case .string(let value): JSON.writeString(value, to: &out)
        case .array(let items):
            if items.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.newline(&out, indent + 1, pretty: indent >= 0)
                item.write(to: &out, indent: indent >= 0 ? indent + 1 : -1)
            }
            JSON.newline(&out, indent, pretty: indent >= 0)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.newline(&out, indent + 1, pretty: indent >= 0)
                JSON.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent >= 0 { out.append(UInt8(ascii: " ")) }
                value.write(to: &out, indent: indent >= 0 ? indent + 1 : -1)
            }
            JSON.newline(&out, indent, pretty: indent >= 0)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], _ level: Int, pretty: Bool) {
        guard pretty else { return }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// Doubles are written with up to 9 decimals, trailing zeros trimmed: stable, platform-independent,
    /// and precise enough that a progression × a chapter length rounds back to the same offset.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let scale = 1_000_000_000.0
        let scaled = (value * scale).rounded()
        if scaled == 0 { return "0" }
        let negative = scaled < 0
        let magnitude = Int64(abs(scaled))
        let whole = magnitude / Int64(scale)
        var fraction = String(magnitude % Int64(scale))
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (negative ? "-" : "") + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                var escape: String?
                switch byte {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case UInt8(ascii: "\n"): escape = "\\n"
                case UInt8(ascii: "\r"): escape = "\\r"
                case UInt8(ascii: "\t"): escape = "\\t"
                case 0..<0x20:
                    let hex = String(byte, radix: 16)
                    escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                    // U+2028/U+2029 are valid JSON but break JavaScript consumers.
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    out.append(contentsOf: (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    runStart = index + 3
                    continue
                default: break
                }
                guard let escape, index >= runStart else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                out.append(contentsOf: escape.utf8)
                runStart = index + 1
            }
            if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
