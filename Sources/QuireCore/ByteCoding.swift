// A small binary form for records Quire keeps between runs (the layout cache): varints for
// integers, raw little-endian bits for floating point (so a value reads back exactly), and
// length-prefixed strings and arrays. The reader checks every length against what is left, so a
// damaged file fails with `ByteReader.Damaged` instead of trapping or allocating wildly.

public struct ByteWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func unsigned(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Zigzag, so small negative numbers stay short.
    public mutating func int(_ value: Int) {
        let wide = Int64(value)
        unsigned(UInt64(bitPattern: (wide << 1) ^ (wide >> 63)))
    }

    /// A length or count (what `ByteReader.count` reads).
    public mutating func count(_ value: Int) { unsigned(UInt64(value)) }

    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func double(_ value: Double) { fixed(value.bitPattern) }

    public mutating func float(_ value: Float) { fixed(value.bitPattern) }

    public mutating func string(_ value: String) { raw(Array(value.utf8)) }

    /// Length-prefixed bytes.
    public mutating func raw(_ value: [UInt8]) {
        unsigned(UInt64(value.count))
        bytes += value
    }

    public mutating func floats(_ values: some Collection<Float>) {
        unsigned(UInt64(values.count))
        for value in values { fixed(value.bitPattern) }
    }

    public mutating func ints<T: BinaryInteger>(_ values: some Collection<T>) {
        unsigned(UInt64(values.count))
        for value in values { int(Int(value)) }
    }

    private mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}

public struct ByteReader {
    /// The bytes end early or hold a value that cannot be right.
    public struct Damaged: Error, Sendable {
        public init() {}
    }

    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset == bytes.count }

    public var remaining: Int { bytes.count - offset }

    public mutating func unsigned() throws(Damaged) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count, shift < 64 else { throw Damaged() }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    public mutating func int() throws(Damaged) -> Int {
        let value = try unsigned()
        return Int(truncatingIfNeeded: Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1))))
    }

    /// A count of items that each take at least `size` bytes: never more than what is left.
    public mutating func count(itemSize size: Int = 1) throws(Damaged) -> Int {
        let value = try unsigned()
        guard value <= UInt64((bytes.count - offset) / max(1, size)) else { throw Damaged() }
        return Int(value)
    }

    public mutating func bool() throws(Damaged) -> Bool {
        guard offset < bytes.count, bytes[offset] <= 1 else { throw Damaged() }
        offset += 1
        return bytes[offset - 1] == 1
    }

    public mutating func double() throws(Damaged) -> Double { Double(bitPattern: try fixed(UInt64.self)) }

    public mutating func float() throws(Damaged) -> Float { Float(bitPattern: try fixed(UInt32.self)) }

    public mutating func raw() throws(Damaged) -> [UInt8] {
        let count = try count()
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    public mutating func string() throws(Damaged) -> String {
        let count = try count()
        defer { offset += count }
        return String(decoding: bytes[offset..<(offset + count)], as: UTF8.self)
    }

    public mutating func floats() throws(Damaged) -> [Float] {
        let count = try count(itemSize: 4)
        var values: [Float] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try float()) }
        return values
    }

    public mutating func ints<T: FixedWidthInteger>(_ type: T.Type) throws(Damaged) -> [T] {
        let count = try count()
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            guard let value = T(exactly: try int()) else { throw Damaged() }
            values.append(value)
        }
        return values
    }

    private mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) throws(Damaged) -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count - offset >= size else { throw Damaged() }
        var value: T = 0
        for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
        offset += size
        return value
    }
}
