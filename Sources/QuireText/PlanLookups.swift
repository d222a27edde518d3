import CHarfBuzz

/// The GSUB and GPOS lookups one HarfBuzz shape plan applies, read from the font's own tables, to
/// answer one question about a run of glyphs: would shaping it change anything besides giving each
/// glyph its own advance and kerning neighbours? When it would not, the run's width is the sum of
/// its glyphs' advances plus the adjustment of each adjacent pair, all of which HarfBuzz measured
/// once (see `Shaper.pairwiseUnits`).
///
/// The answer is exact or errs towards "it would": a lookup counts as acting when any rule of it
/// matches (its first glyph covered, its context present), even if the rule then changes nothing.
/// Positioning that moves glyphs without changing advances (mark attachment) is left out; single
/// adjustments are part of a glyph's own advance; pair adjustments whose second value is empty are
/// the kerning the sum adds. Anything else (a pair lookup that also moves its second glyph,
/// cursive attachment, contextual positioning) counts as acting on the glyphs it covers.
final class PlanLookups {
    private enum Kind {
        /// Acts on any glyph of its coverage (single, multiple, alternate and reverse-chain
        /// substitution, cursive attachment, pair adjustment that moves the second glyph).
        case anyCovered
        case ligature
        case context
        case chainContext
    }

    private struct Subtable {
        var table: FontTable
        var kind: Kind
        var offset: Int
        /// The lookup skips base glyphs (flag IgnoreBaseGlyphs): where a font leaves some letters
        /// unclassified, it matches across the others, so glyphs need not be adjacent. Such a
        /// subtable counts as acting wherever its first glyph is covered.
        var skipsBases = false
    }

    private let blobs: [OpaquePointer]
    private let subtables: [Subtable]
    /// How far each subtable's rules look from the glyph they start at: glyphs before it
    /// (backtrack) and after it (the rest of the input, then the lookahead). Nil when a table is
    /// malformed.
    private let reaches: [Reach?]
    /// Whether a glyph id fits a 16-bit slot of a memo key with one value to spare (0xFFFF, for
    /// no glyph at the run's edge).
    private let memoizable: Bool
    /// `acts` by its glyph and the neighbours its subtables can see: new words of a book repeat
    /// the same few windows (a "g" and the letters around it), and a chained context's rules
    /// cost hundreds of instructions to try. One per shaping worker, as its pairwise widths.
    private var memo: [UInt64: Bool] = [:]
    private static let memoLimit = 1 << 16

    private struct Reach {
        var before = 0
        var after = 0
        mutating func extend(before: Int = 0, after: Int = 0) {
            self.before = max(self.before, before)
            self.after = max(self.after, after)
        }
    }

