/// Paragraph line breaking over boxes, glue and penalties: Knuth–Plass total fit for justified
/// text, first fit (greedy) as the fallback for very long paragraphs, for paragraphs that cannot
/// be set within tolerance, and for ragged text.
public enum BreakItem: Sendable, Hashable {
    case box(width: Double)
    case glue(width: Double, stretch: Double, shrink: Double)
    /// `flagged` marks a hyphenation break (a hyphen of `width` appears when the line breaks here).
    case penalty(width: Double, penalty: Double, flagged: Bool)

    public static let infinitePenalty = 10_000.0
    public static let forcedBreak = BreakItem.penalty(width: 0, penalty: -infinitePenalty, flagged: false)

    var width: Double {
        switch self {
        case .box(let width): return width
        case .glue(let width, _, _): return width
        case .penalty(let width, _, _): return width
        }
    }
}

public struct LineBreakParameters: Sendable, Hashable {
    /// Maximum adjustment ratio (TeX's tolerance 200 ≈ ratio 1.26; we allow a little more).
    public var tolerance: Double = 2.0
    public var linePenalty: Double = 10
    public var flaggedDemerits: Double = 3000
    public var fitnessDemerits: Double = 3000
    /// No more than this many hyphenated lines in a row.
    public var maxConsecutiveHyphens = 2
    /// Paragraphs with more items than this go to the greedy breaker (total fit is quadratic in
    /// the number of active nodes; this keeps pathological paragraphs cheap).
    public var maxTotalFitItems = 20_000

    public init() {}
}

public struct LineBreaks: Sendable, Hashable {
    /// The item index of each chosen break; the last is the paragraph's final forced penalty.
    public var breaks: [Int]
    /// Adjustment ratio per line: positive stretches glue, negative shrinks it.
    public var ratios: [Double]
    public var usedTotalFit: Bool
}

public enum LineBreaker {
    /// Total fit, retried once with a looser tolerance; greedy when no feasible set exists.
    public static func breakLines(
        _ items: [BreakItem], lineWidth: (Int) -> Double, parameters: LineBreakParameters = LineBreakParameters()
    ) -> LineBreaks {
        if items.count <= parameters.maxTotalFitItems {
            if let result = knuthPlass(items, lineWidth: lineWidth, parameters: parameters) { return result }
            var loose = parameters
            loose.tolerance = parameters.tolerance * 2.5
            if let result = knuthPlass(items, lineWidth: lineWidth, parameters: loose) { return result }
        }
        return greedy(items, lineWidth: lineWidth)
    }

    /// A feasible break, stored in an arena (indices, not references: no reference counting in the hot loop).
    private struct Node {
        var position: Int32
        var line: Int32
        var fitness: Int8
        var hyphenRun: Int8
        var previous: Int32
        var width: Double
        var stretch: Double
        var shrink: Double
        var demerits: Double
        var ratio: Double
    }

