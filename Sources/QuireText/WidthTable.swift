/// A short word's key in the width tables. Most words of a book are ASCII, Latin-1 or carry
/// typographic punctuation (dashes, curly quotes, an ellipsis, a word joiner): those take one byte
/// per character, so key and advance fit 24 bytes. Other words keep their UTF-16 units (40 bytes).
enum WidthKey {
    /// Twelve one-byte characters in `low` and the low half of `high`; above them the character
    /// count (4 bits) and the tag (27 bits). `high` is never 0 for a real key (count ≥ 1).
    case narrow(low: UInt64, high: UInt64)
    /// `TextKey.countAndTag` and `TextKey.packed` (plain values: no reference to retain).
    case wide(countAndTag: UInt64, packed: (UInt64, UInt64, UInt64))

    /// The key of an inline `TextKey`.
    init(_ key: TextKey) {
        self = Self.narrowed(key) ?? .wide(countAndTag: key.countAndTag, packed: key.packed)
    }

    /// Byte codes for the punctuation outside Latin-1 (0x80–0x9F are C1 controls, never in text;
    /// a word that holds one stays wide).
    @inline(__always)
    private static func byte(_ unit: UInt64) -> UInt64? {
        switch unit {
        case 0..<0x80, 0xA0...0xFF: return unit
        case 0x2010...0x201F: return 0x80 + (unit - 0x2010)
        case 0x2026: return 0x90
        case 0x2060: return 0x91
        default: return nil
        }
    }

    /// The four 16-bit units of `word` as four bytes (each unit below 0x100).
    @inline(__always)
    private static func compact(_ word: UInt64) -> UInt64 {
        word & 0xFF | word >> 8 & 0xFF00 | word >> 16 & 0xFF_0000 | word >> 24 & 0xFF00_0000
    }

    private static func narrowed(_ key: TextKey) -> WidthKey? {
        let count = key.countAndTag & 0xFFFF
        let tag = key.countAndTag >> 16
        guard count <= 12, tag < 1 << 27 else { return nil }
        // ASCII (nearly every word of an English book): compact the units without a loop.
        let ascii: UInt64 = 0xFF80_FF80_FF80_FF80
        if (key.packed.0 | key.packed.1 | key.packed.2) & ascii == 0 {
            return .narrow(
                low: compact(key.packed.0) | compact(key.packed.1) << 32, high: compact(key.packed.2) | count << 32 | tag << 36)
        }
        var bytes: UInt64 = 0
        var rest: UInt64 = 0
        for index in 0..<Int(count) {
            let word = index < 4 ? key.packed.0 : index < 8 ? key.packed.1 : key.packed.2
            guard let code = byte(word >> UInt64((index & 3) * 16) & 0xFFFF) else { return nil }
            if index < 8 { bytes |= code << UInt64(index * 8) } else { rest |= code << UInt64((index - 8) * 8) }
        }
        return .narrow(low: bytes, high: rest | count << 32 | tag << 36)
    }
}

extension WidthKey: Hashable {
    static func == (lhs: WidthKey, rhs: WidthKey) -> Bool {
        switch (lhs, rhs) {
        case (.narrow(let a, let b), .narrow(let c, let d)): return a == c && b == d
        case (.wide(let a, let p), .wide(let b, let q)): return a == b && p.0 == q.0 && p.1 == q.1 && p.2 == q.2
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .narrow(let low, let high): hasher.combine(WidthTable.hash(low, high, 0, 0))
        case .wide(let countAndTag, let packed): hasher.combine(WidthTable.hash(packed.0, packed.1, packed.2, countAndTag))
        }
    }
}