    /// Nil when the face has tables HarfBuzz may shape with instead of, or besides, GSUB and GPOS
    /// (AAT `morx`/`kerx`/`trak`, the legacy `kern`), or when a table is malformed.
    init?(face: OpaquePointer, plan: OpaquePointer) {
        for tag in ["morx", "mort", "kerx", "kern", "trak"] {
            let blob = hb_face_reference_table(face, hb_tag_from_string(tag, -1))
            let length = hb_blob_get_length(blob)
            hb_blob_destroy(blob)
            if length > 0 { return nil }
        }
        var blobs: [OpaquePointer] = []
        var subtables: [Subtable] = []
        var complete = true
        for (tag, isSubstitution) in [("GSUB", true), ("GPOS", false)] {
            guard let blob = hb_face_reference_table(face, hb_tag_from_string(tag, -1)) else { continue }
            blobs.append(blob)
            var length: UInt32 = 0
            let data = hb_blob_get_data(blob, &length)
            let table = FontTable(bytes: data.map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) }, count: Int(length))
            let lookups = hb_set_create()
            defer { hb_set_destroy(lookups) }
            hb_ot_shape_plan_collect_lookups(plan, hb_tag_from_string(tag, -1), lookups)
            var index = UInt32.max
            while hb_set_next(lookups, &index) != 0 {
                do {
                    subtables += try Self.actingSubtables(of: Int(index), in: table, isSubstitution: isSubstitution)
                } catch {
                    complete = false
                }
            }
        }
        self.blobs = blobs
        self.subtables = subtables
        reaches = subtables.map { try? Self.reach(of: $0) }
        memoizable = hb_face_get_glyph_count(face) < 0xFFFF
        if !complete { return nil }
    }

    deinit {
        for blob in blobs { hb_blob_destroy(blob) }
    }

    /// The subtables of one lookup that can act on glyphs other than by mark attachment, single
    /// adjustment or plain pair kerning.
    private static func actingSubtables(of lookup: Int, in table: FontTable, isSubstitution: Bool) throws(FontTable.Malformed) -> [Subtable] {
        let lookupList = try table.u16(8)
        guard lookupList != 0, lookup < (try table.u16(lookupList)) else { throw FontTable.Malformed() }
        let start = lookupList + (try table.u16(lookupList + 2 + 2 * lookup))
        let lookupType = try table.u16(start)
        let skipsBases = try table.u16(start + 2) & 0x2 != 0
        var found: [Subtable] = []
        for index in 0..<(try table.u16(start + 4)) {
            var offset = start + (try table.u16(start + 6 + 2 * index))
            var type = lookupType
            if type == (isSubstitution ? 7 : 9) {
                // Extension: the real type and a 32-bit offset from the extension subtable.
                type = try table.u16(offset + 2)
                offset += try table.u32(offset + 4)
                guard type != (isSubstitution ? 7 : 9) else { throw FontTable.Malformed() }
            }
            let kind: Kind?
            switch (isSubstitution, type) {
            case (true, 1), (true, 2), (true, 3), (true, 8), (false, 3): kind = .anyCovered
            case (true, 4): kind = .ligature
            case (true, 5), (false, 7): kind = .context
            case (true, 6), (false, 8): kind = .chainContext
            case (false, 1), (false, 4), (false, 5), (false, 6): kind = nil
            case (false, 2):
                // Pair adjustment: the next pair starts at the second glyph only when the second
                // value record is empty; otherwise adjacent pairs are not independent. Skipping
                // base glyphs, it may pair glyphs that are not adjacent.
                kind = try table.u16(offset + 6) == 0 && !skipsBases ? nil : .anyCovered
            default: throw FontTable.Malformed()
            }
            if let kind { found.append(Subtable(table: table, kind: kind, offset: offset, skipsBases: skipsBases)) }
        }
        return found
    }

    /// The subtables whose rules can start at the glyph, as bits (the last bit stands for every
    /// subtable from the 64th on; malformed coverage sets every bit, so `acts` looks and says yes).
    func subtableMask(startingAt glyph: UInt32) -> UInt64 {
        var mask: UInt64 = 0
        for (index, subtable) in subtables.enumerated() {
            do {
                switch try firstGlyphs(subtable) {
                case .any: mask |= Self.bit(index)
                case .covered(let coverage):
                    if try subtable.table.coverageIndex(coverage, Int(glyph)) != nil { mask |= Self.bit(index) }
                }
            } catch {
                return .max
            }
        }
        return mask
    }

    private static func bit(_ index: Int) -> UInt64 { 1 << UInt64(min(index, 63)) }

    private enum FirstGlyphs {
        /// The glyphs of a coverage table (none when the offset is null).
        case covered(Int?)
        /// A rule without input glyphs, which would match anywhere.
        case any
    }

    /// The glyphs a subtable's rules can start at: the coverage of their first input glyph.
    private func firstGlyphs(_ subtable: Subtable) throws(FontTable.Malformed) -> FirstGlyphs {
        let table = subtable.table
        let start = subtable.offset
        guard subtable.kind == .context || subtable.kind == .chainContext, try table.u16(start) == 3 else {
            return .covered(try table.offset(from: start, at: start + 2))
        }
        if subtable.kind == .context {
            guard try table.u16(start + 2) > 0 else { return .any }
            return .covered(try table.offset(from: start, at: start + 6))
        }
        let backtrack = try table.u16(start + 2)
        guard try table.u16(start + 4 + 2 * backtrack) > 0 else { return .any }
        return .covered(try table.offset(from: start, at: start + 6 + 2 * backtrack))
    }

    /// Whether one of the given subtables (bits from `subtableMask(startingAt:)`) would act on the
    /// glyphs, shaped on their own, at `position` (true for malformed tables).
    func acts(on glyphs: UnsafeBufferPointer<UInt32>, at position: Int, subtables mask: UInt64) -> Bool {
        guard let key = memoKey(glyphs, at: position, subtables: mask) else { return actsUncached(on: glyphs, at: position, subtables: mask) }
        if let known = memo[key] { return known }
        let result = actsUncached(on: glyphs, at: position, subtables: mask)
        // Bounded (a book of many scripts and faces must not grow it without end); the answers
        // are the same either way.
        if memo.count >= Self.memoLimit { memo.removeAll(keepingCapacity: true) }
        memo[key] = result
        return result
    }

    /// The glyph in the low 16 bits, then the glyphs before it and after it that the subtables
    /// can see, nearest first (0xFFFF past the run's edge): the same glyph always has the same
    /// subtables, so the same layout of neighbours. Nil when they see more than three glyphs
    /// around it or a table is malformed.
    private func memoKey(_ glyphs: UnsafeBufferPointer<UInt32>, at position: Int, subtables mask: UInt64) -> UInt64? {
        guard memoizable else { return nil }
        var reach = Reach()
        var bits = mask
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            // The last bit stands for every subtable from the 64th on.
            for subtable in index..<(index == 63 ? max(64, reaches.count) : index + 1) where subtable < reaches.count {
                guard let own = reaches[subtable] else { return nil }
                reach.extend(before: own.before, after: own.after)
            }
        }
        guard reach.before + reach.after <= 3 else { return nil }
        var key = UInt64(glyphs[position])
        var shift: UInt64 = 16
        func add(_ index: Int) {
            let glyph = index >= 0 && index < glyphs.count ? UInt64(glyphs[index]) : 0xFFFF
            key |= glyph << shift
            shift += 16
        }
        for step in 0..<reach.before { add(position - 1 - step) }
        for step in 0..<reach.after { add(position + 1 + step) }
        return key
    }

    private func actsUncached(on glyphs: UnsafeBufferPointer<UInt32>, at position: Int, subtables mask: UInt64) -> Bool {
        do {
            for (index, subtable) in subtables.enumerated() where mask & Self.bit(index) != 0 {
                if try matches(subtable, at: position, in: glyphs) { return true }
            }
            return false
        } catch {
            return true
        }
    }

    /// How far `matches` can look from the glyph at `position` for the subtable: the longest
    /// backtrack, and the longest rest of input plus lookahead, over all its rules.
    private static func reach(of subtable: Subtable) throws(FontTable.Malformed) -> Reach {
        var reach = Reach()
        let table = subtable.table
        let start = subtable.offset
        // A subtable that skips base glyphs is only asked whether its first glyph is covered.
        if subtable.skipsBases { return reach }
        switch subtable.kind {
        case .anyCovered:
            return reach
        case .ligature:
            for index in 0..<(try table.u16(start + 4)) {
                guard let set = try table.offset(from: start, at: start + 6 + 2 * index) else { continue }
                for ligature in 0..<(try table.u16(set)) {
                    let entry = set + (try table.u16(set + 2 + 2 * ligature))
                    reach.extend(after: try table.u16(entry + 2) - 1)
                }
            }
            return reach
        case .context, .chainContext:
            let chained = subtable.kind == .chainContext
            let format = try table.u16(start)
            // Format 3 is one rule with a coverage for every input glyph; formats 1 and 2 hold
            // the input glyphs after the first.
            if format == 3 { return try ruleReach(table, at: start + 2, chained: chained, storesFirstInput: true) }
            guard format == 1 || format == 2 else { throw FontTable.Malformed() }
            let setCountField = format == 1 ? start + 4 : chained ? start + 10 : start + 6
            for index in 0..<(try table.u16(setCountField)) {
                guard let set = try table.offset(from: start, at: setCountField + 2 + 2 * index) else { continue }
                for rule in 0..<(try table.u16(set)) {
                    let own = try ruleReach(table, at: set + (try table.u16(set + 2 + 2 * rule)), chained: chained, storesFirstInput: false)
                    reach.extend(before: own.before, after: own.after)
                }
            }
            return reach
        }
    }

    /// One contextual rule's reach, read from `field`: (chained) its backtrack count and glyphs,
    /// its input count and entries, then (chained) its lookahead count.
    private static func ruleReach(_ table: FontTable, at field: Int, chained: Bool, storesFirstInput: Bool) throws(FontTable.Malformed) -> Reach {
        var reach = Reach()
        var field = field
        if chained {
            let backtrack = try table.u16(field)
            reach.extend(before: backtrack)
            field += 2 + 2 * backtrack
        }
        let input = try table.u16(field)
        reach.extend(after: max(0, input - 1))
        if chained {
            let stored = storesFirstInput ? input : max(0, input - 1)
            reach.extend(after: max(0, input - 1) + (try table.u16(field + 2 + 2 * stored)))
        }
        return reach
    }

    private func matches(_ subtable: Subtable, at position: Int, in glyphs: UnsafeBufferPointer<UInt32>) throws(FontTable.Malformed) -> Bool {
        let table = subtable.table
        let start = subtable.offset
        let glyph = Int(glyphs[position])
        let format = try table.u16(start)
        if subtable.skipsBases {
            switch try firstGlyphs(subtable) {
            case .any: return true
            case .covered(let coverage): return try table.coverageIndex(coverage, glyph) != nil
            }
        }
        switch subtable.kind {
        case .anyCovered:
            return try table.coverageIndex(table.offset(from: start, at: start + 2), glyph) != nil
        case .ligature:
            guard let index = try table.coverageIndex(table.offset(from: start, at: start + 2), glyph), index < (try table.u16(start + 4)),
                let set = try table.offset(from: start, at: start + 6 + 2 * index)
            else { return false }
            for ligature in 0..<(try table.u16(set)) {
                let entry = set + (try table.u16(set + 2 + 2 * ligature))
                let components = try table.u16(entry + 2)
                guard components > 0 else { throw FontTable.Malformed() }
                if try sequence(components - 1, at: entry + 4, equals: glyphs, from: position + 1, table: table) { return true }
            }
            return false
        case .context, .chainContext:
            let chained = subtable.kind == .chainContext
            if format == 3 { return try matchesCoverageRule(table, start, chained: chained, at: position, in: glyphs) }
            guard format == 1 || format == 2 else { throw FontTable.Malformed() }
            guard let covered = try table.coverageIndex(table.offset(from: start, at: start + 2), glyph) else { return false }
            // Format 2 picks the rule set by the first glyph's input class, with class defs for
            // the backtrack, input and lookahead (chained) or the input alone.
            let classDefs: (backtrack: Int?, input: Int?, lookahead: Int?)
            let setCountField: Int
            if format == 1 {
                classDefs = (nil, nil, nil)
                setCountField = start + 4
            } else if chained {
                classDefs = (
                    try table.offset(from: start, at: start + 4), try table.offset(from: start, at: start + 6),
                    try table.offset(from: start, at: start + 8)
                )
                setCountField = start + 10
            } else {
                let input = try table.offset(from: start, at: start + 4)
                classDefs = (nil, input, nil)
                setCountField = start + 6
            }
            let setIndex = format == 1 ? covered : try table.glyphClass(classDefs.input, glyph)
            guard setIndex < (try table.u16(setCountField)), let set = try table.offset(from: start, at: setCountField + 2 + 2 * setIndex) else {
                return false
            }
            for rule in 0..<(try table.u16(set)) {
                var field = set + (try table.u16(set + 2 + 2 * rule))
                if chained {
                    let count = try table.u16(field)
                    guard position >= count else { continue }
                    // The backtrack runs backwards from the glyph before the first input glyph.
                    var matched = true
                    for step in 0..<count {
                        if !(try value(at: field + 2 + 2 * step, matches: glyphs[position - 1 - step], classDef: classDefs.backtrack, format, table)) {
                            matched = false
                            break
                        }
                    }
                    guard matched else { continue }
                    field += 2 + 2 * count
                }
                let inputCount = try table.u16(field)
                guard inputCount > 0 else { return true }
                // Contextual rules (type 5) hold a lookup-record count between the input count and its values.
                let inputValues = chained ? field + 2 : field + 4
                guard try values(inputCount - 1, at: inputValues, match: glyphs, from: position + 1, classDef: classDefs.input, format, table) else { continue }
                if !chained { return true }
                field = inputValues + 2 * (inputCount - 1)
                let lookahead = try table.u16(field)
                if try values(lookahead, at: field + 2, match: glyphs, from: position + inputCount, classDef: classDefs.lookahead, format, table) {
                    return true
                }
            }
            return false
        }
    }

    /// Format 3 contextual rules: one coverage per glyph of the backtrack, input and lookahead.
    private func matchesCoverageRule(
        _ table: FontTable, _ start: Int, chained: Bool, at position: Int, in glyphs: UnsafeBufferPointer<UInt32>
    ) throws(FontTable.Malformed) -> Bool {
        var field = start + 2
        if chained {
            let backtrack = try table.u16(field)
            guard position >= backtrack else { return false }
            for step in 0..<backtrack {
                guard try table.coverageIndex(table.offset(from: start, at: field + 2 + 2 * step), Int(glyphs[position - 1 - step])) != nil else {
                    return false
                }
            }
            field += 2 + 2 * backtrack
        }
        let input = try table.u16(field)
        guard input > 0 else { return true }
        // Type 5 format 3 holds the lookup-record count between the glyph count and the coverages.
        let coverages = chained ? field + 2 : field + 4
        guard position + input <= glyphs.count else { return false }
        for step in 0..<input {
            guard try table.coverageIndex(table.offset(from: start, at: coverages + 2 * step), Int(glyphs[position + step])) != nil else {
                return false
            }
        }
        guard chained else { return true }
        field = coverages + 2 * input
        let lookahead = try table.u16(field)
        guard position + input + lookahead <= glyphs.count else { return false }
        for step in 0..<lookahead {
            guard try table.coverageIndex(table.offset(from: start, at: field + 2 + 2 * step), Int(glyphs[position + input + step])) != nil else {
                return false
            }
        }
        return true
    }

    /// Whether `count` glyph ids stored from `field` equal the glyphs from `first` on.
    private func sequence(_ count: Int, at field: Int, equals glyphs: UnsafeBufferPointer<UInt32>, from first: Int, table: FontTable) throws(FontTable.Malformed) -> Bool {
        guard first + count <= glyphs.count else { return false }
        for step in 0..<count {
            if try table.u16(field + 2 * step) != Int(glyphs[first + step]) { return false }
        }
        return true
    }

    /// Whether `count` rule values (glyph ids in format 1, classes in format 2) match the glyphs from `first` on.
    private func values(
        _ count: Int, at field: Int, match glyphs: UnsafeBufferPointer<UInt32>, from first: Int, classDef: Int?, _ format: Int, _ table: FontTable
    ) throws(FontTable.Malformed) -> Bool {
        guard first + count <= glyphs.count else { return false }
        for step in 0..<count {
            if !(try value(at: field + 2 * step, matches: glyphs[first + step], classDef: classDef, format, table)) { return false }
        }
        return true
    }

    private func value(at field: Int, matches glyph: UInt32, classDef: Int?, _ format: Int, _ table: FontTable) throws(FontTable.Malformed) -> Bool {
        let stored = try table.u16(field)
        return format == 1 ? stored == Int(glyph) : stored == (try table.glyphClass(classDef, Int(glyph)))
    }
}

