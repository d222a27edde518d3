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
    /// An array whose elements are made one at a time as it is written: a long book's map
    /// (tens of thousands of pages) is never a whole tree in memory. Reads like `.array`.
    case generated(count: Int, element: @Sendable (Int) -> JSON)

    /// The elements of `.array` or `.generated` (nil for other values).
    public var elements: [JSON]? {
        switch self {
        case .array(let items): return items
        case .generated(let count, let element): return (0..<count).map(element)
        default: return nil
        }
    }

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
        case (.array, .generated), (.generated, .array), (.generated, .generated): return lhs.elements! == rhs.elements!
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

    /// The same value with every object's members sorted by name (what `quire locate` has always printed).
    public func sortingKeys() -> JSON {
        switch self {
        case .object(let members): return .object(members.sorted { $0.0 < $1.0 }.map { ($0.0, $0.1.sortingKeys()) })
        case .array, .generated: return .array(elements!.map { $0.sortingKeys() })
        default: return self
        }
    }

    /// Serialises with two-space indentation (`pretty`) or compactly, always ending without a newline.
    public func serialized(pretty: Bool = true) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The UTF-8 bytes of `serialized(pretty:)`, built without intermediate strings (maps get large).
    public func serializedBytes(pretty: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        write(to: &out, indent: pretty ? 0 : -1, flush: nil)
        return out
    }

    /// The same bytes as `serializedBytes`, handed to `emit` in pieces of about `chunkSize`: a
    /// book's map (megabytes) is never whole in memory beside its JSON tree.
    public func serialize(pretty: Bool = true, chunkSize: Int = 1 << 16, emit: ([UInt8]) -> Void) {
        var out: [UInt8] = []
        out.reserveCapacity(chunkSize + 4096)
        withoutActuallyEscaping(emit) { emit in
            let flush: (inout [UInt8]) -> Void = { buffer in
                guard buffer.count >= chunkSize else { return }
                emit(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
            write(to: &out, indent: pretty ? 0 : -1, flush: flush)
        }
        if !out.isEmpty { emit(out) }
    }

    private func write(to out: inout [UInt8], indent: Int, flush: ((inout [UInt8]) -> Void)?) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): JSON.appendInteger(value, to: &out)
        case .double(let value): JSON.appendDouble(value, to: &out)
        case .string(let value): JSON.writeString(value, to: &out)
        case .array(let items):
            JSON.writeArray(count: items.count, element: { items[$0] }, to: &out, indent: indent, flush: flush)
        case .generated(let count, let element):
            JSON.writeArray(count: count, element: element, to: &out, indent: indent, flush: flush)
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
                value.write(to: &out, indent: indent >= 0 ? indent + 1 : -1, flush: flush)
                flush?(&out)
            }
            JSON.newline(&out, indent, pretty: indent >= 0)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeArray(
        count: Int, element: (Int) -> JSON, to out: inout [UInt8], indent: Int, flush: ((inout [UInt8]) -> Void)?
    ) {
        if count == 0 {
            out.append(contentsOf: "[]".utf8)
            return
        }
        out.append(UInt8(ascii: "["))
        for index in 0..<count {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSON.newline(&out, indent + 1, pretty: indent >= 0)
            element(index).write(to: &out, indent: indent >= 0 ? indent + 1 : -1, flush: flush)
            flush?(&out)
        }
        JSON.newline(&out, indent, pretty: indent >= 0)
        out.append(UInt8(ascii: "]"))
    }

    private static func newline(_ out: inout [UInt8], _ level: Int, pretty: Bool) {
        guard pretty else { return }
        out.append(UInt8(ascii: "\n"))
        // Copied from a row of spaces (appending `repeatElement` went a byte at a time).
        var remaining = 2 * level
        while remaining > 0 {
            let count = min(remaining, spaces.count)
            spaces.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count])) }
            remaining -= count
        }
    }

    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 64)

    /// Bytes a JSON string must escape or look at twice: controls, `"`, `\\`, and 0xE2 (the
    /// first byte of U+2028 and U+2029).
    private static let special: [Bool] = (0...255).map { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }

    /// Doubles are written with up to 9 decimals, trailing zeros trimmed: stable, platform-independent,
    /// and precise enough that a progression × a chapter length rounds back to the same offset.
    static func format(_ value: Double) -> String {
        var bytes: [UInt8] = []
        appendDouble(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Written straight into the output (a map holds tens of thousands of numbers): no String.
    static func appendDouble(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else { return out.append(contentsOf: "null".utf8) }
        let scale = 1_000_000_000.0
        let scaled = (value * scale).rounded()
        if scaled == 0 { return out.append(UInt8(ascii: "0")) }
        // Past Int64's range with nine decimals: the shortest round-trip form.
        guard abs(scaled) < 9.0e18 else { return out.append(contentsOf: String(value).utf8) }
        let magnitude = UInt64(abs(scaled))
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        appendDigits(magnitude / 1_000_000_000, to: &out)
        var fraction = magnitude % 1_000_000_000
        guard fraction != 0 else { return }
        var digits = 9
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        out.append(UInt8(ascii: "."))
        var divisor: UInt64 = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }

    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, to: &out)
    }

    private static func appendDigits(_ value: UInt64, to out: inout [UInt8]) {
        var divisor: UInt64 = 1
        while divisor <= value / 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            let special = JSON.special
            while index < bytes.count {
                let byte = bytes[index]
                // Nearly every byte is plain: copied in runs, looked at once.
                if !special[Int(byte)] {
                    index += 1
                    continue
                }
                var escape: String? = nil
                var skip = 1
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
                    escape = bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029"
                    skip = 3
                default: break
                }
                if let escape {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    out.append(contentsOf: escape.utf8)
                    runStart = index + skip
                }
                index += skip
            }
            if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// JSON `null` as read by `JSONReader`.
