/// Painting's short words (one shard of them, see `SharedShaping`): for each, the width layout
/// measured and the glyphs its lines were shaped with, in open-addressing tables keyed like the
/// width tables (`WidthKey`), the glyphs packed in blocks rather than an array per word.
///
/// Why not a dictionary of `ShapedText`: rendering Moby-Dick keeps about 45,000 keys (words, their
/// parts and hyphenation fragments), 20,000 of them with glyphs. A dictionary of 72-byte text keys
/// beside a glyph array per word (a 32-byte header and a malloc block each) and a separate width
/// table took about 8.7 MB in each worker; here an entry is 32 bytes (48 for a word outside
/// Latin-1) and a glyph 12, about 4 MB for the book.
///
/// Width and glyphs are kept apart: a word's measured width does not always come from shaping it
/// whole (a word with punctuation is measured from its parts, see `Shaper.composed`), so a width is
/// only answered once it was measured, whatever glyphs the entry holds, and glyphs come with the
/// advance they were shaped with.
struct ShapedWords {
    /// Past this many words (in all shards) a table starts again (bounded memory on huge books).
    static let maxEntries = 1 << 19
    /// Glyphs kept at most (1.5 MB in all shards); past it a shard's glyphs are dropped, and
    /// words still in use are shaped again as they come. Moby-Dick fills it either way: at
    /// 2^18 rendering it cost 1.6 MB more at its peak and saved 1% of the instructions.
    static let maxGlyphs = 1 << 17
    /// Glyphs per block: a word's glyphs never straddle two blocks, and blocks are never moved.
    static let blockSize = 4096

    private var narrow: WordTable<NarrowWordKey>
    private var wide: WordTable<WideWordKey>
    private var blocks: [[PackedGlyph]] = []
    private var glyphCount = 0
    /// This table's share of `maxEntries` and `maxGlyphs`.
    private let maxEntries: Int
    private let maxGlyphs: Int

    /// `part`: the share of the words this table holds (1/n for each of n shards).
    init(part: Int = 1) {
        maxEntries = Self.maxEntries / part
        maxGlyphs = Self.maxGlyphs / part
        narrow = WordTable(maxEntries: maxEntries)
        wide = WordTable(maxEntries: maxEntries)
    }

    /// The width measured for a word, and whether a glyph was missing.
    func width(_ key: WidthKey) -> (advance: Double, missing: Bool)? {
        guard let entry = entry(key), entry.glyphs.measured else { return nil }
        return (entry.advance, entry.glyphs.missing)
    }

    /// The glyphs a word was shaped with, if they are still kept, in HarfBuzz's font units, and
    /// the sum of their advances.
    func shaped(_ key: WidthKey) -> (glyphs: ArraySlice<PackedGlyph>, units: Int32)? {
        guard let entry = entry(key), entry.glyphs.count > 0 else { return nil }
        let start = entry.glyphs.start
        let block = start / Self.blockSize
        let offset = start % Self.blockSize
        return (blocks[block][offset..<offset + entry.glyphs.count], entry.shapedUnits)
    }

    private func entry(_ key: WidthKey) -> WordEntry? {
        switch key {
        case .narrow(let low, let high): narrow.find(NarrowWordKey(low: low, high: high))
        case .wide(let countAndTag, let packed): wide.find(WideWordKey(countAndTag: countAndTag, packed: packed))
        }
    }

    /// Records a word's measured width.
    mutating func storeWidth(_ key: WidthKey, advance: Double, missing: Bool) {
        update(key) { entry in
            entry.advance = advance
            entry.glyphs.measured = true
            entry.glyphs.missing = missing
        }
    }

    /// Keeps the glyphs a word was shaped with and the sum of their advances (not kept when
    /// there are none or too many for an entry: such a word is shaped again).
    mutating func storeShaped(_ key: WidthKey, _ glyphs: [PackedGlyph], units: Int32) {
        guard !glyphs.isEmpty, glyphs.count <= GlyphRange.maxCount else { return }
        // The entry first: making it may start the tables again, blocks included, which must not
        // happen between placing the glyphs and recording where they are.
        update(key) { _ in }
        if glyphCount + glyphs.count > maxGlyphs { dropGlyphs() }
        if blocks.isEmpty || blocks[blocks.count - 1].count + glyphs.count > Self.blockSize {
            var block: [PackedGlyph] = []
            block.reserveCapacity(Self.blockSize)
            blocks.append(block)
        }
        let start = (blocks.count - 1) * Self.blockSize + blocks[blocks.count - 1].count
        blocks[blocks.count - 1].append(contentsOf: glyphs)
        glyphCount += glyphs.count
        // The key is present now, so this cannot start the tables again.
        update(key) { entry in
            entry.shapedUnits = units
            entry.glyphs.start = start
            entry.glyphs.count = glyphs.count
        }
    }

    private mutating func update(_ key: WidthKey, _ change: (inout WordEntry) -> Void) {
        let full: Bool
        switch key {
        case .narrow(let low, let high): full = narrow.update(NarrowWordKey(low: low, high: high), change)
        case .wide(let countAndTag, let packed): full = wide.update(WideWordKey(countAndTag: countAndTag, packed: packed), change)
        }
        guard full else { return }
        // A table reached `maxEntries` and started again: glyph ranges of the words it dropped
        // would point at blocks the next words reuse, so every word starts again.
        narrow = WordTable(maxEntries: maxEntries)
        wide = WordTable(maxEntries: maxEntries)
        blocks = []
        glyphCount = 0
        update(key, change)
    }