    /// Knuth & Plass (1981), with fitness classes, flagged (hyphen) demerits and a hard limit on
    /// consecutive hyphenated lines. Returns nil when no break sequence keeps every line within tolerance.
    public static func knuthPlass(
        _ items: [BreakItem], lineWidth: (Int) -> Double, parameters: LineBreakParameters
    ) -> LineBreaks? {
        guard !items.isEmpty else { return LineBreaks(breaks: [], ratios: [], usedTotalFit: true) }
        var sumWidth = 0.0
        var sumStretch = 0.0
        var sumShrink = 0.0
        var nodes: [Node] = [
            Node(position: 0, line: 0, fitness: 1, hyphenRun: 0, previous: -1, width: 0, stretch: 0, shrink: 0, demerits: 0, ratio: 0)
        ]
        var active: [Int32] = [0]
        var survivors: [Int32] = []
        // Totals at the start of a line after a break at `index` (discardable items skipped).
        func totalsAfter(_ index: Int) -> (Double, Double, Double) {
            var width = sumWidth
            var stretch = sumStretch
            var shrink = sumShrink
            var cursor = index
            while cursor < items.count {
                switch items[cursor] {
                case .box: return (width, stretch, shrink)
                case .glue(let w, let y, let z):
                    width += w
                    stretch += y
                    shrink += z
                case .penalty(_, let p, _):
                    if p <= -BreakItem.infinitePenalty && cursor > index { return (width, stretch, shrink) }
                }
                cursor += 1
            }
            return (width, stretch, shrink)
        }

        func tryBreak(_ index: Int, penalty: Double, penaltyWidth: Double, flagged: Bool) {
            var candidates: (Int32, Int32, Int32, Int32) = (-1, -1, -1, -1)
            var candidateDemerits: (Double, Double, Double, Double) = (.infinity, .infinity, .infinity, .infinity)
            var candidateData = [Node](repeating: nodes[0], count: 4)
            survivors.removeAll(keepingCapacity: true)
            let forced = penalty <= -BreakItem.infinitePenalty
            for nodeIndex in active {
                let node = nodes[Int(nodeIndex)]
                let length = sumWidth - node.width + penaltyWidth
                let target = lineWidth(Int(node.line))
                var ratio: Double
                if length < target {
                    let stretch = sumStretch - node.stretch
                    ratio = stretch > 0 ? (target - length) / stretch : .infinity
                } else if length > target {
                    let shrink = sumShrink - node.shrink
                    ratio = shrink > 0 ? (target - length) / shrink : -.infinity
                } else {
                    ratio = 0
                }
                if !(ratio < -1 || forced) { survivors.append(nodeIndex) }
                guard ratio >= -1, ratio <= parameters.tolerance || (forced && ratio.isInfinite && ratio > 0) else { continue }
                let hyphenRun = flagged ? Int(node.hyphenRun) + 1 : 0
                if hyphenRun > parameters.maxConsecutiveHyphens { continue }
                // The last line's fill glue has (near) infinite stretch; treat it as a perfect fit.
                let effectiveRatio = ratio.isInfinite ? 0 : ratio
                let badness = 100 * pow3(abs(effectiveRatio))
                var demerits: Double
                if penalty >= 0 {
                    demerits = pow2(parameters.linePenalty + badness) + pow2(penalty)
                } else if !forced {
                    demerits = pow2(parameters.linePenalty + badness) - pow2(penalty)
                } else {
                    demerits = pow2(parameters.linePenalty + badness)
                }
                if flagged && node.hyphenRun > 0 { demerits += parameters.flaggedDemerits }
                let fitness: Int
                if effectiveRatio < -0.5 { fitness = 0 } else if effectiveRatio <= 0.5 { fitness = 1 } else if effectiveRatio <= 1 { fitness = 2 } else { fitness = 3 }
                if abs(fitness - Int(node.fitness)) > 1 { demerits += parameters.fitnessDemerits }
                demerits += node.demerits
                let current: Double
                switch fitness {
                case 0: current = candidateDemerits.0
                case 1: current = candidateDemerits.1
                case 2: current = candidateDemerits.2
                default: current = candidateDemerits.3
                }
                if demerits < current {
                    switch fitness {
                    case 0: candidateDemerits.0 = demerits; candidates.0 = nodeIndex
                    case 1: candidateDemerits.1 = demerits; candidates.1 = nodeIndex
                    case 2: candidateDemerits.2 = demerits; candidates.2 = nodeIndex
                    default: candidateDemerits.3 = demerits; candidates.3 = nodeIndex
                    }
                    candidateData[fitness] = Node(
                        position: Int32(index), line: node.line + 1, fitness: Int8(fitness), hyphenRun: Int8(hyphenRun),
                        previous: nodeIndex, width: 0, stretch: 0, shrink: 0, demerits: demerits, ratio: effectiveRatio)
                }
            }
            swap(&active, &survivors)
            let demeritsList = [candidateDemerits.0, candidateDemerits.1, candidateDemerits.2, candidateDemerits.3]
            let best = demeritsList.min() ?? .infinity
            guard best < .infinity else { return }
            let (width, stretch, shrink) = totalsAfter(index)
            for fitness in 0..<4 where demeritsList[fitness] <= best + parameters.fitnessDemerits {
                var node = candidateData[fitness]
                node.width = width
                node.stretch = stretch
                node.shrink = shrink
                nodes.append(node)
                active.append(Int32(nodes.count - 1))
            }
            _ = candidates
        }

        for index in items.indices {
            switch items[index] {
            case .box(let width):
                sumWidth += width
            case .glue(let width, let stretch, let shrink):
                if index > 0, case .box = items[index - 1] {
                    tryBreak(index, penalty: 0, penaltyWidth: 0, flagged: false)
                    if active.isEmpty { return nil }
                }
                sumWidth += width
                sumStretch += stretch
                sumShrink += shrink
            case .penalty(let width, let p, let flagged):
                if p < BreakItem.infinitePenalty {
                    tryBreak(index, penalty: p, penaltyWidth: width, flagged: flagged)
                    if active.isEmpty { return nil }
                }
            }
        }

        guard let best = active.filter({ nodes[Int($0)].position == items.count - 1 }).min(by: { nodes[Int($0)].demerits < nodes[Int($1)].demerits }) else {
            return nil
        }
        var breaks: [Int] = []
        var ratios: [Double] = []
        var cursor = Int(best)
        while nodes[cursor].previous >= 0 {
            breaks.append(Int(nodes[cursor].position))
            ratios.append(nodes[cursor].ratio)
            cursor = Int(nodes[cursor].previous)
        }
        return LineBreaks(breaks: breaks.reversed(), ratios: ratios.reversed(), usedTotalFit: true)
    }