/// The advances of short shaped words in flat open-addressing tables: an entry (key and advance,
/// 24 or 40 bytes) fills less than a cache line, so a lookup costs one memory access, where a
/// dictionary of keys and shaped glyphs costs several and many times the memory. Map-only layout
/// needs only widths, so it never keeps the glyphs.
struct WidthTable {
    private struct NarrowEntry {
        var low: UInt64 = 0
        /// 0 = empty slot; bit 63 set when a glyph was missing.
        var high: UInt64 = 0
        var advance: Double = 0
    }

    private struct WideEntry {
        /// `TextKey.countAndTag`, with `missingFlag` set when a glyph was missing; 0 = empty slot.
        var countAndTag: UInt64 = 0
        var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var advance: Double = 0
    }

    static let missingFlag: UInt64 = 1 << 63
    /// Past this many words a table starts again (bounded memory on huge books).
    static let maxEntries = 1 << 19
    private var narrow = [NarrowEntry](repeating: NarrowEntry(), count: 1 << 12)
    private var narrowCount = 0
    private var wide = [WideEntry](repeating: WideEntry(), count: 1 << 8)
    private var wideCount = 0

    static func hash(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> Int {
        PackedKey.mix(a &* 0x9E37_79B9_7F4A_7C15 ^ b &* 0xC2B2_AE3D_27D4_EB4F ^ c &* 0x1656_67B1_9E37_79F9 ^ d, seed: 0)
    }

    /// The advance stored for a short word's key, and whether a glyph was missing.
    func find(_ key: WidthKey) -> (advance: Double, missing: Bool)? {
        switch key {
        case .narrow(let low, let high):
            return narrow.withUnsafeBufferPointer { table in
                var index = Self.hash(low, high, 0, 0) & (table.count - 1)
                while true {
                    let entry = table[index]
                    if entry.high == 0 { return nil }
                    if entry.low == low, entry.high & ~Self.missingFlag == high {
                        return (entry.advance, entry.high & Self.missingFlag != 0)
                    }
                    index = (index + 1) & (table.count - 1)
                }
            }
        case .wide(let countAndTag, let packed):
            return wide.withUnsafeBufferPointer { table in
                var index = Self.hash(packed.0, packed.1, packed.2, countAndTag) & (table.count - 1)
                while true {
                    let entry = table[index]
                    if entry.countAndTag == 0 { return nil }
                    if entry.countAndTag & ~Self.missingFlag == countAndTag, entry.packed.0 == packed.0,
                        entry.packed.1 == packed.1, entry.packed.2 == packed.2
                    {
                        return (entry.advance, entry.countAndTag & Self.missingFlag != 0)
                    }
                    index = (index + 1) & (table.count - 1)
                }
            }
        }
    }

    /// Stores a short word's advance (the key must not be present already).
    mutating func insert(_ key: WidthKey, advance: Double, missing: Bool) {
        let flag = missing ? Self.missingFlag : 0
        switch key {
        case .narrow(let low, let high):
            if narrowCount >= Self.maxEntries {
                narrow = [NarrowEntry](repeating: NarrowEntry(), count: 1 << 12)
                narrowCount = 0
            }
            if (narrowCount + 1) * 4 > narrow.count * 3 { narrow = Self.grown(narrow) }
            Self.place(NarrowEntry(low: low, high: high | flag, advance: advance), in: &narrow)
            narrowCount += 1
        case .wide(let countAndTag, let packed):
            if wideCount >= Self.maxEntries {
                wide = [WideEntry](repeating: WideEntry(), count: 1 << 8)
                wideCount = 0
            }
            if (wideCount + 1) * 4 > wide.count * 3 { wide = Self.grown(wide) }
            Self.place(WideEntry(countAndTag: countAndTag | flag, packed: packed, advance: advance), in: &wide)
            wideCount += 1
        }
    }

    private static func place(_ entry: NarrowEntry, in table: inout [NarrowEntry]) {
        table.withUnsafeMutableBufferPointer { table in
            var index = hash(entry.low, entry.high & ~missingFlag, 0, 0) & (table.count - 1)
            while table[index].high != 0 { index = (index + 1) & (table.count - 1) }
            table[index] = entry
        }
    }

    private static func place(_ entry: WideEntry, in table: inout [WideEntry]) {
        table.withUnsafeMutableBufferPointer { table in
            var index = hash(entry.packed.0, entry.packed.1, entry.packed.2, entry.countAndTag & ~missingFlag) & (table.count - 1)
            while table[index].countAndTag != 0 { index = (index + 1) & (table.count - 1) }
            table[index] = entry
        }
    }

    private static func grown(_ old: [NarrowEntry]) -> [NarrowEntry] {
        var table = [NarrowEntry](repeating: NarrowEntry(), count: old.count * 2)
        for entry in old where entry.high != 0 { place(entry, in: &table) }
        return table
    }

    private static func grown(_ old: [WideEntry]) -> [WideEntry] {
        var table = [WideEntry](repeating: WideEntry(), count: old.count * 2)
        for entry in old where entry.countAndTag != 0 { place(entry, in: &table) }
        return table
    }
}

/// A worker's small cache of recent word widths in front of the book's shared `WidthTable`:
/// direct-mapped arrays (a word's slot comes from its hash; a newcomer replaces the slot's word),
/// so its memory stays fixed while the shared table holds every word once. Words follow Zipf's
/// law, so a few thousand slots answer most lookups without taking the shared table's lock.
struct RecentWidths {
    private struct NarrowEntry {
        var low: UInt64 = 0
        /// 0 = empty slot; bit 63 set when a glyph was missing.
        var high: UInt64 = 0
        var advance: Double = 0
    }