    /// Forgets every word's glyphs (their widths stay).
    private mutating func dropGlyphs() {
        blocks = []
        glyphCount = 0
        narrow.dropGlyphs()
        wide.dropGlyphs()
    }
}

/// A glyph as HarfBuzz gave it, in font units, packed to 12 bytes: `Shaper` turns it into a
/// `ShapedGlyph` with the same arithmetic it uses for glyphs it has just shaped. In a vertical run
/// `advance` holds HarfBuzz's y advance, `xOffset` its y offset and `yOffset` its x offset.
struct PackedGlyph {
    var id: UInt16
    var cluster: UInt16
    var advance: Int32
    var xOffset: Int16
    var yOffset: Int16
}

/// Where an entry's glyphs are, and its two flags, in 32 bits: start 20 bits (`maxGlyphs` is
/// 2^18), count 10 bits, then whether the width was measured and whether a glyph was missing.
struct GlyphRange {
    static let maxCount = (1 << 10) - 1
    private(set) var bits: UInt32 = 0

    var start: Int {
        get { Int(bits & 0xF_FFFF) }
        set { bits = bits & ~0xF_FFFF | UInt32(newValue) & 0xF_FFFF }
    }
    var count: Int {
        get { Int(bits >> 20 & 0x3FF) }
        set { bits = bits & ~(0x3FF << 20) | (UInt32(newValue) & 0x3FF) << 20 }
    }
    var measured: Bool {
        get { bits & 1 << 30 != 0 }
        set { bits = newValue ? bits | 1 << 30 : bits & ~(1 << 30) }
    }
    var missing: Bool {
        get { bits & 1 << 31 != 0 }
        set { bits = newValue ? bits | 1 << 31 : bits & ~(1 << 31) }
    }
}

/// What a word's entry holds besides its key.
struct WordEntry {
    /// The width measured (`glyphs.measured`).
    var advance: Double = 0
    /// The sum of the kept glyphs' advances, in font units.
    var shapedUnits: Int32 = 0
    var glyphs = GlyphRange()
}

/// A key as a word table stores it: zero is the empty slot.
protocol WordKey: Equatable {
    init()
    var isEmpty: Bool { get }
    /// `WidthKey.slotHash` of the key.
    var slotHash: Int { get }
}

/// `WidthKey.narrow` (a real one's `high` is never 0: it holds the character count).
struct NarrowWordKey: WordKey {
    var low: UInt64 = 0
    var high: UInt64 = 0

    init() {}
    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    var isEmpty: Bool { high == 0 }
    var slotHash: Int { WidthKey.mix(low, high, 0, 0) }
}

/// `WidthKey.wide` (a real one's `countAndTag` is never 0).
struct WideWordKey: WordKey {
    var countAndTag: UInt64 = 0
    var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)

    init() {}
    init(countAndTag: UInt64, packed: (UInt64, UInt64, UInt64)) {
        self.countAndTag = countAndTag
        self.packed = packed
    }

    var isEmpty: Bool { countAndTag == 0 }
    var slotHash: Int { WidthKey.mix(packed.0, packed.1, packed.2, countAndTag) }

    static func == (lhs: WideWordKey, rhs: WideWordKey) -> Bool {
        lhs.countAndTag == rhs.countAndTag && lhs.packed.0 == rhs.packed.0 && lhs.packed.1 == rhs.packed.1 && lhs.packed.2 == rhs.packed.2
    }
}

/// An open-addressing table of word entries (linear probing, grown at 3/4 full).
struct WordTable<Key: WordKey> {
    private var keys = [Key](repeating: Key(), count: 1 << 8)
    private var entries = [WordEntry](repeating: WordEntry(), count: 1 << 8)
    private var count = 0
    private let maxEntries: Int

    init(maxEntries: Int) { self.maxEntries = maxEntries }

    /// The key's slot, or the empty slot where it would go.
    private func slot(_ key: Key) -> Int {
        keys.withUnsafeBufferPointer { table in
            var index = key.slotHash & (table.count - 1)
            while !table[index].isEmpty && table[index] != key { index = (index + 1) & (table.count - 1) }
            return index
        }
    }

    func find(_ key: Key) -> WordEntry? {
        let index = slot(key)
        return keys[index].isEmpty ? nil : entries[index]
    }

    /// Changes the key's entry, made empty when new. Returns true, changing nothing, when the
    /// table holds `maxEntries` keys already.
    mutating func update(_ key: Key, _ change: (inout WordEntry) -> Void) -> Bool {
        var index = slot(key)
        if keys[index].isEmpty {
            if count >= maxEntries { return true }
            if (count + 1) * 4 > keys.count * 3 {
                grow()
                index = slot(key)
            }
            keys[index] = key
            count += 1
        }
        change(&entries[index])
        return false
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldEntries = entries
        keys = [Key](repeating: Key(), count: oldKeys.count * 2)
        entries = [WordEntry](repeating: WordEntry(), count: oldKeys.count * 2)
        for index in oldKeys.indices where !oldKeys[index].isEmpty {
            let slot = slot(oldKeys[index])
            keys[slot] = oldKeys[index]
            entries[slot] = oldEntries[index]
        }
    }

    mutating func dropGlyphs() {
        entries.withUnsafeMutableBufferPointer { table in
            for index in table.indices { table[index].glyphs.count = 0 }
        }
    }
}
