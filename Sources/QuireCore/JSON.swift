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
    public static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

    /// Serialises with two-space indentation (`pretty`) or compactly, always ending without a newline.
    public func serialized(pretty: Bool = true) -> String {
        var out = ""
        out.reserveCapacity(4096)
        write(to: &out, indent: pretty ? 0 : -1)
        return out
    }

    private func write(to out: inout String, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += JSON.format(value)
        case .string(let value): JSON.writeString(value, to: &out)
        case .array(let items):
            if items.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                JSON.newline(&out, indent + 1, pretty: indent >= 0)
                item.write(to: &out, indent: indent >= 0 ? indent + 1 : -1)
            }
            JSON.newline(&out, indent, pretty: indent >= 0)
            out += "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                JSON.newline(&out, indent + 1, pretty: indent >= 0)
                JSON.writeString(key, to: &out)
                out += indent >= 0 ? ": " : ":"
                value.write(to: &out, indent: indent >= 0 ? indent + 1 : -1)
            }
            JSON.newline(&out, indent, pretty: indent >= 0)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ level: Int, pretty: Bool) {
        guard pretty else { return }
        out += "\n"
        out += String(repeating: "  ", count: level)
    }

    /// Doubles are written with up to 6 decimals, trailing zeros trimmed: stable and platform-independent.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let scaled = (value * 1_000_000).rounded()
        if scaled == 0 { return "0" }
        let negative = scaled < 0
        let magnitude = Int64(abs(scaled))
        let whole = magnitude / 1_000_000
        var fraction = String(magnitude % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (negative ? "-" : "") + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