public struct JSONNull: Equatable, Sendable {
    public init() {}
}

/// Reads JSON text (RFC 8259) into plain Swift values: `[String: Any]`, `[Any]`, `String`, `Int`
/// (integers that fit), `Double` (other numbers), `Bool` and `JSONNull`. Nesting is limited, so
/// hostile input fails with an error instead of exhausting the stack.
public struct JSONReader {
    public struct SyntaxError: Error, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    public static let maxDepth = 512

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> Any {
        var reader = JSONReader(bytes)
        // A UTF-8 byte order mark is tolerated, as most readers do.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        let value = try reader.value()
        reader.skipSpace()
        guard reader.index == bytes.count else { throw reader.error("text after the value") }
        return value
    }

    public static func parse(_ text: String) throws(SyntaxError) -> Any { try parse(Array(text.utf8)) }

    /// A number read from JSON as a Double, whether it was written as an integer or not.
    public static func double(_ value: Any?) -> Double? {
        if let double = value as? Double { return double }
        if let int = value as? Int { return Double(int) }
        return nil
    }

    private func error(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func value() throws(SyntaxError) -> Any {
        skipSpace()
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return try string()
        case UInt8(ascii: "t"): return try literal("true", true)
        case UInt8(ascii: "f"): return try literal("false", false)
        case UInt8(ascii: "n"): return try literal("null", JSONNull())
        default: return try number()
        }
    }

    private mutating func literal(_ word: String, _ result: Any) throws(SyntaxError) -> Any {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else {
            throw error("unexpected character")
        }
        index += expected.count
        return result
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw error("nested deeper than \(Self.maxDepth) levels") }
    }

    private mutating func object() throws(SyntaxError) -> [String: Any] {
        try enter()
        defer { depth -= 1 }
        index += 1
        var result: [String: Any] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return result
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            result[key] = try value()
            if try closes("}") { return result }
        }
    }

    /// After a member or an item: true at the closing bracket, false after a comma.
    private mutating func closes(_ bracket: Unicode.Scalar) throws(SyntaxError) -> Bool {
        skipSpace()
        guard index < bytes.count else { throw error("unexpected end") }
        let byte = bytes[index]
        guard byte == UInt8(ascii: ",") || byte == UInt8(ascii: bracket) else { throw error("expected ',' or '\(bracket)'") }
        index += 1
        return byte != UInt8(ascii: ",")
    }

    private mutating func array() throws(SyntaxError) -> [Any] {
        try enter()
        defer { depth -= 1 }
        index += 1
        var result: [Any] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return result
        }
        while true {
            result.append(try value())
            if try closes("]") { return result }
        }
    }

    private mutating func hexUnit() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw error("bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func string() throws(SyntaxError) -> String {
        index += 1
        var out: [UInt8] = []
        var runStart = index
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[runStart..<index])
                index += 1
                break
            }
            if byte < 0x20 { throw error("control character in a string") }
            guard byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            out.append(contentsOf: bytes[runStart..<index])
            index += 1
            guard index < bytes.count else { throw error("unterminated string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hexUnit()
                if scalar & 0xFC00 == 0xD800, index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                    let save = index
                    index += 2
                    let low = try hexUnit()
                    if low & 0xFC00 == 0xDC00 {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = save
                    }
                }
                // An unpaired surrogate becomes U+FFFD.
                out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default: throw error("bad escape")
            }
            runStart = index
        }
        guard let string = String(validating: out, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
        return string
    }

    private mutating func number() throws(SyntaxError) -> Any {
        let start = index
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        guard index > digitsStart else { throw error("unexpected character") }
        if bytes[digitsStart] == 0x30 && index - digitsStart > 1 { throw error("leading zero") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            let fractionStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > fractionStart else { throw error("digits expected after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > exponentStart else { throw error("digits expected in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let int = Int(text) { return int }
        guard let double = Double(text) else { throw error("bad number") }
        return double
    }
}

/// `value` with a fixed number of decimals ("12.5" for 12.46 and 1), for messages and reports.
public func fixedDecimals(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return String(value) }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    guard abs(value) * scale < 9.0e18 else { return String(value) }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int64(scaled / scale)
    var fraction = String(Int64(scaled - Double(whole) * scale))
    fraction = String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
    let sign = value < 0 && scaled != 0 ? "-" : ""
    return decimals == 0 ? sign + String(whole) : sign + String(whole) + "." + fraction
}