    /// First fit: each line takes as much as fits; a break at a hyphenation point only when the
    /// next word does not fit whole. A box wider than the line overflows rather than vanishing.
    public static func greedy(_ items: [BreakItem], lineWidth: (Int) -> Double) -> LineBreaks {
        var items = items
        return greedy(&items, lineWidth: lineWidth, split: nil)
    }

    /// Greedy breaking that hyphenates lazily: when a box does not fit, `split` may replace it by
    /// its fragments (boxes with flagged penalties between them), and the line is scanned on from
    /// the first fragment. Greedy lines only ever break inside the word that overflows, so the
    /// other words need no hyphenation: a dictionary lookup per line instead of per word, and
    /// whole words keep their own widths (the widths they are drawn with) instead of the sum of
    /// their fragments'. `split` is told the room left on the line, or nil when the line has no
    /// break yet (any fragment is better than none); it splits only when a first fragment and its
    /// hyphen fit that room, so a word that moves to the next line moves whole.
    public static func greedy(_ items: inout [BreakItem], lineWidth: (Int) -> Double, split: ((_ index: Int, _ room: Double?) -> [BreakItem]?)?) -> LineBreaks {
        var breaks: [Int] = []
        var ratios: [Double] = []
        var lineStart = 0
        var index = 0
        while lineStart < items.count {
            let target = lineWidth(breaks.count)
            var width = 0.0
            var stretch = 0.0
            var shrink = 0.0
            var lastBreak: (index: Int, width: Double, stretch: Double, shrink: Double)?
            var chosen: (index: Int, width: Double, stretch: Double, shrink: Double)?
            index = lineStart
            // Skip discardable items at the start of a line.
            while index < items.count, case .glue = items[index] { index += 1 }
            while index < items.count {
                let item = items[index]
                switch item {
                case .box(let w):
                    let fits = width + w <= target || hangs(items, after: index, width: width + w, target: target)
                    if !fits, let split, let fragments = split(index, lastBreak == nil ? nil : target - width) {
                        items.replaceSubrange(index...index, with: fragments)
                        continue
                    }
                    if !fits && lastBreak != nil {
                        chosen = lastBreak
                    } else {
                        width += w
                    }
                case .glue(let w, let y, let z):
                    if index > lineStart, case .box = items[index - 1] {
                        lastBreak = (index, width, stretch, shrink)
                    }
                    width += w
                    stretch += y
                    shrink += z
                case .penalty(let w, let p, _):
                    if p <= -BreakItem.infinitePenalty {
                        chosen = (index, width + w, stretch, shrink)
                    } else if p < BreakItem.infinitePenalty {
                        if width + w <= target || lastBreak == nil { lastBreak = (index, width + w, stretch, shrink) }
                    }
                }
                if chosen != nil { break }
                index += 1
            }
            let line = chosen ?? lastBreak ?? (items.count - 1, width, stretch, shrink)
            let ratio: Double
            if line.width < target {
                ratio = line.stretch > 0 ? min((target - line.width) / line.stretch, 1e6) : 0
            } else {
                ratio = line.shrink > 0 ? max((target - line.width) / line.shrink, -1) : 0
            }
            breaks.append(line.index)
            ratios.append(ratio)
            lineStart = line.index + 1
            if line.index >= items.count - 1 { break }
        }
        return LineBreaks(breaks: breaks, ratios: ratios, usedTotalFit: false)
    }

    /// Whether a box that overflows the line by itself fits with the break after it, a penalty of
    /// negative width (a stop or comma that may hang past the line's end), past empty glue and
    /// the no-break before a paragraph's fill.
    private static func hangs(_ items: [BreakItem], after index: Int, width: Double, target: Double) -> Bool {
        var cursor = index + 1
        while cursor < items.count {
            switch items[cursor] {
            case .box: return false
            case .glue(let w, _, _): if w != 0 { return false }
            case .penalty(let w, let p, _):
                if p < BreakItem.infinitePenalty { return w < 0 && width + w <= target }
                if w != 0 { return false }
            }
            cursor += 1
        }
        return false
    }

    @inline(__always) private static func pow2(_ x: Double) -> Double { x * x }
    @inline(__always) private static func pow3(_ x: Double) -> Double { x * x * x }
}