    private struct WideEntry {
        /// With `WidthTable.missingFlag`; 0 = empty slot.
        var countAndTag: UInt64 = 0
        var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var advance: Double = 0
    }

    static let narrowSlots = 1 << 13
    static let wideSlots = 1 << 11
    private var narrow = [NarrowEntry](repeating: NarrowEntry(), count: narrowSlots)
    private var wide = [WideEntry](repeating: WideEntry(), count: wideSlots)

    func find(_ key: WidthKey) -> (advance: Double, missing: Bool)? {
        switch key {
        case .narrow(let low, let high):
            return narrow.withUnsafeBufferPointer { table in
                let entry = table[WidthTable.hash(low, high, 0, 0) & (Self.narrowSlots - 1)]
                guard entry.low == low, entry.high & ~WidthTable.missingFlag == high else { return nil }
                return (entry.advance, entry.high & WidthTable.missingFlag != 0)
            }
        case .wide(let countAndTag, let packed):
            return wide.withUnsafeBufferPointer { table in
                let entry = table[WidthTable.hash(packed.0, packed.1, packed.2, countAndTag) & (Self.wideSlots - 1)]
                guard entry.countAndTag & ~WidthTable.missingFlag == countAndTag, entry.packed.0 == packed.0,
                    entry.packed.1 == packed.1, entry.packed.2 == packed.2
                else { return nil }
                return (entry.advance, entry.countAndTag & WidthTable.missingFlag != 0)
            }
        }
    }

    /// Remembers a short word's advance.
    mutating func store(_ key: WidthKey, advance: Double, missing: Bool) {
        switch key {
        case .narrow(let low, let high):
            let index = WidthTable.hash(low, high, 0, 0) & (Self.narrowSlots - 1)
            narrow.withUnsafeMutableBufferPointer {
                $0[index] = NarrowEntry(low: low, high: high | (missing ? WidthTable.missingFlag : 0), advance: advance)
            }
        case .wide(let countAndTag, let packed):
            let index = WidthTable.hash(packed.0, packed.1, packed.2, countAndTag) & (Self.wideSlots - 1)
            wide.withUnsafeMutableBufferPointer {
                $0[index] = WideEntry(countAndTag: countAndTag | (missing ? WidthTable.missingFlag : 0), packed: packed, advance: advance)
            }
        }
    }
}
