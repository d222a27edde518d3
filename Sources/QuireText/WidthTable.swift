/// A short word's key in the width tables. Most words of a book are ASCII, Latin-1 or carry
/// typographic punctuation (dashes, curly quotes, an ellipsis, a word joiner): those take one byte
/// per character, so key and advance fit 24 bytes. Other words keep their UTF-16 units (40 bytes).
enum WidthKey {
    /// Twelve one-byte characters in `low` and the low half of `high`; above them the character
    /// count (4 bits) and the tag (27 bits). `high` is never 0 for a real key (count ≥ 1).
    case narrow(low: UInt64, high: UInt64)
    /// `TextKey.countAndTag` and `TextKey.packed` (plain values: no reference to retain).
    case wide(countAndTag: UInt64, packed: (UInt64, UInt64, UInt64))

    /// The key of a text of at most `TextKey.inlineUnits` units (nil for a longer one), packed the
    /// way `TextKey` packs them, without its hash.
    init?(units buffer: UnsafeBufferPointer<UInt16>, tag: Int) {
        let count = buffer.count
        guard count <= TextKey.inlineUnits else { return nil }
        // Nearly every word is narrow: its bytes are packed first, the units only when one is not.
        if tag < 1 << 27 {
            var bytes: UInt64 = 0
            var rest: UInt64 = 0
            var narrow = true
            for index in 0..<count {
                guard let code = Self.byte(UInt64(buffer[index])) else {
                    narrow = false
                    break
                }
                if index < 8 { bytes |= code << UInt64(index * 8) } else { rest |= code << UInt64((index - 8) * 8) }
            }
            if narrow {
                self = .narrow(low: bytes, high: rest | UInt64(count) << 32 | UInt64(tag) << 36)
                return
            }
        }
        var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for index in 0..<count {
            let shifted = UInt64(buffer[index]) << UInt64((index & 3) * 16)
            switch index >> 2 {
            case 0: packed.0 |= shifted
            case 1: packed.1 |= shifted
            default: packed.2 |= shifted
            }
        }
        self = .wide(countAndTag: UInt64(count) | UInt64(truncatingIfNeeded: tag) << 16, packed: packed)
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
}

extension WidthKey: Hashable {
    static func == (lhs: WidthKey, rhs: WidthKey) -> Bool {
        switch (lhs, rhs) {
        case (.narrow(let a, let b), .narrow(let c, let d)): return a == c && b == d
        case (.wide(let a, let p), .wide(let b, let q)): return a == b && p.0 == q.0 && p.1 == q.1 && p.2 == q.2
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(slotHash) }

    /// Where the key's entry goes in a width table (before masking by the table's size).
    var slotHash: Int {
        switch self {
        case .narrow(let low, let high): return Self.mix(low, high, 0, 0)
        case .wide(let countAndTag, let packed): return Self.mix(packed.0, packed.1, packed.2, countAndTag)
        }
    }

    static func mix(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> Int {
        PackedKey.mix(a &* 0x9E37_79B9_7F4A_7C15 ^ b &* 0xC2B2_AE3D_27D4_EB4F ^ c &* 0x1656_67B1_9E37_79F9 ^ d, seed: 0)
    }
}

/// A slot of the width tables: a key, its advance, and in the key's spare top bit whether a glyph
/// was missing. An empty slot is all zeros (a real key is never 0, its count being at least 1).
private protocol WidthEntry {
    init()
    var isEmpty: Bool { get }
    var slotHash: Int { get }
    var advance: Double { get }
    var missing: Bool { get }
}

private let missingFlag: UInt64 = 1 << 63

private struct NarrowWidth: WidthEntry {
    var low: UInt64 = 0
    var high: UInt64 = 0
    var advance: Double = 0

    init() {}
    init(low: UInt64, high: UInt64, advance: Double, missing: Bool) {
        self.low = low
        self.high = high | (missing ? missingFlag : 0)
        self.advance = advance
    }

    var isEmpty: Bool { high == 0 }
    var missing: Bool { high & missingFlag != 0 }
    var slotHash: Int { WidthKey.mix(low, high & ~missingFlag, 0, 0) }
    func holds(_ low: UInt64, _ high: UInt64) -> Bool { self.low == low && self.high & ~missingFlag == high }
}

private struct WideWidth: WidthEntry {
    var countAndTag: UInt64 = 0
    var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
    var advance: Double = 0

    init() {}
    init(countAndTag: UInt64, packed: (UInt64, UInt64, UInt64), advance: Double, missing: Bool) {
        self.countAndTag = countAndTag | (missing ? missingFlag : 0)
        self.packed = packed
        self.advance = advance
    }

    var isEmpty: Bool { countAndTag == 0 }
    var missing: Bool { countAndTag & missingFlag != 0 }
    var slotHash: Int { WidthKey.mix(packed.0, packed.1, packed.2, countAndTag & ~missingFlag) }
    func holds(_ countAndTag: UInt64, _ packed: (UInt64, UInt64, UInt64)) -> Bool {
        self.countAndTag & ~missingFlag == countAndTag && self.packed.0 == packed.0 && self.packed.1 == packed.1
            && self.packed.2 == packed.2
    }
}

/// An open-addressing table of width entries (linear probing, grown at 3/4 full).
private struct ProbedTable<Entry: WidthEntry> {
    private let initialSize: Int
    private let maxEntries: Int
    private var entries: [Entry]
    private var count = 0

    init(initialSize: Int, maxEntries: Int) {
        self.initialSize = initialSize
        self.maxEntries = maxEntries
        entries = [Entry](repeating: Entry(), count: initialSize)
    }

    func find(_ hash: Int, _ holds: (Entry) -> Bool) -> (advance: Double, missing: Bool)? {
        entries.withUnsafeBufferPointer { table in
            var index = hash & (table.count - 1)
            while true {
                let entry = table[index]
                if entry.isEmpty { return nil }
                if holds(entry) { return (entry.advance, entry.missing) }
                index = (index + 1) & (table.count - 1)
            }
        }
    }

    /// Adds an entry whose key is not present. Past `maxEntries` the table starts again.
    mutating func insert(_ entry: Entry) {
        if count >= maxEntries {
            entries = [Entry](repeating: Entry(), count: initialSize)
            count = 0
        }
        if (count + 1) * 4 > entries.count * 3 {
            let old = entries
            entries = [Entry](repeating: Entry(), count: old.count * 2)
            for entry in old where !entry.isEmpty { Self.place(entry, in: &entries) }
        }
        Self.place(entry, in: &entries)
        count += 1
    }

    private static func place(_ entry: Entry, in entries: inout [Entry]) {
        entries.withUnsafeMutableBufferPointer { table in
            var index = entry.slotHash & (table.count - 1)
            while !table[index].isEmpty { index = (index + 1) & (table.count - 1) }
            table[index] = entry
        }
    }
}

/// A direct-mapped table of width entries: a newcomer replaces the entry in its slot.
private struct DirectTable<Entry: WidthEntry> {
    private var entries: [Entry]

    init(size: Int) { entries = [Entry](repeating: Entry(), count: size) }

    func find(_ hash: Int, _ holds: (Entry) -> Bool) -> (advance: Double, missing: Bool)? {
        entries.withUnsafeBufferPointer { table in
            let entry = table[hash & (table.count - 1)]
            return holds(entry) ? (entry.advance, entry.missing) : nil
        }
    }

    mutating func store(_ entry: Entry) {
        let index = entry.slotHash & (entries.count - 1)
        entries.withUnsafeMutableBufferPointer { $0[index] = entry }
    }
}

/// A table of one kind of width entry: probed (every word kept) or direct-mapped (recent words).
private protocol EntryTable {
    associatedtype Entry: WidthEntry
    func find(_ hash: Int, _ holds: (Entry) -> Bool) -> (advance: Double, missing: Bool)?
    /// Adds an entry whose key is not present (a direct-mapped table replaces its slot's).
    mutating func put(_ entry: Entry)
}

extension ProbedTable: EntryTable {
    mutating func put(_ entry: Entry) { insert(entry) }
}

extension DirectTable: EntryTable {
    mutating func put(_ entry: Entry) { store(entry) }
}

/// A narrow and a wide table, reached by a word's key.
private struct KeyedWidths<Narrow: EntryTable, Wide: EntryTable> where Narrow.Entry == NarrowWidth, Wide.Entry == WideWidth {
    var narrow: Narrow
    var wide: Wide

    func find(_ key: WidthKey) -> (advance: Double, missing: Bool)? {
        switch key {
        case .narrow(let low, let high): return narrow.find(key.slotHash) { $0.holds(low, high) }
        case .wide(let countAndTag, let packed): return wide.find(key.slotHash) { $0.holds(countAndTag, packed) }
        }
    }

    mutating func put(_ key: WidthKey, advance: Double, missing: Bool) {
        switch key {
        case .narrow(let low, let high): narrow.put(NarrowWidth(low: low, high: high, advance: advance, missing: missing))
        case .wide(let countAndTag, let packed):
            wide.put(WideWidth(countAndTag: countAndTag, packed: packed, advance: advance, missing: missing))
        }
    }
}

/// The advances of short shaped words in flat open-addressing tables: an entry (key and advance,
/// 24 or 40 bytes) fills less than a cache line, so a lookup costs one memory access, where a
/// dictionary of keys and shaped glyphs costs several and many times the memory. Map-only layout
/// needs only widths, so it never keeps the glyphs.
struct WidthTable {
    /// Past this many words a table starts again (bounded memory on huge books).
    static let maxEntries = 1 << 19
    private var tables: KeyedWidths<ProbedTable<NarrowWidth>, ProbedTable<WideWidth>>

    /// `part`: the share of the words this table holds (1/n for each of n shards).
    init(part: Int = 1) {
        tables = KeyedWidths(
            narrow: ProbedTable(initialSize: (1 << 12) / part, maxEntries: WidthTable.maxEntries / part),
            wide: ProbedTable(initialSize: max(16, (1 << 8) / part), maxEntries: WidthTable.maxEntries / part))
    }

    /// The advance stored for a short word's key, and whether a glyph was missing.
    func find(_ key: WidthKey) -> (advance: Double, missing: Bool)? { tables.find(key) }

    /// Stores a short word's advance (the key must not be present already).
    mutating func insert(_ key: WidthKey, advance: Double, missing: Bool) { tables.put(key, advance: advance, missing: missing) }
}

/// A worker's small cache of recent word widths in front of the book's shared `WidthTable`:
/// direct-mapped tables (a word's slot comes from its hash; a newcomer replaces the slot's word),
/// so its memory stays fixed while the shared table holds every word once. Words follow Zipf's
/// law, so a few thousand slots answer most lookups without taking the shared table's lock.
struct RecentWidths {
    static let narrowSlots = 1 << 13
    static let wideSlots = 1 << 11
    private var tables = KeyedWidths(
        narrow: DirectTable<NarrowWidth>(size: narrowSlots), wide: DirectTable<WideWidth>(size: wideSlots))

    func find(_ key: WidthKey) -> (advance: Double, missing: Bool)? { tables.find(key) }

    /// Remembers a short word's advance.
    mutating func store(_ key: WidthKey, advance: Double, missing: Bool) { tables.put(key, advance: advance, missing: missing) }
}