/// Big-endian reads from one font table, bounds-checked: a book's fonts may be malformed, and
/// these bytes come straight from the file (HarfBuzz sanitizes only its own view of them).
struct FontTable {
    struct Malformed: Error {}

    let bytes: UnsafePointer<UInt8>?
    let count: Int

    func u16(_ at: Int) throws(Malformed) -> Int {
        guard let bytes, at >= 0, at + 2 <= count else { throw Malformed() }
        return Int(bytes[at]) << 8 | Int(bytes[at + 1])
    }

    func u32(_ at: Int) throws(Malformed) -> Int { (try u16(at)) << 16 | (try u16(at + 2)) }

    /// Where a 16-bit offset stored at `field` and counted from `base` points; nil for a null offset.
    func offset(from base: Int, at field: Int) throws(Malformed) -> Int? {
        let offset = try u16(field)
        return offset == 0 ? nil : base + offset
    }

    /// HarfBuzz's sanitizer drops a coverage or class table that runs past the table's end (a
    /// dropped class table puts every glyph in class 0, so rules match *more*): such a table is
    /// malformed here too, whichever entry a lookup reads.
    private func requireWhole(_ end: Int) throws(Malformed) {
        guard end <= count else { throw Malformed() }
    }

    /// The glyph's index in a coverage table, nil when it is not covered (or the table is null).
    /// The search visits entries in the order HarfBuzz's does, so an unsorted table gives the
    /// index HarfBuzz finds.
    func coverageIndex(_ coverage: Int?, _ glyph: Int) throws(Malformed) -> Int? {
        guard let coverage else { return nil }
        switch try u16(coverage) {
        case 1:
            let count = try u16(coverage + 2)
            try requireWhole(coverage + 4 + 2 * count)
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high - 1) / 2
                let value = try u16(coverage + 4 + 2 * middle)
                if value == glyph { return middle }
                if value < glyph { low = middle + 1 } else { high = middle }
            }
        case 2:
            guard let range = try rangeRecord(at: coverage + 2, glyph) else { return nil }
            return try u16(range + 4) + glyph - (try u16(range))
        default: throw Malformed()
        }
        return nil
    }

    /// The range record (first glyph, last glyph, value: 6 bytes) holding the glyph, in the
    /// count-prefixed array at `countField` that format-2 coverage and class tables share.
    private func rangeRecord(at countField: Int, _ glyph: Int) throws(Malformed) -> Int? {
        var low = 0
        var high = try u16(countField)
        try requireWhole(countField + 2 + 6 * high)
        while low < high {
            let middle = (low + high - 1) / 2
            let range = countField + 2 + 6 * middle
            if glyph < (try u16(range)) {
                high = middle
            } else if glyph > (try u16(range + 2)) {
                low = middle + 1
            } else {
                return range
            }
        }
        return nil
    }

    /// The glyph's class in a class definition table (0 when it is not listed or the table is null).
    func glyphClass(_ classDef: Int?, _ glyph: Int) throws(Malformed) -> Int {
        guard let classDef else { return 0 }
        switch try u16(classDef) {
        case 1:
            let first = try u16(classDef + 2)
            let count = try u16(classDef + 4)
            try requireWhole(classDef + 6 + 2 * count)
            return glyph >= first && glyph < first + count ? try u16(classDef + 6 + 2 * (glyph - first)) : 0
        case 2:
            guard let range = try rangeRecord(at: classDef + 2, glyph) else { return 0 }
            return try u16(range + 4)
        default: throw Malformed()
        }
    }
}
