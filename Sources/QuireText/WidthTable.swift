/// The advances of short shaped words in one flat open-addressing table: an entry (its packed
/// text, tag and advance: 40 bytes) fills less than a cache line, so a lookup costs one memory access,
/// where a dictionary of keys and shaped glyphs costs several and many times the memory. Map-only
/// layout needs only widths, so it never keeps the glyphs.
struct WidthTable {
    private struct Entry {
        /// `TextKey.countAndTag`, with `missingFlag` set when a glyph was missing; 0 = empty slot.
        var countAndTag: UInt64 = 0
        var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var advance: Double = 0
    }

    private static let missingFlag: UInt64 = 1 << 63
    /// Past this many words the table starts again (bounded memory on huge books).
    static let maxEntries = 1 << 19
    private var entries = [Entry](repeating: Entry(), count: 1 << 12)
    private var count = 0

    /// A slot from the packed text alone, so entries can be placed again when the table grows.
    private func slot(countAndTag: UInt64, packed: (UInt64, UInt64, UInt64)) -> Int {
        let folded = packed.0 &* 0x9E37_79B9_7F4A_7C15 ^ packed.1 &* 0xC2B2_AE3D_27D4_EB4F ^ packed.2 &* 0x1656_67B1_9E37_79F9 ^ countAndTag
        return PackedKey.mix(folded, seed: 0) & (entries.count - 1)
    }

    /// The advance stored for a short word's key, and whether a glyph was missing.
    func find(_ key: TextKey) -> (advance: Double, missing: Bool)? {
        entries.withUnsafeBufferPointer { table in
            var index = slot(countAndTag: key.countAndTag, packed: key.packed)
            while true {
                let entry = table[index]
                if entry.countAndTag == 0 { return nil }
                if entry.countAndTag & ~Self.missingFlag == key.countAndTag,
                    entry.packed.0 == key.packed.0, entry.packed.1 == key.packed.1, entry.packed.2 == key.packed.2
                {
                    return (entry.advance, entry.countAndTag & Self.missingFlag != 0)
                }
                index = (index + 1) & (table.count - 1)
            }
        }
    }

    /// Stores a short word's advance (the key must be inline and not already present).
    mutating func insert(_ key: TextKey, advance: Double, missing: Bool) {
        if count >= Self.maxEntries {
            entries = [Entry](repeating: Entry(), count: 1 << 12)
            count = 0
        }
        if (count + 1) * 4 > entries.count * 3 { grow() }
        place(Entry(countAndTag: key.countAndTag | (missing ? Self.missingFlag : 0), packed: key.packed, advance: advance))
        count += 1
    }

    private mutating func place(_ entry: Entry) {
        var index = slot(countAndTag: entry.countAndTag & ~Self.missingFlag, packed: entry.packed)
        entries.withUnsafeMutableBufferPointer { table in
            while table[index].countAndTag != 0 { index = (index + 1) & (table.count - 1) }
            table[index] = entry
        }
    }

    private mutating func grow() {
        let old = entries
        entries = [Entry](repeating: Entry(), count: old.count * 2)
        for entry in old where entry.countAndTag != 0 { place(entry) }
    }
}

/// A worker's small cache of recent word widths in front of the book's shared `WidthTable`: a
/// direct-mapped array (a word's slot comes from its hash; a newcomer replaces the slot's word),
/// so its memory stays fixed while the shared table holds every word once. Words follow Zipf's
/// law, so a few thousand slots answer most lookups without taking the shared table's lock.
struct RecentWidths {
    private struct Entry {
        /// `TextKey.countAndTag` with `missingFlag` for a missing glyph; 0 = empty slot.
        var countAndTag: UInt64 = 0
        var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var advance: Double = 0
    }

    private static let missingFlag: UInt64 = 1 << 63
    static let slots = 1 << 13
    private var entries = [Entry](repeating: Entry(), count: slots)

    private static func slot(_ key: TextKey) -> Int {
        let folded = key.packed.0 &* 0x9E37_79B9_7F4A_7C15 ^ key.packed.1 &* 0xC2B2_AE3D_27D4_EB4F ^ key.packed.2 &* 0x1656_67B1_9E37_79F9
            ^ key.countAndTag
        return PackedKey.mix(folded, seed: 0) & (slots - 1)
    }

    func find(_ key: TextKey) -> (advance: Double, missing: Bool)? {
        entries.withUnsafeBufferPointer { table in
            let entry = table[Self.slot(key)]
            guard entry.countAndTag & ~Self.missingFlag == key.countAndTag, entry.packed.0 == key.packed.0,
                entry.packed.1 == key.packed.1, entry.packed.2 == key.packed.2
            else { return nil }
            return (entry.advance, entry.countAndTag & Self.missingFlag != 0)
        }
    }

    /// Remembers a short word's advance (the key must be inline).
    mutating func store(_ key: TextKey, advance: Double, missing: Bool) {
        let index = Self.slot(key)
        entries.withUnsafeMutableBufferPointer {
            $0[index] = Entry(countAndTag: key.countAndTag | (missing ? Self.missingFlag : 0), packed: key.packed, advance: advance)
        }
    }
}
