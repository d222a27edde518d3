/// An RFC 2397 `data:` URL (`data:image/png;base64,iVBOR…`), as books embed small images.
public struct DataURL: Sendable, Hashable {
    public var mediaType: String
    public var bytes: [UInt8]

    /// Nil when `text` is not a data: URL or its payload does not decode.
    public init?(_ text: String) {
        var units = Array(text.utf8)[...]
        while let first = units.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D { units = units.dropFirst() }
        guard units.count >= 5, String(decoding: units.prefix(5), as: UTF8.self).lowercased() == "data:",
            let comma = units.firstIndex(of: UInt8(ascii: ","))
        else { return nil }
        let header = String(decoding: units[units.index(units.startIndex, offsetBy: 5)..<comma], as: UTF8.self).lowercased()
        let parameters = header.split(separator: ";").map { String($0.filter { $0 != " " && $0 != "\t" }) }
        let payload = units[(comma + 1)...]
        mediaType = parameters.first.flatMap { $0.contains("/") ? $0 : nil } ?? "text/plain"
        if parameters.dropFirst().contains("base64") {
            guard let decoded = Self.base64(PercentEncoding.decode(payload)) else { return nil }
            bytes = decoded
        } else {
            bytes = PercentEncoding.decode(payload)
        }
    }

    /// Base64 (RFC 4648), ignoring white space; nil on any other character or a bad length.
    static func base64(_ input: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in input {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            guard padding == 0 else { return nil }  // data after padding
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return bits >= 6 ? nil : output
    }
}
