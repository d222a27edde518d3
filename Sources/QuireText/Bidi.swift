import CFribidi

/// Unicode bidirectional algorithm through fribidi: embedding levels per character, and the
/// visual order of runs on a line (rule L2). Mirroring of brackets is left to HarfBuzz, which
/// mirrors in right-to-left runs.
public enum Bidi {
    /// True when the text may need the bidi algorithm (an RTL character or an explicit control).
    public static func needsResolution(_ text: [UInt16]) -> Bool {
        // Nearly every unit of a European book is below Hebrew: one comparison each, not the ranges.
        for unit in text where unit >= 0x0590 {
            switch unit {
            case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x200F, 0x202B, 0x202E, 0x2067, 0xD802, 0xD803, 0xD83A, 0xD83B:
                return true
            default: continue
            }
        }
        return false
    }

    /// Embedding levels per UTF-16 unit (both halves of a surrogate pair get the pair's level).
    /// `rightToLeft` nil means "auto": the first strong character decides (HTML `dir=auto`).
    public static func levels(_ text: [UInt16], rightToLeft: Bool?) -> (levels: [UInt8], paragraphRTL: Bool) {
        let scalars = Array(String(decoding: text, as: UTF16.self).unicodeScalars)
        var codepoints = scalars.map { FriBidiChar($0.value) }
        let count = codepoints.count
        var types = [FriBidiCharType](repeating: FriBidiCharType(rawValue: 0), count: count)
        var brackets = [FriBidiBracketType](repeating: 0, count: count)
        var levels = [FriBidiLevel](repeating: 0, count: count)
        fribidi_get_bidi_types(&codepoints, FriBidiStrIndex(count), &types)
        fribidi_get_bracket_types(&codepoints, FriBidiStrIndex(count), &types, &brackets)
        var direction: FriBidiParType
        switch rightToLeft {
        case .some(true): direction = FRIBIDI_PAR_RTL
        case .some(false): direction = FRIBIDI_PAR_LTR
        case .none: direction = FRIBIDI_PAR_ON
        }
        let maxLevel = fribidi_get_par_embedding_levels_ex(
            &types, &brackets, FriBidiStrIndex(count), &direction, &levels)
        var unitLevels: [UInt8] = []
        unitLevels.reserveCapacity(text.count)
        let paragraphRTL = direction == FRIBIDI_PAR_RTL
        for (index, scalar) in scalars.enumerated() {
            let level = maxLevel == 0 ? (paragraphRTL ? 1 : 0) : UInt8(clamping: Int(levels[index]))
            unitLevels.append(level)
            if scalar.value > 0xFFFF { unitLevels.append(level) }
        }
        return (unitLevels, paragraphRTL)
    }

    /// Rule L2: the visual order of runs given each run's level (reverse every maximal sequence
    /// at or above each level, from the highest level down to the lowest odd level).
    public static func visualOrder(levels: [UInt8]) -> [Int] {
        var order = Array(levels.indices)
        guard let highest = levels.max(), highest > 0 else { return order }
        let lowestOdd = max(1, (levels.min() ?? 0) | 1)
        var level = highest
        while level >= lowestOdd {
            var index = 0
            while index < order.count {
                if levels[order[index]] >= level {
                    var end = index
                    while end < order.count && levels[order[end]] >= level { end += 1 }
                    order[index..<end].reverse()
                    index = end
                } else {
                    index += 1
                }
            }
            level -= 1
        }
        return order
    }
}
