import QuireCore
import QuireStyle
import QuireText

/// Shared, thread-safe text services, and per-worker state (the shaping cache is not shared).
public final class TextServices: Sendable {
    public let fonts: FontCollection
    public let hyphenator: Hyphenator

    public init(fonts: FontCollection, hyphenator: Hyphenator = Hyphenator()) {
        self.fonts = fonts
        self.hyphenator = hyphenator
    }
}

/// One laid-out line, positioned relative to its paragraph's content box (x) and its own top (y).
struct LineBox {
    /// No page break after this line (the lines beside a drop cap stay with it).
    var keepWithNext = false
    var height: Double
    var baseline: Double
    var items: [DisplayItem]
    var start: Int
    var end: Int
    var left: Double
    var width: Double
}

/// Inline formatting: a paragraph's text is split into segments (per style, bidi level, font and
/// break opportunity), shaped, turned into boxes/glue/penalties, broken into lines, and positioned.
final class InlineLayout {
    /// Words wider than the line break anywhere, whatever `overflow-wrap` says: set while the
    /// cells of a table too wide for the page are laid out, so text stays inside its cell.
    var breaksOverlongWords = false
    /// The chapter's archive path, which background image URLs from style attributes are relative to.
    var documentPath = ""
    /// The chapter is set in columns (`writing-mode: vertical-rl`): its lines are laid out as
    /// horizontal ones on the turned page, with upright characters shaped top to bottom (see
    /// VerticalText.swift).
    var vertical = false
    let services: TextServices
    let shaper: Shaper
    let caches: InlineCaches
    /// Map-only layout: lines are measured and broken but no display items are built.
    let buildItems: Bool
    let styles: [ComputedStyle]
    let scale: Double
    let bookLanguage: String?
    let hyphenate: Bool
    /// Some style asks for `hanging-punctuation`: without one, no word or line is checked for it.
    let mayHang: Bool

    init(
        services: TextServices, shaper: Shaper, caches: InlineCaches, buildItems: Bool, styles: [ComputedStyle], scale: Double,
        bookLanguage: String?, hyphenate: Bool
    ) {
        self.services = services
        self.shaper = shaper
        self.caches = caches
        self.buildItems = buildItems
        self.styles = styles
        self.scale = scale
        self.bookLanguage = bookLanguage
        self.hyphenate = hyphenate
        self.mayHang = styles.contains { $0.hangingPunctuation != .none }
    }

    enum SegmentKind { case text, space, atom, forcedBreak }

    /// (Fields are declared so that the struct packs into 64 bytes: the one-byte flags fill the
    /// gaps beside `level` and `kind`; a paragraph holds a segment for every word and space.)
    struct Segment {
        var start: Int
        var end: Int
        var style: Int
        var level: UInt8
        /// A hyphenation point follows this segment (inside the same word).
        var hyphenAfter = false
        /// A piece of a word split at its hyphenation points (never split again).
        var fragment = false
        /// An inline box opens or closes at the segment's start: a line piece never runs across it.
        var boxBoundary = false
        /// Index into the chapter's face table (`caches.faces`); -1 for breaks and atoms.
        var face: Int32
        var kind: SegmentKind
        /// Upright characters in vertical text, shaped top to bottom.
        var upright = false
        /// `text-combine-upright: all` in vertical text: the run set horizontally in one em of the
        /// column (tate-chu-yoko), shaped left to right.
        var combined = false
        /// The shaper's parameter id for text (style, face and direction); -1 for other kinds.
        var parameter: Int32 = -1
        var width: Double = 0
        /// Device px of inline box edges (margin, border, padding) before and after the segment's
        /// own content, included in `width`: the boxes that open at its start and close at its end.
        var leading = 0.0
        var trailing = 0.0
    }

    struct Metrics {
        var top: Double
        var bottom: Double
    }

    func fontSize(_ style: ComputedStyle) -> Double { style.fontSize * scale }

    /// Segments refer to faces by index so copying them costs no reference counting.
    func faceIndex(_ face: FontFace) -> Int32 {
        let id = PackedKey(UInt64(UInt(bitPattern: ObjectIdentifier(face))))
        if let index = caches.faceIndex[id] { return index }
        caches.faces.append(face)
        let index = Int32(caches.faces.count - 1)
        caches.faceIndex[id] = index
        return index
    }

    func face(_ index: Int32) -> FontFace { caches.faces[Int(index)] }

    func request(_ style: ComputedStyle) -> FontRequest { FontRequest(style: style, bookLanguage: bookLanguage) }

    /// The face index of the fallback for a character its style's primary face lacks (the primary
    /// when none has it), asked of the font collection once per chapter, style and character: its
    /// answer is cached too, but behind a lock and a key of strings, for every such character.
    func fallbackFaceIndex(_ scalar: Unicode.Scalar, style: Int, primary: FontFace) -> Int32 {
        let key = PackedKey(style, Int(scalar.value), 0)
        if let known = caches.fallbackFaces[key] { return known }
        let index = faceIndex(services.fonts.fallbackFace(for: scalar, request: request(styles[style])) ?? primary)
        caches.fallbackFaces[key] = index
        return index
    }

    /// The primary face of a run style, resolved once per chapter (resolution takes a lock and string work).
    func primaryFace(style index: Int) -> FontFace {
        if let face = caches.primaryFaces[index] { return face }
        let face = services.fonts.primaryFace(for: request(styles[index]), bookFonts: caches.bookFonts)
        caches.primaryFaces[index] = face
        return face
    }

    func features(_ style: ComputedStyle, face: FontFace) -> [FontFeature] {
        var features = style.fontFeatures
        switch style.fontVariantCaps {
        case .smallCaps: if face.hasSmallCaps { features.append(FontFeature("smcp")) }
        case .allSmallCaps:
            if face.hasSmallCaps {
                features.append(FontFeature("smcp"))
                features.append(FontFeature("c2sc"))
            }
        case .normal: break
        }
        if style.letterSpacing != 0 { features.append(FontFeature("liga", 0)) }
        return features
    }

    func parameters(_ style: ComputedStyle, face: FontFace, rtl: Bool, upright: Bool = false)
        -> ShapingParameters
    {
        ShapingParameters(
            face: face, size: fontSize(style), features: features(style, face: face),
            rightToLeft: rtl && !upright,
            language: style.language ?? bookLanguage, vertical: upright)
    }

    /// The shaper's parameter id for a style run in a face and direction, looked up once per chapter.
    func parameterID(style index: Int, face: FontFace, rtl: Bool, upright: Bool = false) -> Int {
        let key = PackedKey(index, Int(faceIndex(face)), upright ? 2 : rtl ? 1 : 0)
        if let id = caches.parameterIDs[key] { return id }
        let id = shaper.parameterID(parameters(styles[index], face: face, rtl: rtl, upright: upright))
        caches.parameterIDs[key] = id
        return id
    }

    func shape(
        _ text: ArraySlice<UInt16>, style: Int, face: FontFace, rtl: Bool, upright: Bool = false
    ) -> ShapedText {
        shaper.shape(
            text, parameterID: parameterID(style: style, face: face, rtl: rtl, upright: upright))
    }

    /// Whether a character of vertical text stands upright (`text-orientation`; `mixed` follows
    /// UAX #50: CJK upright, Latin and digits on their side).
    func isUpright(_ scalar: Unicode.Scalar, orientation: TextOrientation) -> Bool {
        switch orientation {
        case .upright: return true
        case .sideways: return false
        case .mixed: return UnicodeInfo.isUprightInVerticalText(scalar)
        }
    }

    /// How far a column's centre line sits above the line's baseline, for text of a style: midway
    /// between its primary face's ascent and descent (CSS's central baseline), whatever face
    /// the upright glyphs come from, so that fallback glyphs and tate-chu-yoko line up with it.
    func uprightCentre(style index: Int) -> Double {
        let face = primaryFace(style: index)
        let size = fontSize(styles[index])
        return (face.ascent(at: size) - face.descent(at: size)) / 2
    }

    /// How far the over side of a column's upright characters (their em boxes' right edge) sits
    /// above the turned line's baseline: where its ruby and emphasis marks start.
    func uprightTop(style index: Int) -> Double { uprightCentre(style: index) + fontSize(styles[index]) / 2 }

    /// The half-leading around a column's em boxes, which ruby and emphasis marks may take before
    /// they widen the column's line (as browsers set them): none when lines are set solid.
    func uprightLeading(style index: Int) -> Double {
        let style = styles[index]
        return max(0, (style.lineHeightPx(normalFactor: primaryFace(style: index).normalLineHeightFactor) * scale - fontSize(style)) / 2)
    }

    /// Vertical extent of an inline box of this style around the baseline.
    func metrics(_ style: ComputedStyle, face: FontFace) -> Metrics {
        let size = fontSize(style)
        let ascent = face.ascent(at: size)
        let descent = face.descent(at: size)
        let lineHeight = style.lineHeightPx(normalFactor: face.normalLineHeightFactor) * scale
        let halfLeading = (lineHeight - ascent - descent) / 2
        let shift = baselineShift(style)
        return Metrics(top: ascent + halfLeading + shift, bottom: descent + halfLeading - shift)
    }

    /// A text piece's extent around the baseline, with room for emphasis marks over it: the same
    /// for every piece of one style in one face, so it is found once per chapter.
    func pieceMetrics(style index: Int, face faceIndex: Int32) -> Metrics {
        let key = PackedKey(index, Int(faceIndex), 0)
        if let cached = caches.pieceMetrics[key] { return cached }
        let style = styles[index]
        let face = face(faceIndex)
        // A set line-height spaces lines by the element's primary font, as browsers do: a
        // fallback font's taller ascent (CJK text in a Latin book) must not open the lines up.
        // Only `normal` takes the metrics of every font used.
        let spacingFace: FontFace
        if case .normal = style.lineHeight { spacingFace = face } else { spacingFace = primaryFace(style: index) }
        var result = metrics(style, face: spacingFace)
        if let emphasis = style.textEmphasis, let mark = emphasisMark(emphasis, style: style) {
            let size = fontSize(style) / 2
            // In a column, the marks' em boxes stand beside the characters' em boxes.
            switch (vertical, emphasis.under) {
            case (true, false):
                result.top = max(result.top, uprightTop(style: index) + baselineShift(style) + max(0, size - uprightLeading(style: index)))
            case (true, true):
                let emBottom = fontSize(style) - uprightTop(style: index)
                result.bottom = max(result.bottom, emBottom - baselineShift(style) + max(0, size - uprightLeading(style: index)))
            case (false, false):
                // (Summed in this order: horizontal lines keep their offsets to the bit.)
                result.top = max(result.top, face.ascent(at: fontSize(style)) + baselineShift(style) + mark.face.ascent(at: size) + mark.face.descent(at: size))
            case (false, true):
                result.bottom = max(result.bottom, face.descent(at: fontSize(style)) - baselineShift(style) + mark.face.ascent(at: size) + mark.face.descent(at: size))
            }
        }
        caches.pieceMetrics[key] = result
        return result
    }

    func baselineShift(_ style: ComputedStyle) -> Double {
        switch style.verticalAlign {
        case .super: return fontSize(style) * 0.4
        case .sub: return -fontSize(style) * 0.25
        case .length(let length):
            return length.resolve(against: style.lineHeightPx() * scale) * (length == .zero ? 0 : 1) * (isPercent(length) ? 1 : scale)
        default: return 0
        }
    }

    private func isPercent(_ length: Length) -> Bool {
        if case .percent = length { return true }
        return false
    }

    // MARK: Segmentation

    func segments(_ paragraph: Paragraph, levels: [UInt8]?, breaks: [Bool]) -> [Segment] {
        let text = paragraph.text
        let dropRange = paragraph.dropCap?.range
        let hasAtoms = !paragraph.atoms.isEmpty
        let vertical = self.vertical  // read once, not per character
        let noLevels = [UInt8](filling: 0, count: levels == nil ? text.count : 0)
        let levels = levels ?? noLevels
        var result: [Segment] = []
        // A word and its space for every six characters or so: room for a text of short words
        // (growing the array copied its 64-byte segments, 1% of a book's layout).
        result.reserveCapacity(text.count / 2 + 4)
        for run in paragraph.runs {
            let primary = primaryFace(style: run.style)
            let primaryIndex = faceIndex(primary)
            let primaryLatin = primary.latinCoverage
            // Consecutive words nearly always share face and direction: the last lookup is reused.
            var lastFaceIndex: Int32 = -1
            var lastLevel: UInt8 = 0
            var lastUpright = false
            var lastParameter: Int32 = -1
            let orientation = styles[run.style].textOrientation
            if vertical, styles[run.style].textCombineUpright == .all {
                // One segment per element that sets it (neighbours of one style stay apart).
                let pieces = paragraph.combinedRanges.filter { $0.overlaps(run.start..<run.end) }
                    .map { max($0.lowerBound, run.start)..<min($0.upperBound, run.end) }
                for range in pieces.isEmpty ? [run.start..<run.end] : pieces {
                    if let combined = combinedSegment(
                        StyleRun(start: range.lowerBound, end: range.upperBound, style: run.style), paragraph,
                        levels: levels)
                    {
                        result.append(combined)
                    }
                }
                continue
            }
            var index = run.start
            while index < run.end {
                if let drop = dropRange, drop.contains(index) {
                    index = min(drop.upperBound, run.end)
                    continue
                }
                let unit = text[index]
                let level = levels[index]
                if unit == 0x20 {
                    var end = index + 1
                    while end < run.end && text[end] == 0x20 && levels[end] == level { end += 1 }
                    result.append(Segment(start: index, end: end, style: run.style, level: level, face: primaryIndex, kind: .space))
                    index = end
                    continue
                }
                if unit == 0x2028 || unit == 0x0A {
                    result.append(Segment(start: index, end: index + 1, style: run.style, level: level, face: -1, kind: .forcedBreak))
                    index += 1
                    continue
                }
                if unit == 0xFFFC, hasAtoms, paragraph.atoms[index] != nil {
                    result.append(Segment(start: index, end: index + 1, style: run.style, level: level, face: -1, kind: .atom))
                    index += 1
                    continue
                }
                // A text segment: up to a space, a break opportunity, a level change or a font change.
                var end = index
                /// The segment's face, by index into the chapter's face table (-1 until its first character).
                var segmentFace: Int32 = -1
                var segmentUpright = false
                if !vertical {
                    // The usual word, in one tight pass; the loop below goes on from where it stops.
                    end = Self.latinWordEnd(text, breaks, levels, from: index, to: run.end, level: level, coverage: primaryLatin)
                    if end > index { segmentFace = primaryIndex }
                }
                while end < run.end {
                    let current = text[end]
                    if current == 0x20 || current == 0x2028 || current == 0x0A || (current == 0xFFFC && hasAtoms && paragraph.atoms[end] != nil) { break }
                    if end > index && (breaks[end] || levels[end] != level) { break }
                    if vertical {
                        // Upright and sideways characters are shaped apart (a mark goes with its base).
                        let scalar = Self.scalar(in: text, at: end, end: run.end)
                        let upright =
                            end > index && caches.worker.characters.attachesToPrevious(scalar)
                            ? segmentUpright : isUpright(scalar, orientation: orientation)
                        if end > index && upright != segmentUpright { break }
                        segmentUpright = upright
                    }
                    // Latin-1 the primary face covers (nearly every character of a European book)
                    // stays in the primary face: no lookups.
                    if current < 0x100, segmentFace == -1 || segmentFace == primaryIndex,
                        FontFace.covers(latin: primaryLatin, current) || current == 0xAD
                    {
                        segmentFace = primaryIndex
                        end += 1
                        continue
                    }
                    // Decode one scalar (surrogate pairs stay together).
                    var width = 1
                    var value = UInt32(current)
                    if current >= 0xD800 && current < 0xDC00 && end + 1 < run.end, text[end + 1] >= 0xDC00 && text[end + 1] < 0xE000 {
                        value = 0x10000 + ((UInt32(current) - 0xD800) << 10) + (UInt32(text[end + 1]) - 0xDC00)
                        width = 2
                    }
                    let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
                    // Marks and joiners stay with their base's face when it has them; a mark the
                    // base's face lacks goes to a face that has it rather than becoming .notdef.
                    let scalarFace: Int32
                    if segmentFace >= 0, caches.worker.characters.attachesToPrevious(scalar), face(segmentFace).covers(scalar) || UnicodeInfo.isDefaultIgnorable(scalar) {
                        scalarFace = segmentFace
                    } else if primary.covers(scalar) || scalar.value == 0xAD {
                        scalarFace = primaryIndex
                    } else if UnicodeInfo.isDefaultIgnorable(scalar) {
                        // Invisible (word joiners around Standard Ebooks' dashes, ZWSP, bidi
                        // controls): HarfBuzz hides them in any face, so they never load a fallback
                        // font or split a word into two faces.
                        scalarFace = segmentFace >= 0 ? segmentFace : primaryIndex
                    } else {
                        scalarFace = fallbackFaceIndex(scalar, style: run.style, primary: primary)
                    }
                    if segmentFace >= 0 && segmentFace != scalarFace { break }
                    segmentFace = scalarFace
                    end += width
                }
                if end == index { end = index + 1 }
                if segmentFace < 0 { segmentFace = primaryIndex }
                if segmentFace != lastFaceIndex || level != lastLevel || segmentUpright != lastUpright {
                    lastFaceIndex = segmentFace
                    lastLevel = level
                    lastUpright = segmentUpright
                    lastParameter = Int32(
                        parameterID(
                            style: run.style, face: face(segmentFace), rtl: level & 1 == 1,
                            upright: segmentUpright))
                }
                var segment = Segment(
                    start: index, end: end, style: run.style, level: level, face: segmentFace, kind: .text,
                    parameter: lastParameter)
                segment.upright = segmentUpright
                result.append(segment)
                index = end
            }
        }
        if !paragraph.inlineBoxes.isEmpty { addInlineEdges(&result, paragraph) }
        return result
    }

    /// Where a word of Latin-1 characters in the primary face (`coverage`) that starts at `start`
    /// ends: before a space, a newline, a character above U+00FF or one the face lacks, a break
    /// opportunity or a level change. The general loop of `segments` stops at the same place one
    /// character at a time (nearly every character of a European book is in such a word).
    private static func latinWordEnd(
        _ text: [UInt16], _ breaks: [Bool], _ levels: [UInt8], from start: Int, to limit: Int, level: UInt8,
        coverage: (UInt64, UInt64, UInt64, UInt64)
    ) -> Int {
        text.withUnsafeBufferPointer { text in
            breaks.withUnsafeBufferPointer { breaks in
                levels.withUnsafeBufferPointer { levels in
                    var end = start
                    while end < limit {
                        let unit = text[end]
                        if unit == 0x20 || unit == 0x0A || unit >= 0x100 { break }
                        if end > start && (breaks[end] || levels[end] != level) { break }
                        guard FontFace.covers(latin: coverage, unit) || unit == 0xAD else { break }
                        end += 1
                    }
                    return end
                }
            }
        }
    }

    /// A `text-combine-upright: all` run of vertical text as one unbreakable segment, set
    /// horizontally in the face of its first character (nil for a run of spaces alone).
    func combinedSegment(_ run: StyleRun, _ paragraph: Paragraph, levels: [UInt8]) -> Segment? {
        let text = paragraph.text
        guard run.start < run.end, text[run.start..<run.end].contains(where: { $0 != 0x20 }) else {
            return nil
        }
        let primary = primaryFace(style: run.style)
        let scalar = Self.scalar(in: text, at: run.start, end: run.end)
        let face =
            primary.covers(scalar)
            ? primary
            : services.fonts.fallbackFace(for: scalar, request: request(styles[run.style])) ?? primary
        let index = faceIndex(face)
        var segment = Segment(
            start: run.start, end: run.end, style: run.style, level: levels[run.start], face: index,
            kind: .text,
            parameter: Int32(parameterID(style: run.style, face: face, rtl: false)))
        segment.upright = true
        segment.combined = true
        return segment
    }

    /// The start and end edges (margin + border + padding) of an inline box, in device px.
    func inlineEdges(_ style: ComputedStyle) -> (start: Double, end: Double) {
        // The cascade has already zeroed the width of a border whose style is none or hidden.
        let left = (style.margin.left.resolve(against: 0) ?? 0) + style.borderWidth.left + style.padding.left.resolve(against: 0)
        let right = (style.margin.right.resolve(against: 0) ?? 0) + style.borderWidth.right + style.padding.right.resolve(against: 0)
        return style.direction == .rtl ? (right * scale, left * scale) : (left * scale, right * scale)
    }

    /// Splits segments where inline boxes open and close, and gives the segment after an opening
    /// the box's start edge and the one before a closing its end edge (measured into their widths).
    func addInlineEdges(_ segments: inout [Segment], _ paragraph: Paragraph) {
        var opening: [Int: Double] = [:]
        var closing: [Int: Double] = [:]
        for box in paragraph.inlineBoxes {
            let upper = min(box.range.upperBound, paragraph.text.count)
            guard box.range.lowerBound < upper else { continue }
            let edges = inlineEdges(styles[box.style])
            opening[box.range.lowerBound, default: 0] += edges.start
            closing[upper, default: 0] += edges.end
        }
        let cuts = Set(opening.keys).union(closing.keys).sorted()
        var next = 0
        var result: [Segment] = []
        result.reserveCapacity(segments.count + 2 * paragraph.inlineBoxes.count)
        for segment in segments {
            var rest = segment
            rest.leading = opening[rest.start] ?? 0
            rest.boxBoundary = opening[rest.start] != nil || closing[rest.start] != nil
            // A boundary inside a word splits it (the pieces shape apart, as browsers do at a box edge).
            // Segments come in text order, so the cuts are walked once.
            while next < cuts.count && cuts[next] <= rest.start { next += 1 }
            while next < cuts.count && cuts[next] < rest.end && rest.kind == .text {
                let cut = cuts[next]
                next += 1
                var head = rest
                head.end = cut
                head.trailing = closing[cut] ?? 0
                result.append(head)
                rest.start = cut
                rest.leading = opening[cut] ?? 0
                rest.boxBoundary = true
            }
            rest.trailing = closing[rest.end] ?? 0
            result.append(rest)
        }
        segments = result
    }

    /// Letters for trimming punctuation off words (surrogates count as letters; libhyphen decides).
    static func isLetterUnit(_ unit: UInt16) -> Bool {
        if unit < 0x80 { return (unit | 0x20) >= 0x61 && (unit | 0x20) <= 0x7A }
        if unit >= 0xD800 && unit < 0xE000 { return true }
        return Unicode.Scalar(unit)?.properties.isAlphabetic ?? false
    }

    /// The scalar starting at `index` (a surrogate pair read whole; a lone surrogate is U+FFFD).
    static func scalar(in text: [UInt16], at index: Int, end: Int) -> Unicode.Scalar {
        let unit = text[index]
        if unit >= 0xD800 && unit < 0xDC00 && index + 1 < end,
            text[index + 1] >= 0xDC00 && text[index + 1] < 0xE000
        {
            return Unicode.Scalar(
                0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(text[index + 1]) - 0xDC00))
                ?? "\u{FFFD}"
        }
        return Unicode.Scalar(unit) ?? "\u{FFFD}"
    }

    static func attachesToPrevious(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x300 { return false }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .spacingMark, .format: return true
        default: return scalar.value == 0x200D || (0xFE00...0xFE0F).contains(scalar.value) || (0x1F3FB...0x1F3FF).contains(scalar.value)
        }
    }

    /// The id of the language that hyphenates text of a style by dictionary, or -1: foreign phrases
    /// inside a paragraph are not hyphenated, so only the paragraph's own language loads a
    /// dictionary (German's takes seconds to load for a handful of words).
    func hyphenationLanguageID(style: Int, paragraphLanguage: String?) -> Int {
        guard hyphenate, styles[style].hyphens == .auto, let language = styles[style].language ?? bookLanguage, language == paragraphLanguage
        else { return -1 }
        return caches.worker.languageID(language)
    }

    /// Dictionary hyphenation points of a word (offsets into the paragraph): the letters of the
    /// word are hyphenated, punctuation around them is left alone.
    func dictionaryPoints(_ segment: Segment, _ paragraph: Paragraph, language: String) -> [Int] {
        let units = paragraph.text[segment.start..<segment.end]
        guard units.count >= Hyphenator.minimumWordLength else { return [] }
        let leading = units.prefix { !Self.isLetterUnit($0) }.count
        let trailing = units.reversed().prefix { !Self.isLetterUnit($0) }.count
        guard leading + trailing < units.count else { return [] }
        let coreStart = segment.start + leading
        let core = paragraph.text[coreStart..<(segment.end - trailing)]
        let id: Int
        if let known = caches.hyphenationIDs[language] {
            id = known
        } else {
            id = services.hyphenator.languageID(for: language)
            caches.hyphenationIDs[language] = id
        }
        return services.hyphenator.points(units: core, languageID: id, language: language).map { coreStart + $0 }
    }

    /// A word's pieces between hyphenation points (each but the last followed by a hyphen).
    func fragments(of segment: Segment, at points: [Int]) -> [Segment] {
        var result: [Segment] = []
        var start = segment.start
        for point in points where point > start && point < segment.end {
            var part = segment
            part.start = start
            part.end = point
            part.width = 0
            part.hyphenAfter = true
            part.fragment = true
            if start != segment.start { part.leading = 0 }
            part.trailing = 0
            result.append(part)
            start = point
        }
        var last = segment
        last.start = start
        last.width = 0
        last.fragment = true
        if start != segment.start { last.leading = 0 }
        result.append(last)
        return result
    }

    /// Splits words at hyphenation points: soft hyphens always; dictionary points with
    /// `hyphens: auto` when `dictionary` (total fit weighs every point; greedy lines ask for the
    /// points of the one word that overflows, through `splitOverflowing`).
    func hyphenated(_ segments: [Segment], _ paragraph: Paragraph, dictionary: Bool) -> [Segment] {
        let hasSoftHyphens = paragraph.text.contains(0xAD)
        guard hasSoftHyphens || (dictionary && hyphenate) else { return segments }
        let paragraphLanguage = paragraph.blockStyle.language ?? bookLanguage
        var languageStyle = -1
        var languageID = -1
        var result: [Segment] = []
        result.reserveCapacity(segments.count + segments.count / 4)
        for segment in segments {
            guard segment.kind == .text, !segment.combined, styles[segment.style].hyphens != .none, segment.end - segment.start >= 2 else {
                result.append(segment)
                continue
            }
            var points: [Int] = []
            if hasSoftHyphens {
                let units = paragraph.text[segment.start..<segment.end]
                for (offset, unit) in units.enumerated() where unit == 0xAD && offset > 0 { points.append(segment.start + offset + 1) }
            }
            if points.isEmpty && dictionary {
                if segment.style != languageStyle {
                    languageStyle = segment.style
                    languageID = hyphenationLanguageID(style: segment.style, paragraphLanguage: paragraphLanguage)
                }
                if languageID >= 0, let language = paragraphLanguage {
                    points = dictionaryPoints(segment, paragraph, language: language)
                }
            }
            if points.isEmpty {
                result.append(segment)
            } else {
                result += fragments(of: segment, at: points)
            }
        }
        return result
    }

    /// For greedy breaking: the fragments of the word at `itemIndex` that overflows its line, as
    /// break items (boxes with flagged hyphen penalties between them), or nil when it has no
    /// dictionary points or its first fragment and hyphen do not fit `room` (nil: no limit). The
    /// new segments are appended; `itemSegment` is updated to match.
    func splitOverflowing(
        _ itemIndex: Int, room: Double?, segments: inout [Segment], itemSegment: inout [Int], paragraph: Paragraph
    ) -> [BreakItem]? {
        let index = itemSegment[itemIndex]
        guard index >= 0 else { return nil }
        let segment = segments[index]
        guard segment.kind == .text, !segment.fragment, !segment.combined, segment.end - segment.start >= Hyphenator.minimumWordLength else {
            return nil
        }
        let paragraphLanguage = paragraph.blockStyle.language ?? bookLanguage
        let languageID = hyphenationLanguageID(style: segment.style, paragraphLanguage: paragraphLanguage)
        guard languageID >= 0, let language = paragraphLanguage else { return nil }
        if let room {
            // Every first fragment holds the word's leading punctuation and its first letters: when
            // even those and a hyphen overflow, nothing can break inside the word on this line and
            // the dictionary is not asked (a third of the lines of a novel).
            let leading = paragraph.text[segment.start..<segment.end].prefix { !Self.isLetterUnit($0) }.count
            var shortest = segment
            shortest.end = min(segment.end, segment.start + leading + Hyphenator.minimumPrefix)
            shortest.width = 0
            var pieces = [shortest]
            measure(&pieces, paragraph)
            if pieces[0].width + hyphenWidth(segment.style, faceIndex: segment.face) > room { return nil }
        }
        let points = dictionaryPoints(segment, paragraph, language: language)
        guard !points.isEmpty else { return nil }
        var parts = fragments(of: segment, at: points)
        measure(&parts, paragraph)
        if let room, parts[0].width + hyphenWidth(parts[0].style, faceIndex: parts[0].face) > room { return nil }
        var items: [BreakItem] = []
        var owners: [Int] = []
        for (number, part) in parts.enumerated() {
            if number > 0 {
                items.append(hyphenPenalty(after: parts[number - 1]))
                owners.append(-1)
            }
            segments.append(part)
            items.append(.box(width: part.width))
            owners.append(segments.count - 1)
        }
        itemSegment.replaceSubrange(itemIndex...itemIndex, with: owners)
        return items
    }

    func measure(_ segments: inout [Segment], _ paragraph: Paragraph) {
        // A space's width by style, kept for the paragraph's run of spaces of one style (a
        // dictionary lookup for each space before).
        var lastSpace: (style: Int, width: Double) = (-1, 0)
        // The paragraph's text is borrowed once for all its words (not retained word by word).
        paragraph.text.withUnsafeBufferPointer { text in
            for index in segments.indices {
                let segment = segments[index]
                if segment.width > 0 { continue }  // measured before hyphenation split other words
                switch segment.kind {
                case .text where segment.combined:
                    // Tate-chu-yoko takes one em of the column, whatever it holds.
                    segments[index].width = fontSize(styles[segment.style])
                case .text:
                    let letterSpacing = styles[segment.style].letterSpacing
                    let measured =
                        segment.end - segment.start <= TextKey.inlineUnits
                        ? shaper.measure(short: UnsafeBufferPointer(rebasing: text[segment.start..<segment.end]), parameterID: Int(segment.parameter))
                        : shaper.measure(paragraph.text[segment.start..<segment.end], parameterID: Int(segment.parameter))
                    var width = measured.advance
                    if measured.hasMissingGlyphs || letterSpacing != 0 {
                        let shaped = shaper.shape(paragraph.text[segment.start..<segment.end], parameterID: Int(segment.parameter))
                        if measured.hasMissingGlyphs { recordMissingGlyphs(paragraph, segment, shaped) }
                        width += letterSpacing * scale * Double(clusterCount(shaped))
                    }
                    segments[index].width = width
                case .space:
                    if lastSpace.style != segment.style {
                        lastSpace = (segment.style, spaceWidth(segment.style, face: face(segment.face)) + styles[segment.style].wordSpacing * scale)
                    }
                    segments[index].width = lastSpace.width * Double(segment.end - segment.start)
                case .atom:
                    segments[index].width = atomSize(paragraph.atoms[segment.start]!).width
                case .forcedBreak:
                    segments[index].width = 0
                }
                if segment.kind != .forcedBreak { segments[index].width += segment.leading + segment.trailing }
            }
        }
    }

    /// A line's natural width (its boxes and glue) and its glue's stretch.
    func naturalWidth(_ items: [BreakItem], _ range: Range<Int>) -> (width: Double, stretch: Double) {
        var width = 0.0
        var stretch = 0.0
        for index in range {
            switch items[index] {
            case .box(let w): width += w
            case .glue(let w, let y, _):
                width += w
                stretch += y
            case .penalty: break
            }
        }
        return (width, stretch)
    }

    /// The stretch ratio that sets a line's content (its boxes and glue, less trailing glue) to
    /// `width`: for a last line under text-align-last: justify, which the breaker leaves loose.
    func fullMeasureRatio(_ items: [BreakItem], _ itemSegment: [Int], _ range: Range<Int>, width: Double) -> Double {
        var natural = 0.0
        var stretch = 0.0
        var (naturalThroughBox, stretchThroughBox) = (0.0, 0.0)
        for index in range where itemSegment[index] >= 0 {
            switch items[index] {
            case .box(let w):
                natural += w
                (naturalThroughBox, stretchThroughBox) = (natural, stretch)
            case .glue(let w, let y, _):
                natural += w
                stretch += y
            case .penalty: break
            }
        }
        guard stretchThroughBox > 0 else { return 0 }
        return max(0, (width - naturalThroughBox) / stretchThroughBox)
    }

    /// Inter-word spacing statistics of justified lines: each space's set width ÷ its natural width.
    func recordSpacing(_ items: [BreakItem], _ breaks: LineBreaks) {
        var start = 0
        for (lineIndex, breakIndex) in breaks.breaks.enumerated() {
            defer { start = breakIndex + 1 }
            let ratio = breaks.ratios[lineIndex]
            if lineIndex == breaks.breaks.count - 1 { continue }
            if case .penalty(_, let p, _) = items[breakIndex], p <= -BreakItem.infinitePenalty { continue }
            for index in start..<breakIndex {
                guard case .glue(let w, let y, let z) = items[index], w > 0, index > start else { continue }
                let factor = ratio >= 0 ? 1 + ratio * y / w : 1 + ratio * z / w
                caches.spacing.count += 1
                caches.spacing.sum += factor
                caches.spacing.sumOfSquares += factor * factor
            }
        }
    }

    /// Notes characters that came out as .notdef (no font covers them).
    func recordMissingGlyphs(_ paragraph: Paragraph, _ segment: Segment, _ shaped: ShapedText) {
        for glyph in shaped.glyphs where glyph.id == 0 {
            let index = segment.start + Int(glyph.cluster)
            guard index < segment.end else { continue }
            var value = UInt32(paragraph.text[index])
            if value >= 0xD800 && value < 0xDC00 && index + 1 < segment.end {
                value = 0x10000 + ((value - 0xD800) << 10) + (UInt32(paragraph.text[index + 1]) - 0xDC00)
            }
            if let scalar = Unicode.Scalar(value), UnicodeInfo.isDefaultIgnorable(scalar) { continue }
            caches.missingGlyphs[value, default: 0] += 1
            if SystemEnvironment.variable("QUIRE_DEBUG_GLYPHS") != nil {
                print("missing", String(value, radix: 16), face(segment.face).key, String(decoding: paragraph.text[segment.start..<segment.end], as: UTF16.self))
            }
        }
    }

    func clusterCount(_ shaped: ShapedText) -> Int {
        var count = 0
        var last: UInt32 = .max
        for glyph in shaped.glyphs where glyph.cluster != last {
            count += 1
            last = glyph.cluster
        }
        return count
    }

    func spaceWidth(_ style: Int, face: FontFace) -> Double {
        if let width = caches.spaceWidths[PackedKey(UInt64(style))] { return width }
        let width = shape([0x20][...], style: style, face: face, rtl: false).advance
        caches.spaceWidths[PackedKey(UInt64(style))] = width
        return width
    }

    /// The hyphen's width in a style and face (by index), shaped once per chapter: greedy lines
    /// ask for it at every word that overflows.
    func hyphenWidth(_ style: Int, faceIndex: Int32) -> Double {
        let key = PackedKey(style, Int(faceIndex), 0)
        if let width = caches.hyphenWidths[key] { return width }
        let width = shape([0x2D][...], style: style, face: face(faceIndex), rtl: false).advance
        caches.hyphenWidths[key] = width
        return width
    }

    /// The break inside a word after one of its fragments: a flagged penalty as wide as the hyphen.
    func hyphenPenalty(after fragment: Segment) -> BreakItem {
        .penalty(width: hyphenWidth(fragment.style, faceIndex: fragment.face), penalty: 50, flagged: true)
    }

    /// Device-pixel size of an inline replaced element.
    var containingWidth: Double { caches.containingWidth }

    /// An inline image's border-box size: the picture with its padding and border.
    func atomSize(_ box: ReplacedBox) -> (width: Double, height: Double) {
        let size = usedImageSize(
            box, containingWidth: containingWidth / scale, containingHeight: caches.pageHeight / scale,
            turned: vertical)
        let (border, padding) = imageEdges(box.style, basis: containingWidth / scale, scale: scale)
        return (size.width * scale + (border + padding).horizontal, size.height * scale + (border + padding).vertical)
    }


    static func isCJK(_ unit: UInt16) -> Bool {
        (0x3040...0x30FF).contains(unit) || (0x3400...0x4DBF).contains(unit) || (0x4E00...0x9FFF).contains(unit)
            || (0xF900...0xFAFF).contains(unit) || (0xAC00...0xD7AF).contains(unit) || (0xFF00...0xFFEF).contains(unit)
            || (0x3000...0x303F).contains(unit)
    }

    /// Boxes, glue and penalties for the segments (the line breaker's input) and, per item, its segment.
    func breakItems(_ segments: [Segment], _ paragraph: Paragraph, breakable: [Bool], justify: Bool) -> ([BreakItem], [Int]) {
        let text = paragraph.text
        let fill = 1e6
        var items: [BreakItem] = []
        var itemSegment: [Int] = []
        items.reserveCapacity(segments.count * 2 + 2)
        itemSegment.reserveCapacity(segments.count * 2 + 2)
        @inline(__always) func add(_ item: BreakItem, _ segment: Int) {
            items.append(item)
            itemSegment.append(segment)
        }
        // A stop or comma that may hang (hanging-punctuation: allow-end) makes its break a penalty
        // as much narrower as the mark is wide, so a line ending there is measured without it;
        // the line is set with the mark inside when it fits after all (`hangingWidth` in `lines`).
        var hang = 0.0
        for (index, segment) in segments.enumerated() {
            switch segment.kind {
            case .text, .atom:
                if index > 0 {
                    let previous = segments[index - 1]
                    if previous.hyphenAfter && segment.kind == .text {
                        add(hyphenPenalty(after: previous), -1)
                    } else if previous.kind == .text || previous.kind == .atom, breakable[segment.start], styles[previous.style].whiteSpace.wraps {
                        let before = text[previous.end - 1]
                        if justify && Self.isCJK(before) && Self.isCJK(text[segment.start]) {
                            // With a hanging mark the penalty is the break (glue after a penalty is none).
                            if hang > 0 { add(.penalty(width: -hang, penalty: 0, flagged: false), -1) }
                            add(.glue(width: 0, stretch: styles[segment.style].fontSize * scale * 0.15, shrink: 0), -1)
                        } else if hang > 0 {
                            add(.penalty(width: -hang, penalty: 0, flagged: false), -1)
                        } else if before == 0x2D || before == 0x2010 || before == 0x2013 || before == 0x2014 {
                            add(.penalty(width: 0, penalty: 50, flagged: true), -1)
                        } else {
                            add(.penalty(width: 0, penalty: 0, flagged: false), -1)
                        }
                    } else if previous.kind == .text || previous.kind == .atom {
                        add(.penalty(width: 0, penalty: BreakItem.infinitePenalty, flagged: false), -1)
                    }
                }
                add(.box(width: segment.width), index)
                hang = mayHang && segment.kind == .text ? hangingWidth(segment, paragraph) : 0
            case .space:
                if styles[segment.style].whiteSpace.wraps {
                    if hang > 0 { add(.penalty(width: -hang, penalty: 0, flagged: false), -1) }
                    add(.glue(width: segment.width, stretch: justify ? segment.width / 2 : 0, shrink: justify ? segment.width / 3 : 0), index)
                } else {
                    add(.box(width: segment.width), index)
                }
                hang = 0
            case .forcedBreak:
                Self.addForcedBreak(&items, &itemSegment, segment: index, hang: hang, fill: fill)
                hang = 0
            }
        }
        // A paragraph that ends in a line break (`text<br/></p>`) ends there: no empty line after it.
        if segments.last?.kind != .forcedBreak {
            Self.addForcedBreak(&items, &itemSegment, segment: -1, hang: hang, fill: fill)
        }
        return (items, itemSegment)
    }

    /// The items of a forced break (a paragraph's end, `<br>`): fill glue and the break. After a
    /// mark that may hang, the break is as much narrower as the mark, and the glue is no break.
    /// (A static function: a local one capturing the item arrays cost an allocation per paragraph.)
    private static func addForcedBreak(_ items: inout [BreakItem], _ itemSegment: inout [Int], segment: Int, hang: Double, fill: Double) {
        if hang > 0 {
            items.append(.penalty(width: 0, penalty: BreakItem.infinitePenalty, flagged: false))
            itemSegment.append(-1)
        }
        items.append(.glue(width: 0, stretch: fill, shrink: 0))
        itemSegment.append(-1)
        items.append(hang > 0 ? .penalty(width: -hang, penalty: -BreakItem.infinitePenalty, flagged: false) : BreakItem.forcedBreak)
        itemSegment.append(segment)
    }

    /// Stops and commas that `hanging-punctuation: allow-end | force-end` lets stand past the end
    /// of a line (CSS Text 3, 9.2).
    static func isHangingStopOrComma(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x2C, 0x2E, 0x060C, 0x06D4, 0x3001, 0x3002, 0xFE50, 0xFE51, 0xFE52, 0xFF0C, 0xFF0E, 0xFF61, 0xFF64: return true
        default: return false
        }
    }

    /// How far a text segment's last character may hang past the line's end: its advance when it
    /// is a stop or comma under `hanging-punctuation: allow-end | force-end`, else 0.
    func hangingWidth(_ segment: Segment, _ paragraph: Paragraph) -> Double {
        // (The style's one field is read first: copying the whole style per word costs.)
        guard styles[segment.style].hangingPunctuation != .none, !segment.combined, segment.trailing == 0, segment.end > segment.start,
            Self.isHangingStopOrComma(paragraph.text[segment.end - 1])
        else { return 0 }
        let mark = paragraph.text.withUnsafeBufferPointer {
            shaper.measure(short: UnsafeBufferPointer(rebasing: $0[(segment.end - 1)..<segment.end]), parameterID: Int(segment.parameter))
        }
        return min(mark.advance + styles[segment.style].letterSpacing * scale, segment.width - segment.leading)
    }

    /// Min-content (widest unbreakable piece) and max-content (everything on one line) widths.
    func contentWidths(_ paragraph: Paragraph) -> (min: Double, max: Double) {
        let text = paragraph.text
        var breakable = [Bool](filling: false, count: text.count + 1)
        for opportunity in LineBreakOpportunities.find(in: text, language: paragraph.blockStyle.language ?? bookLanguage) where opportunity.offset <= text.count {
            breakable[opportunity.offset] = true
        }
        var segments = segments(paragraph, levels: nil, breaks: breakable)
        measure(&segments, paragraph)
        var widest = 0.0
        var word = 0.0
        var line = 0.0
        var longest = 0.0
        for segment in segments {
            switch segment.kind {
            case .space:
                widest = max(widest, word)
                word = 0
                line += segment.width
            case .forcedBreak:
                widest = max(widest, word)
                longest = max(longest, line)
                word = 0
                line = 0
            case .text, .atom:
                if breakable[segment.start] { widest = max(widest, word); word = 0 }
                word += segment.width
                line += segment.width
            }
        }
        widest = max(widest, word)
        longest = max(longest, line)
        let indent = max(0, paragraph.blockStyle.textIndent.resolve(against: 0) * scale)
        return (widest + indent, longest + indent)
    }

    /// A missing or broken image shows its alt text inside its box, shrunk to fit one line.
    func altText(_ box: ReplacedBox, in rect: Rect) -> GlyphRun? {
        guard box.displayState == .missing, !box.alt.isEmpty, rect.width > 8, rect.height > 8 else { return nil }
        let style = box.style
        let face = services.fonts.primaryFace(for: request(style), bookFonts: caches.bookFonts)
        var size = min(fontSize(style), rect.height * 0.6)
        var shaped = shaper.shape(Array(box.alt.utf16)[...], ShapingParameters(face: face, size: size, language: style.language ?? bookLanguage))
        let room = rect.width - 8
        if shaped.advance > room, shaped.advance > 0 {
            size *= room / shaped.advance
            shaped = shaper.shape(Array(box.alt.utf16)[...], ShapingParameters(face: face, size: size, language: style.language ?? bookLanguage))
        }
        var xs: [Float] = []
        var pen = 0.0
        for glyph in shaped.glyphs {
            xs.append(Float(pen) + glyph.xOffset)
            pen += Double(glyph.advance)
        }
        let origin = Point(x: rect.x + (rect.width - shaped.advance) / 2, y: rect.y + rect.height / 2 + face.ascent(at: size) * 0.35)
        return GlyphRun(
            face: face, size: size, color: Color(red: 90, green: 90, blue: 90), origin: origin, glyphs: shaped.glyphs.map(\.id), xs: xs,
            ys: shaped.glyphs.map { -$0.yOffset }, syntheticBold: false, syntheticItalic: false)
    }

    /// The list item's face for its marker, or a fallback face that has the marker's characters
    /// (`cjk-decimal` digits in a Latin font).
    func markerFace(_ marker: GeneratedContent) -> FontFace {
        let primary = services.fonts.primaryFace(for: request(marker.style), bookFonts: caches.bookFonts)
        for scalar in marker.text.unicodeScalars where scalar.value > 0x20 && primary.glyph(for: scalar) == nil {
            return services.fonts.fallbackFace(for: scalar, request: request(marker.style)) ?? primary
        }
        return primary
    }

    /// The mark of `text-emphasis` shaped at half the text's size, in a face that has it.
    func emphasisMark(_ emphasis: TextEmphasis, style: ComputedStyle) -> (face: FontFace, shaped: ShapedText)? {
        let units = Array(emphasis.mark.utf16)
        guard let scalar = emphasis.mark.unicodeScalars.first else { return nil }
        var markStyle = style
        markStyle.fontSize = style.fontSize / 2
        let primary = services.fonts.primaryFace(for: request(markStyle), bookFonts: caches.bookFonts)
        let face =
            primary.covers(scalar)
            ? primary : services.fonts.fallbackFace(for: scalar, request: request(markStyle)) ?? primary
        return (
            face,
            shaper.shape(units[...], parameters(markStyle, face: face, rtl: false, upright: vertical))
        )
    }

    /// Emphasis marks centred over each character of a shaped piece, except spaces and punctuation
    /// (CSS Text Decoration 3 §3.3), beside the text's over edge `top` or, `under`, its under edge
    /// `bottom`.
    func emphasisRun(
        _ mark: (face: FontFace, shaped: ShapedText), emphasis: TextEmphasis, style: ComputedStyle, over shaped: ShapedText, piece start: Int,
        in paragraph: Paragraph, x: Double, top: Double, bottom: Double
    ) -> GlyphRun {
        var glyphs: [UInt32] = []
        var xs: [Float] = []
        var ys: [Float] = []
        var pen = 0.0
        var index = 0
        while index < shaped.glyphs.count {
            // One cluster: its glyphs share a cluster value.
            let cluster = shaped.glyphs[index].cluster
            var advance = 0.0
            while index < shaped.glyphs.count && shaped.glyphs[index].cluster == cluster {
                advance += Double(shaped.glyphs[index].advance)
                index += 1
            }
            let unit = start + Int(cluster)
            if unit < paragraph.text.count, let scalar = Unicode.Scalar(paragraph.text[unit]) {
                let category = scalar.properties.generalCategory
                let skip = scalar.properties.isWhitespace || [.connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                    .initialPunctuation, .finalPunctuation, .otherPunctuation, .control].contains(category)
                if !skip {
                    let left = pen + (advance - mark.shaped.advance) / 2
                    for glyph in mark.shaped.glyphs {
                        glyphs.append(glyph.id)
                        xs.append(Float(left) + glyph.xOffset)
                        ys.append(-glyph.yOffset)
                    }
                }
            }
            pen += advance
        }
        let size = fontSize(style) / 2
        // In vertical text the marks stand upright in a column of their own, on the right (or left).
        let y = switch (vertical, emphasis.under) {
        case (true, false): top - size / 2
        case (true, true): bottom + size / 2
        case (false, false): top - mark.face.descent(at: size)
        case (false, true): bottom + mark.face.ascent(at: size)
        }
        var run = GlyphRun(
            face: mark.face, size: size, color: emphasis.color ?? style.color, origin: Point(x: x, y: y),
            glyphs: glyphs, xs: xs, ys: ys, syntheticBold: false, syntheticItalic: false)
        if vertical { run.orientation = .upright }
        return run
    }

    /// Tate-chu-yoko: horizontal glyphs standing upright in one em of a column at `x` (its top, in
    /// the turned line), centred across the column and down the em, made smaller when wider
    /// than the em. Offsets are the turned line's, as every upright run's (see VerticalFrame).
    func combinedRun(
        _ shaped: ShapedText, face: FontFace, style index: Int, x: Double, baseline: Double
    ) -> GlyphRun {
        let style = styles[index]
        let em = fontSize(style)
        let fit = shaped.advance > em && shaped.advance > 0 ? em / shaped.advance : 1
        let size = em * fit
        let width = shaped.advance * fit
        let down = (em + face.ascent(at: size) - face.descent(at: size)) / 2
        var xs: [Float] = []
        var ys: [Float] = []
        var pen = 0.0
        for glyph in shaped.glyphs {
            // Across the column (the line's -y) from its left edge; down it (the line's x) to the baseline.
            ys.append(Float(width / 2 - (pen + Double(glyph.xOffset)) * fit))
            xs.append(Float(down) - glyph.yOffset * Float(fit))
            pen += Double(glyph.advance)
        }
        var run = GlyphRun(
            face: face, size: size, color: style.color,
            origin: Point(x: x, y: baseline - baselineShift(style) - uprightCentre(style: index)),
            glyphs: shaped.glyphs.map(\.id), xs: xs, ys: ys,
            syntheticBold: style.fontWeight >= 600 && !face.isBold,
            syntheticItalic: style.fontStyle != .normal && !face.isItalic)
        run.orientation = .upright
        return run
    }

    /// A drop cap's box: width taken from the first lines (padding included), how many lines it
    /// spans, and its glyphs (origin set once the lines are known).
    func dropCap(_ paragraph: Paragraph) -> (width: Double, lines: Int, padding: Double, run: GlyphRun?)? {
        guard let drop = paragraph.dropCap else { return nil }
        let style = styles[drop.style]
        let face = services.fonts.primaryFace(for: request(style), bookFonts: caches.bookFonts)
        let shaped = shape(paragraph.text[drop.range], style: drop.style, face: face, rtl: false)
        let size = fontSize(style)
        let padLeft = style.padding.left.resolve(against: 0) * scale
        let padRight = style.padding.right.resolve(against: 0) * scale
        let strut = paragraph.blockStyle.lineHeightPx(normalFactor: face.normalLineHeightFactor) * scale
        let height = max(face.ascent(at: size) * 0.9, style.lineHeightPx(normalFactor: 1) * scale)
        let lines = max(1, Int((height / max(strut, 1) - 0.2).rounded(.up)))
        var xs: [Float] = []
        var pen = 0.0
        for glyph in shaped.glyphs {
            xs.append(Float(pen) + glyph.xOffset)
            pen += Double(glyph.advance)
        }
        let run = GlyphRun(
            face: face, size: size, color: style.color, origin: Point(x: 0, y: 0), glyphs: shaped.glyphs.map(\.id), xs: xs,
            ys: shaped.glyphs.map { -$0.yOffset }, syntheticBold: style.fontWeight >= 600 && !face.isBold,
            syntheticItalic: style.fontStyle != .normal && !face.isItalic)
        return (shaped.advance + padLeft + padRight, lines, padLeft, run)
    }

    // MARK: Lines

    /// `floats` gives, for a line number, the space taken on the left and right by floats beside it.
    func layout(
        _ paragraph: Paragraph, width available: Double, marker: GeneratedContent?,
        floats: ((Int) -> (left: Double, right: Double))? = nil
    ) -> [LineBox] {
        let lines = layoutLines(paragraph, width: available, marker: marker, floats: floats)
        guard !paragraph.firstLineStyles.isEmpty, let first = lines.first else { return lines }
        // ::first-line: the units of the first line take its style and the paragraph is set again.
        // Restyled, the first line may hold more or less text, so its end is found once more.
        var end = paragraph.unitIndex(atSource: first.end)
        var result = lines
        for _ in 0..<2 {
            let styled = paragraph.withFirstLine(through: end, styles: styles)
            result = layoutLines(styled, width: available, marker: marker, floats: floats)
            guard let line = result.first else { break }
            let styledEnd = styled.unitIndex(atSource: line.end)
            if styledEnd == end { break }
            end = styledEnd
        }
        return result
    }

    private func layoutLines(
        _ paragraph: Paragraph, width available: Double, marker: GeneratedContent?,
        floats: ((Int) -> (left: Double, right: Double))?
    ) -> [LineBox] {
        caches.containingWidth = available
        let blockStyle = paragraph.blockStyle
        let text = paragraph.text
        let rtlParagraph = blockStyle.direction == .rtl
        var levels: [UInt8]? = nil
        if rtlParagraph || Bidi.needsResolution(text) {
            levels = Bidi.levels(text, rightToLeft: rtlParagraph).levels
        }
        let language = blockStyle.language ?? bookLanguage
        var breakable = [Bool](filling: false, count: text.count + 1)
        let strictness: LineBreakOpportunities.Strictness
        switch blockStyle.lineBreak {
        case .auto: strictness = .standard
        case .loose: strictness = .loose
        case .normal: strictness = .normal
        case .strict: strictness = .strict
        case .anywhere: strictness = .loose
        }
        let words: LineBreakOpportunities.WordRule
        switch blockStyle.wordBreak {
        case .breakAll: words = .breakAll
        case .keepAll: words = .keepAll
        case .normal, .breakWord: words = blockStyle.lineBreak == .anywhere ? .breakAll : .normal
        }
        let localeKey = PackedKey(language.map { caches.worker.languageID($0) + 1 } ?? 0, strictness.ordinal, words.ordinal)
        let locale: String
        if let known = caches.breakLocales[localeKey] {
            locale = known
        } else {
            locale = LineBreakOpportunities.locale(for: language, strictness: strictness, words: words)
            caches.breakLocales[localeKey] = locale
        }
        LineBreakOpportunities.mark(in: text, locale: locale, words: words, breakable: &breakable)
        // A ruby base stays on one line with its annotation.
        for annotation in paragraph.annotations where annotation.base.count > 1 {
            for index in (annotation.base.lowerBound + 1)..<annotation.base.upperBound { breakable[index] = false }
        }
        var segments = segments(paragraph, levels: levels, breaks: breakable)
        measure(&segments, paragraph)
        let justify = blockStyle.textAlign == .justify
        let justifyLast = justify && blockStyle.textAlignLast == .justify
        let indent = blockStyle.textIndent.resolve(against: available / scale) * scale
        let drop = dropCap(paragraph)
        let floatInsets: (Int) -> (left: Double, right: Double) = floats ?? { _ in (0, 0) }
        let inset: (Int) -> Double = { line in (drop.map { line < $0.lines ? $0.width : 0 } ?? 0) + floatInsets(line).left }
        let lineWidth: (Int) -> Double = { max(($0 == 0 ? available - indent : available) - inset($0) - floatInsets($0).right, available * 0.2) }

        // overflow-wrap: a word wider than the line may break between any two characters.
        let narrowest = min(lineWidth(0), lineWidth(1))
        var overflowing = false
        for segment in segments where segment.kind == .text && segment.width > narrowest {
            let style = styles[segment.style]
            guard style.overflowWrap != .normal || style.wordBreak == .breakWord || breaksOverlongWords else { continue }
            for index in (segment.start + 1)..<segment.end {
                let unit = text[index]
                if unit >= 0xDC00 && unit < 0xE000 { continue }  // inside a surrogate pair
                if let scalar = Unicode.Scalar(unit), Self.attachesToPrevious(scalar) { continue }
                breakable[index] = true
                overflowing = true
            }
        }
        if overflowing {
            segments = self.segments(paragraph, levels: levels, breaks: breakable)
            measure(&segments, paragraph)
        }

        // Justified text is offered every hyphenation point up front: total fit then weighs them
        // against loose lines (a TeX-like first pass without them measured looser spacing on
        // Moby-Dick). Greedy lines only break inside the word that overflows, so only that word
        // is hyphenated, when the line breaker meets it.
        let split = hyphenated(segments, paragraph, dictionary: justify)
        if split.count != segments.count {
            segments = split
            measure(&segments, paragraph)
        }
        // ICU breaks after a soft hyphen: that break is a hyphenation point (a hyphen is drawn if
        // the line ends there), and under `hyphens: none` no break at all.
        if text.contains(0xAD) {
            for index in segments.indices where segments[index].kind == .text && segments[index].end > segments[index].start
                && segments[index].end < text.count && text[segments[index].end - 1] == 0xAD && breakable[segments[index].end]
            {
                if styles[segments[index].style].hyphens == .none { breakable[segments[index].end] = false } else { segments[index].hyphenAfter = true }
            }
        }
        var (items, itemSegment) = breakItems(segments, paragraph, breakable: breakable, justify: justify)
        let breaks: LineBreaks
        if justify {
            breaks = LineBreaker.breakLines(items, lineWidth: lineWidth)
        } else if hyphenate {
            breaks = LineBreaker.greedy(&items, lineWidth: lineWidth) { index, room in
                self.splitOverflowing(index, room: room, segments: &segments, itemSegment: &itemSegment, paragraph: paragraph)
            }
        } else {
            breaks = LineBreaker.greedy(items, lineWidth: lineWidth)
        }

        if justify { recordSpacing(items, breaks) }
        var lines: [LineBox] = []
        var lineStart = 0
        // A line's segments and their spaces' set widths, in buffers the paragraph's lines share
        // (each line allocated two arrays before).
        var segmentIndices: [Int] = []
        /// The set width of each space of `segmentIndices` (NaN: its natural width).
        var glueAdjust: [Double] = []
        for (lineIndex, breakIndex) in breaks.breaks.enumerated() {
            var first = lineStart
            while first < breakIndex {
                if case .box = items[first] { break }
                first += 1
            }
            segmentIndices.removeAll(keepingCapacity: true)
            glueAdjust.removeAll(keepingCapacity: true)
            /// The justification space set after each segment of `segmentIndices` (CJK text);
            /// empty, and never allocated, for a line without such space.
            var spaceAfter: [Double] = []
            segmentIndices.reserveCapacity(breakIndex - first)
            glueAdjust.reserveCapacity(breakIndex - first)
            var ratio = breaks.ratios[lineIndex]
            // A line that breaks after a stop or comma that may hang was measured without it.
            var hanging = 0.0
            if mayHang, case .penalty(let width, _, _) = items[breakIndex], width < 0 {
                let (natural, stretch) = naturalWidth(items, first..<breakIndex)
                let forced = itemSegment[first..<breakIndex].last { $0 >= 0 }.map { styles[segments[$0].style].hangingPunctuation == .forceEnd } ?? false
                if forced || natural > lineWidth(lineIndex) + 1e-6 {
                    hanging = -width
                } else if ratio > 0 {
                    // It fits after all: it stays inside, and the spaces stretch less.
                    ratio = stretch > 0 ? (lineWidth(lineIndex) - natural) / stretch : 0
                }
            }
            let endsWithForced: Bool = {
                if case .penalty(_, let p, _) = items[breakIndex], p <= -BreakItem.infinitePenalty { return true }
                return false
            }()
            let lastLine = lineIndex == breaks.breaks.count - 1 || endsWithForced
            // text-align-last: justify stretches the last line's spaces to the full measure too.
            let lastRatio = lastLine && justifyLast ? fullMeasureRatio(items, itemSegment, first..<breakIndex, width: lineWidth(lineIndex)) : nil
            for itemIndex in first..<breakIndex {
                let segmentIndex = itemSegment[itemIndex]
                guard segmentIndex >= 0 else {
                    // Justification glue between CJK characters belongs to no segment: what it
                    // stretches widens the gap after the character before it (the breaker's ratio
                    // counted it, so without it a justified CJK line fell short of the measure). The
                    // fill glue before a paragraph's end (1e6) is no such glue.
                    if justify, case .glue(let w, let y, _) = items[itemIndex], w == 0, y > 0, y < 1e5, !segmentIndices.isEmpty {
                        let stretched = lastRatio.map { $0 * y } ?? (lastLine || ratio <= 0 ? 0 : ratio * y)
                        if spaceAfter.isEmpty { spaceAfter = [Double](filling: 0, count: segmentIndices.count) }
                        spaceAfter[spaceAfter.count - 1] += stretched
                    }
                    continue
                }
                if segments[segmentIndex].kind == .forcedBreak { continue }
                segmentIndices.append(segmentIndex)
                if !spaceAfter.isEmpty { spaceAfter.append(0) }
                if case .glue(let w, let y, let z) = items[itemIndex], justify {
                    let adjusted = ratio >= 0 ? w + ratio * y : w + ratio * z
                    glueAdjust.append(lastRatio.map { w + $0 * y } ?? (lastLine && ratio > 0 ? w : adjusted))
                } else {
                    glueAdjust.append(.nan)
                }
            }
            // Trailing spaces hang outside the line.
            while let last = segmentIndices.last, segments[last].kind == .space {
                segmentIndices.removeLast()
                glueAdjust.removeLast()
                if !spaceAfter.isEmpty { spaceAfter.removeLast() }
            }
            if !spaceAfter.isEmpty { spaceAfter[spaceAfter.count - 1] = 0 }
            var hyphenStyle: Int? = nil
            if case .penalty(_, _, let flagged) = items[breakIndex], flagged, let last = segmentIndices.last, segments[last].hyphenAfter {
                hyphenStyle = segments[last].style
            }
            // An empty line (a blank line in preformatted text) sits where its break is.
            let anchor = (lineStart...breakIndex).lazy.compactMap { itemSegment[$0] >= 0 ? Int(paragraph.sources[segments[itemSegment[$0]].start]) : nil }.first
            let line = makeLine(
                paragraph, anchor: anchor, segments: segments, indices: segmentIndices, glue: glueAdjust, spaceAfter: spaceAfter, hyphenStyle: hyphenStyle,
                available: lineWidth(lineIndex), hanging: hanging, indent: (lineIndex == 0 ? indent : 0) + inset(lineIndex), lastLine: lastLine && !(justify && !lastLine),
                levels: levels, marker: lineIndex == 0 ? marker : nil)
            lines.append(line)
            lineStart = breakIndex + 1
        }
        if let drop, !lines.isEmpty {
            // The drop cap sits on the baseline of the last line it spans; those lines stay together.
            let spanned = min(drop.lines, lines.count)
            var top = 0.0
            for index in 0..<(spanned - 1) { top += lines[index].height }
            let baseline = top + lines[spanned - 1].baseline
            if buildItems, var run = drop.run {
                run.origin = Point(x: drop.padding, y: baseline)
                lines[0].items.append(.glyphs(run))
            }
            for index in 0..<(spanned - 1) { lines[index].keepWithNext = true }
        }
        return lines
    }

    /// Whether a line's segment continues the piece before it (given by its fields): adjacent text
    /// of one style, face, level and orientation, with no justification space, inline box edge or
    /// tate-chu-yoko between, which `makeLine` shapes as one run.
    private static func continuesPiece(
        _ segment: Segment, kind: SegmentKind, end: Int, style: Int, face: Int32, level: UInt8, upright: Bool, combined: Bool, after: Double
    ) -> Bool {
        segment.kind == .text && kind == .text && after == 0 && end == segment.start && style == segment.style && face == segment.face
            && level == segment.level && upright == segment.upright && !segment.boxBoundary && !segment.combined && !combined
    }

    /// Map-only layout's line (no ruby on it): the height, text range and width `makeLine` finds,
    /// from the same pieces (adjacent text segments of one style, face, level and orientation
    /// merged, as there), gathered one at a time instead of built into arrays; nothing is shaped.
    private func measuredLine(
        _ paragraph: Paragraph, anchor: Int?, segments: [Segment], indices: [Int], glue: [Double], spaceAfter: [Double], indent: Double,
        strut: Metrics
    ) -> LineBox {
        var extent = strut
        var start = Int.max
        var end = 0
        var used = 0.0
        var lastMetrics: (style: Int, face: Int32) = (-1, -1)
        /// The piece being gathered (its first segment, with `end` and `after` moved on as segments merge).
        var piece: Segment? = nil
        var pieceAfter = 0.0
        var pieceWidth = 0.0
        func close(_ piece: Segment) {
            if piece.kind == .text, piece.face >= 0, lastMetrics.style != piece.style || lastMetrics.face != piece.face {
                let m = pieceMetrics(style: piece.style, face: piece.face)
                extent.top = max(extent.top, m.top)
                extent.bottom = max(extent.bottom, m.bottom)
                lastMetrics = (piece.style, piece.face)
            }
            if piece.kind == .atom {
                let size = atomSize(paragraph.atoms[piece.start]!)
                extent.top = max(extent.top, size.height + baselineShift(styles[piece.style]))
            }
            if piece.end > piece.start {
                start = min(start, Int(paragraph.sources[piece.start]))
                end = max(end, Int(paragraph.sources[piece.end - 1]) + 1)
            }
            used += pieceWidth
        }
        for (position, index) in indices.enumerated() {
            let segment = segments[index]
            let after = spaceAfter.isEmpty ? 0 : spaceAfter[position]
            if var last = piece,
                Self.continuesPiece(
                    segment, kind: last.kind, end: last.end, style: last.style, face: last.face, level: last.level, upright: last.upright,
                    combined: last.combined, after: pieceAfter)
            {
                last.end = segment.end
                piece = last
                pieceAfter = after
                continue
            }
            if let piece { close(piece) }
            piece = segment
            pieceAfter = after
            pieceWidth = (segment.kind == .space && !glue[position].isNaN ? glue[position] : segment.width) + after
        }
        if let piece { close(piece) }
        if start == Int.max {
            start = anchor ?? Int(paragraph.sources.first ?? Int32(paragraph.startOffset))
            end = start
        }
        let lineLeft = paragraph.blockStyle.direction == .rtl ? 0 : indent
        return LineBox(height: extent.top + extent.bottom, baseline: extent.top, items: [], start: start, end: end, left: lineLeft, width: used)
    }

    private func makeLine(
        _ paragraph: Paragraph, anchor: Int?, segments: [Segment], indices: [Int], glue: [Double], spaceAfter: [Double], hyphenStyle: Int?,
        available: Double,
        hanging: Double = 0, indent: Double, lastLine: Bool, levels: [UInt8]?, marker: GeneratedContent?
    ) -> LineBox {
        let blockStyle = paragraph.blockStyle
        let strutFace: FontFace
        if let cached = paragraph.strutFace {
            strutFace = cached
        } else {
            strutFace = services.fonts.primaryFace(for: request(blockStyle), bookFonts: caches.bookFonts)
            paragraph.strutFace = strutFace
        }
        var extent = metrics(blockStyle, face: strutFace)
        if !buildItems && paragraph.annotations.isEmpty {
            return measuredLine(paragraph, anchor: anchor, segments: segments, indices: indices, glue: glue, spaceAfter: spaceAfter, indent: indent, strut: extent)
        }

        // Pieces in logical order: merged text runs, spaces, atoms.
        // (The one-byte fields sit together so that a piece packs into 64 bytes.)
        struct Piece {
            var start: Int
            var end: Int
            var style: Int
            var level: UInt8
            /// Index into the chapter's face table; -1 for atoms and breaks.
            var face: Int32
            var kind: SegmentKind
            var hyphen: Bool
            var upright = false
            var combined = false
            /// The whole advance: content plus `leading` and `trailing` (inline box edges) and `after`.
            var width: Double
            var leading = 0.0
            var trailing = 0.0
            /// Justification space after the piece (between CJK characters).
            var after = 0.0
        }
        var pieces: [Piece] = []
        pieces.reserveCapacity(indices.count)
        for (position, index) in indices.enumerated() {
            let segment = segments[index]
            let after = spaceAfter.isEmpty ? 0 : spaceAfter[position]
            if var last = pieces.last,
                Self.continuesPiece(
                    segment, kind: last.kind, end: last.end, style: last.style, face: last.face, level: last.level, upright: last.upright,
                    combined: last.combined, after: last.after)
            {
                last.end = segment.end
                last.trailing = segment.trailing
                last.after = after
                pieces[pieces.count - 1] = last
                continue
            }
            // Glue widths already hold a space's box edges, as its segment's width does.
            let width = segment.kind == .space && !glue[position].isNaN ? glue[position] : segment.width
            pieces.append(
                Piece(
                    start: segment.start, end: segment.end, style: segment.style, level: segment.level,
                    face: segment.face, kind: segment.kind, hyphen: false, upright: segment.upright,
                    combined: segment.combined, width: width + after, leading: segment.leading,
                    trailing: segment.trailing, after: after))
        }
        if hyphenStyle != nil, let lastText = pieces.lastIndex(where: { $0.kind == .text }) { pieces[lastText].hyphen = true }

        // Shape text pieces (merged words re-shape as a whole, which the cache usually answers).
        var shapedPieces: [ShapedText?] = []
        shapedPieces.reserveCapacity(pieces.count)
        /// Emphasis marks by piece, found once for the line's height and drawn with the same shape.
        var marks: [Int: (face: FontFace, shaped: ShapedText)] = [:]
        for index in pieces.indices {
            let piece = pieces[index]
            guard piece.kind == .text, piece.face >= 0 else {
                shapedPieces.append(nil)
                continue
            }
            let m = pieceMetrics(style: piece.style, face: piece.face)
            extent.top = max(extent.top, m.top)
            extent.bottom = max(extent.bottom, m.bottom)
            guard buildItems else {
                // Map-only: the breaks are known and the line's height is found; nothing is drawn.
                shapedPieces.append(nil)
                continue
            }
            let face = face(piece.face)
            if let emphasis = styles[piece.style].textEmphasis, let mark = emphasisMark(emphasis, style: styles[piece.style]) { marks[index] = mark }
            // The paragraph's own units, copied only when the line ends in a hyphen.
            var units = paragraph.text[piece.start..<piece.end]
            if piece.hyphen {
                var hyphenated = Array(units)
                if hyphenated.last == 0xAD { hyphenated.removeLast() }
                hyphenated.append(0x2D)
                units = hyphenated[...]
            }
            if piece.combined {
                // Tate-chu-yoko: set left to right, in the em its segment was measured at.
                shapedPieces.append(shape(units, style: piece.style, face: face, rtl: false))
                continue
            }
            let shaped = shape(
                units, style: piece.style, face: face, rtl: piece.level & 1 == 1,
                upright: piece.upright)
            pieces[index].width =
                shaped.advance + styles[piece.style].letterSpacing * scale * Double(clusterCount(shaped)) + piece.leading
                + piece.trailing + piece.after
            shapedPieces.append(shaped)
        }
        for piece in pieces where piece.kind == .atom {
            let size = atomSize(paragraph.atoms[piece.start]!)
            extent.top = max(extent.top, size.height + baselineShift(styles[piece.style]))
        }
        // Ruby annotations on this line raise its top: the base's ascent plus the annotation's height.
        var annotations: [(annotation: RubyAnnotation, face: FontFace, baseAscent: Double)] = []
        if !paragraph.annotations.isEmpty, let first = pieces.first?.start, let last = pieces.last?.end {
            for annotation in paragraph.annotations where annotation.base.lowerBound < last && annotation.base.upperBound > first {
                let style = styles[annotation.style]
                guard let scalar = String(decoding: annotation.text, as: UTF16.self).unicodeScalars.first else { continue }
                let primary = services.fonts.primaryFace(for: request(style), bookFonts: caches.bookFonts)
                let face = primary.covers(scalar) ? primary : services.fonts.fallbackFace(for: scalar, request: request(style)) ?? primary
                let baseIndex = paragraph.runs.first { $0.start <= annotation.base.lowerBound && $0.end > annotation.base.lowerBound }?.style ?? annotation.style
                let baseStyle = styles[baseIndex]
                let baseFace = pieces.first { $0.kind == .text && $0.start <= annotation.base.lowerBound && $0.end > annotation.base.lowerBound }
                    .map { self.face($0.face) } ?? strutFace
                let size = fontSize(style)
                // In a column, the annotation's em boxes stand against the base's (as browsers set it).
                let baseAscent = (vertical ? uprightTop(style: baseIndex) : baseFace.ascent(at: fontSize(baseStyle))) + baselineShift(baseStyle)
                if vertical && style.textOrientation != .sideways {
                    extent.top = max(extent.top, baseAscent + max(0, size - uprightLeading(style: baseIndex)))
                } else {
                    extent.top = max(extent.top, baseAscent + face.ascent(at: size) + face.descent(at: size))
                }
                annotations.append((annotation, face, baseAscent))
            }
        }

        // The text range the line covers.
        var start = Int.max
        var end = 0
        for piece in pieces where piece.end > piece.start {
            start = min(start, Int(paragraph.sources[piece.start]))
            end = max(end, Int(paragraph.sources[piece.end - 1]) + 1)
        }
        if start == Int.max {
            start = anchor ?? Int(paragraph.sources.first ?? Int32(paragraph.startOffset))
            end = start
        }
        let used = pieces.reduce(0) { $0 + $1.width }
        let rtl = blockStyle.direction == .rtl
        let lineLeft = rtl ? 0 : indent
        guard buildItems else {
            return LineBox(height: extent.top + extent.bottom, baseline: extent.top, items: [], start: start, end: end, left: lineLeft, width: used)
        }

        // Visual order (bidi rule L2) and alignment.
        let order = levels == nil ? Array(pieces.indices) : Bidi.visualOrder(levels: pieces.map(\.level))
        var align = blockStyle.textAlign
        if lastLine {
            // The last line (and a line before a forced break) follows text-align-last; `auto`
            // is text-align, except that justified text's last line starts at the start.
            switch blockStyle.textAlignLast {
            case .auto: if align == .justify { align = .start }
            case .start: align = .start
            case .end: align = .end
            case .left: align = .left
            case .right: align = .right
            case .center: align = .center
            case .justify: align = .justify
            }
        }
        // A hanging mark is left out when the line is aligned: it stands past the line's end.
        let slack = max(0, available - (used - hanging))
        var x: Double
        switch align {
        case .left: x = 0
        case .right: x = slack
        case .center: x = slack / 2
        case .start, .justify: x = rtl ? slack : 0
        case .end: x = rtl ? 0 : slack
        }
        x += lineLeft - (rtl ? hanging : 0)
        let baseline = extent.top
        var items: [DisplayItem] = []
        var decorations: [(from: Double, to: Double, style: Int)] = []
        /// Where each piece's content was drawn, for the inline boxes around it.
        var drawn: [(start: Int, end: Int, left: Double, right: Double)] = []
        /// Where each annotated base unit was drawn (paragraph index → left and right x).
        var baseSpans: [Int: (left: Double, right: Double)] = [:]
        for index in order {
            let piece = pieces[index]
            // The style is read in place (a copy of a ComputedStyle costs hundreds of
            // instructions), and copied only for the text that is drawn with it.
            // Box edges go before the content on its start side (the right in right-to-left text).
            let before = piece.level & 1 == 1 ? piece.trailing : piece.leading
            let content = piece.width - piece.leading - piece.trailing - piece.after
            x += before
            if !paragraph.inlineBoxes.isEmpty { drawn.append((piece.start, piece.end, x, x + content)) }
            switch piece.kind {
            case .text where piece.combined:
                guard let shaped = shapedPieces[index], piece.face >= 0, styles[piece.style].visibility == .visible else {
                    break
                }
                var run = combinedRun(
                    shaped, face: face(piece.face), style: piece.style, x: x, baseline: baseline)
                run.sources = shaped.glyphs.map {
                    paragraph.sources[min(piece.start + Int($0.cluster), paragraph.sources.count - 1)]
                }
                items.append(.glyphs(run))
            case .text:
                guard let shaped = shapedPieces[index], piece.face >= 0 else { break }
                let style = styles[piece.style]
                let face = face(piece.face)
                let count = shaped.glyphs.count
                let lastSource = paragraph.sources.count - 1
                let spacing = style.letterSpacing * scale
                // Allocated once at its size: a run is mostly a word.
                let placed = [PlacedGlyph](capacity: count) { buffer in
                    var pen = 0.0
                    var lastCluster: UInt32 = .max
                    for (slot, glyph) in shaped.glyphs.enumerated() {
                        if spacing != 0 && glyph.cluster != lastCluster && lastCluster != .max { pen += spacing }
                        lastCluster = glyph.cluster
                        buffer.initializeElement(at: slot, to: PlacedGlyph(
                            id: glyph.id, x: Float(pen) + glyph.xOffset, y: -glyph.yOffset,
                            source: paragraph.sources[min(piece.start + Int(glyph.cluster), lastSource)]))
                        if !annotations.isEmpty {
                            let unit = piece.start + Int(glyph.cluster)
                            let span = (left: x + pen, right: x + pen + Double(glyph.advance))
                            baseSpans[unit] = baseSpans[unit].map { (min($0.left, span.left), max($0.right, span.right)) } ?? span
                        }
                        pen += Double(glyph.advance)
                    }
                    return count
                }
                let wantsBold = style.fontWeight >= 600
                let wantsItalic = style.fontStyle != .normal
                if style.visibility == .visible {
                    // Upright glyphs are placed about their column's centre line (their offsets say
                    // where from it, see ShapedGlyph).
                    let centre = piece.upright ? uprightCentre(style: piece.style) : 0
                    var run = GlyphRun(
                        face: face, size: fontSize(style), color: style.color,
                        origin: Point(x: x, y: baseline - baselineShift(style) - centre), placed: placed,
                        syntheticBold: wantsBold && !face.isBold,
                        syntheticItalic: wantsItalic && !face.isItalic, hasSources: count > 0)
                    if piece.upright { run.orientation = .upright }
                    items.append(.glyphs(run))
                }
                if !style.textDecoration.isEmpty { decorations.append((x, x + content, piece.style)) }
                if let emphasis = style.textEmphasis, style.visibility == .visible, let mark = marks[index] {
                    // The text's over and under edges: its em boxes' in a column, else its ascent and descent.
                    let top = baseline - baselineShift(style) - (vertical ? uprightTop(style: piece.style) : face.ascent(at: fontSize(style)))
                    let bottom = vertical ? top + fontSize(style) : baseline - baselineShift(style) + face.descent(at: fontSize(style))
                    items.append(.glyphs(emphasisRun(mark, emphasis: emphasis, style: style, over: shaped, piece: piece.start, in: paragraph, x: x, top: top, bottom: bottom)))
                }
            case .atom:
                let style = styles[piece.style]
                let box = paragraph.atoms[piece.start]!
                let size = atomSize(box)
                let outer = Rect(x: x, y: baseline - baselineShift(style) - size.height, width: size.width, height: size.height)
                let (border, padding) = imageEdges(box.style, basis: containingWidth / scale, scale: scale)
                let rect = outer.inset(by: border + padding)
                let first = items.count
                items += boxItems(box.style, rect: outer, widths: border, leftEdge: true, rightEdge: true)
                items.append(.image(ImageBox(rect: rect, resource: box.resource, alt: box.alt, state: box.displayState, inlineData: box.inlineData, opacity: box.style.opacity), altText: altText(box, in: rect)))
                if box.style.position == .relative {
                    // A relatively positioned picture moves with its box; the line keeps its place.
                    let offset = relativeOffset(box.style, containingWidth: available, scale: scale)
                    for index in first..<items.count { items[index] = translate(items[index], dx: offset.dx, dy: offset.dy) }
                }
            case .space:
                if !styles[piece.style].textDecoration.isEmpty { decorations.append((x, x + content, piece.style)) }
            case .forcedBreak:
                break
            }
            x += piece.width - before
        }
        if !drawn.isEmpty { items.insert(contentsOf: inlineBoxItems(paragraph, drawn: drawn, baseline: baseline), at: 0) }
        for (annotation, face, baseAscent) in annotations {
            let spans = annotation.base.compactMap { baseSpans[$0] }
            guard let left = spans.map(\.left).min(), let right = spans.map(\.right).max() else { continue }
            let style = styles[annotation.style]
            // In vertical text the annotation is a column of its own, upright, beside its base.
            let upright = vertical && style.textOrientation != .sideways
            let shaped = shape(
                annotation.text[...], style: annotation.style, face: face, rtl: false, upright: upright)
            var xs: [Float] = []
            var pen = 0.0
            for glyph in shaped.glyphs {
                xs.append(Float(pen) + glyph.xOffset)
                pen += Double(glyph.advance)
            }
            let size = fontSize(style)
            let over = baseline - baseAscent
            let origin = Point(
                x: (left + right - shaped.advance) / 2,
                y: upright ? over - size / 2 : over - face.descent(at: size))
            var run = GlyphRun(
                face: face, size: size, color: style.color, origin: origin, glyphs: shaped.glyphs.map(\.id),
                xs: xs,
                ys: shaped.glyphs.map { -$0.yOffset }, syntheticBold: false, syntheticItalic: false)
            if upright { run.orientation = .upright }
            items.append(.glyphs(run))
        }
        for decoration in decorations {
            let style = styles[decoration.style]
            let size = fontSize(style)
            let thickness = max(1, size / 18)
            var ys: [Double] = []
            if style.textDecoration.contains(.underline) {
                if vertical && style.underlineRight {
                    // On the column's right: just past the over side of its em boxes.
                    ys.append(baseline - uprightTop(style: decoration.style) - thickness / 2)
                } else {
                    // `under`: below the primary font's descenders.
                    ys.append(style.underlineUnder ? baseline + primaryFace(style: decoration.style).descent(at: size) + thickness / 2 : baseline + size * 0.12)
                }
            }
            if style.textDecoration.contains(.lineThrough) { ys.append(baseline - size * 0.28) }
            if style.textDecoration.contains(.overline) { ys.append(baseline - size * 0.85) }
            for y in ys {
                items.append(.stroke(from: Point(x: decoration.from, y: y), to: Point(x: decoration.to, y: y), width: thickness, color: style.color, style: .solid))
            }
        }
        if !drawn.isEmpty { moveRelativeBoxes(&items, paragraph, drawn: drawn, basis: available) }
        if let marker, !marker.text.isEmpty {
            let face = markerFace(marker)
            let units = Array(marker.text.utf16)
            let shaped = shaper.shape(units[...], parameters(marker.style, face: face, rtl: false))
            // Flush against the content, as browsers put an outside marker: its text ends in its
            // own space ("1. ", "• ") or suffix ("一、").
            let markerX = rtl ? available : -shaped.advance
            var pen = 0.0
            var xs: [Float] = []
            for glyph in shaped.glyphs {
                xs.append(Float(pen) + glyph.xOffset)
                pen += Double(glyph.advance)
            }
            items.append(
                .glyphs(
                    GlyphRun(
                        face: face, size: fontSize(marker.style), color: marker.style.color, origin: Point(x: markerX, y: baseline),
                        glyphs: shaped.glyphs.map(\.id), xs: xs, ys: shaped.glyphs.map { -$0.yOffset }, syntheticBold: false,
                        syntheticItalic: false)))
        }
        return LineBox(
            height: extent.top + extent.bottom, baseline: baseline, items: items, start: start, end: end,
            left: lineLeft, width: used)
    }
}

extension InlineLayout {
    /// `position: relative` on inline elements: what is drawn inside such a box on this line (its
    /// text, pictures, rules and its own box) moves by its offsets; the line keeps its place.
    /// Items are told by where they start: inside the box's extent on the line, its edges included.
    func moveRelativeBoxes(_ items: inout [DisplayItem], _ paragraph: Paragraph, drawn: [(start: Int, end: Int, left: Double, right: Double)], basis: Double) {
        for box in paragraph.inlineBoxes where styles[box.style].position == .relative {
            let style = styles[box.style]
            let offset = relativeOffset(style, containingWidth: basis, scale: scale)
            guard offset != (0, 0) else { continue }
            let inside = drawn.filter { $0.start < box.range.upperBound && $0.end > box.range.lowerBound && $0.end > $0.start }
            guard let left = inside.map(\.left).min(), let right = inside.map(\.right).max() else { continue }
            let edges = (style.padding.left.resolve(against: 0) + style.borderWidth.left) * scale + 0.5
            let endEdges = (style.padding.right.resolve(against: 0) + style.borderWidth.right) * scale + 0.5
            let extent = (left - edges)..<(right + endEdges)
            for index in items.indices {
                let x: Double
                switch items[index] {
                case .glyphs(let run): x = run.origin.x
                case .image(let image, _): x = image.rect.x
                case .fill(let rect, _): x = rect.x
                case .box(let decorated): x = decorated.box.x
                case .gradient(let fill): x = fill.area.x
                case .backgroundImage(let fill): x = fill.area.x
                case .stroke(let from, _, _, _, _): x = from.x
                default: continue
                }
                if extent.contains(x) { items[index] = translate(items[index], dx: offset.dx, dy: offset.dy) }
            }
        }
    }

    /// Fills behind inline elements' text: each span as tall as its font's ascent and descent
    /// (the inline box's content area), under the line's glyphs.
    func inlineBoxItems(_ paragraph: Paragraph, drawn: [(start: Int, end: Int, left: Double, right: Double)], baseline: Double) -> [DisplayItem] {
        var items: [DisplayItem] = []
        let lineStart = drawn.map(\.start).min() ?? 0
        let lineEnd = drawn.map(\.end).max() ?? 0
        for box in paragraph.inlineBoxes where box.range.lowerBound < lineEnd && box.range.upperBound > lineStart {
            let range = box.range.lowerBound..<min(box.range.upperBound, paragraph.text.count)
            let inside = drawn.filter { $0.start < range.upperBound && $0.end > range.lowerBound && $0.end > $0.start }
            guard var left = inside.map(\.left).min(), var right = inside.map(\.right).max() else { continue }
            let style = styles[box.style]
            // Widths of none or hidden borders are zero already (the cascade's fix-up).
            let widths = Edges(
                top: style.borderWidth.top * scale, right: style.borderWidth.right * scale,
                bottom: style.borderWidth.bottom * scale, left: style.borderWidth.left * scale)
            // The start edge is drawn on the line where the box opens, the end edge where it closes.
            let rtl = style.direction == .rtl
            let opensHere = inside.contains { $0.start <= range.lowerBound }
            let closesHere = inside.contains { $0.end >= range.upperBound }
            let leftEdge = rtl ? closesHere : opensHere
            let rightEdge = rtl ? opensHere : closesHere
            if leftEdge { left -= style.padding.left.resolve(against: 0) * scale + widths.left }
            if rightEdge { right += style.padding.right.resolve(against: 0) * scale + widths.right }
            // Vertically: the font's content area, plus padding and border (which do not move the line).
            let face = primaryFace(style: box.style)
            let size = fontSize(style)
            let textTop = baseline - baselineShift(style) - face.ascent(at: size)
            let top = textTop - style.padding.top.resolve(against: 0) * scale - widths.top
            let bottom = textTop + face.ascent(at: size) + face.descent(at: size) + style.padding.bottom.resolve(against: 0) * scale + widths.bottom
            let rect = Rect(x: left, y: top, width: right - left, height: bottom - top)
            items += boxItems(style, rect: rect, widths: widths, leftEdge: leftEdge, rightEdge: rightEdge)
        }
        return items
    }

    /// An inline box's (or an inline image's) decorations on one line, at `rect` (its border box
    /// there). Image layers and gradients are placed in each line's piece on its own (as
    /// `box-decoration-break: clone` would).
    func boxItems(_ style: ComputedStyle, rect: Rect, widths: Edges<Double>, leftEdge: Bool, rightEdge: Bool) -> [DisplayItem] {
        boxDecorations(style, rect: rect, border: widths, scale: scale, documentPath: documentPath, leftEdge: leftEdge, rightEdge: rightEdge).map(\.item)
    }
}

/// Per-worker lookups that outlive one paragraph: shaping parameter ids per style run, and
/// hyphenation points per word (libhyphen answers are costly to ask again).
final class InlineCaches {
    var parameterIDs: [PackedKey: Int] = [:]
    var primaryFaces: [Int: FontFace] = [:]
    /// The chapter's own @font-face fonts (chapters never see each other's, so results do not
    /// depend on which chapter a worker laid out first).
    var bookFonts: [BookFont] = []
    var spaceWidths: [PackedKey: Double] = [:]
    var hyphenWidths: [PackedKey: Double] = [:]
    var pieceMetrics: [PackedKey: InlineLayout.Metrics] = [:]
    /// ICU locales with line-break keywords, by language, strictness and word rule.
    var breakLocales: [PackedKey: String] = [:]
    /// The hyphenator's ids for languages, asked once per chapter (its table takes a lock).
    var hyphenationIDs: [String: Int] = [:]
    /// The width of the block being laid out (device px), for percentage image sizes.
    var containingWidth = 0.0
    /// The page's content height (device px), for percentage image heights.
    var pageHeight = 0.0
    var faces: [FontFace] = []
    var faceIndex: [PackedKey: Int32] = [:]
    /// Fallback face indexes by style and character (`fallbackFaceIndex`).
    var fallbackFaces: [PackedKey: Int32] = [:]
    var spacing = SpacingStatistics()
    /// Code points shaped to .notdef, with counts.
    var missingGlyphs: [UInt32: Int] = [:]
    let worker: LayoutWorker

    init(worker: LayoutWorker) { self.worker = worker }
}

/// What one layout thread keeps across chapters: its shaping cache (hyphenation answers are
/// shared by the book's workers, in the `Hyphenator`).
public final class LayoutWorker {
    public let shaper: Shaper
    /// Styles computed for the chapters this worker prepared, kept for the next ones.
    public let styles = StyleMemo()
    private var languages: [String: Int] = [:]
    /// Character classes met so far, kept across the worker's chapters.
    let characters = CharacterCategories()

    /// `drawing`: pages will be painted, so shaped words are kept for drawing their lines.
    /// `shared`: what the book's other workers have measured.
    public init(drawing: Bool = true, shared: SharedShaping = SharedShaping()) { shaper = Shaper(keepsGlyphs: drawing, shared: shared) }

    func languageID(_ language: String) -> Int {
        if let id = languages[language] { return id }
        languages[language] = languages.count
        return languages.count - 1
    }
}

/// The character classes layout asks of every character outside Latin-1 (whether it is a
/// combining mark, whether it attaches to the character before), kept for the Basic Multilingual
/// Plane as characters are first met: the standard library's general category is a search of its
/// tables, and a Devanagari or Arabic book asked it for every character.
final class CharacterCategories {
    /// Per BMP code point: 0 until asked, else 1, plus 2 for a combining mark and 4 for a
    /// character that attaches to the one before (allocated at the first question).
    private var classes: [UInt8] = []

    /// `BoxTreeBuilder.isCombiningMark`.
    func isCombiningMark(_ unit: UInt16) -> Bool { self.classes(of: UInt32(unit)) & 2 != 0 }

    /// `InlineLayout.attachesToPrevious`.
    func attachesToPrevious(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value < 0x10000 else { return InlineLayout.attachesToPrevious(scalar) }
        return self.classes(of: scalar.value) & 4 != 0
    }

    private func classes(of value: UInt32) -> UInt8 {
        if classes.isEmpty { classes = [UInt8](repeating: 0, count: 0x10000) }
        let known = classes[Int(value)]
        if known != 0 { return known }
        var found: UInt8 = 1
        if BoxTreeBuilder.isCombiningMark(UInt16(value)) { found |= 2 }
        if let scalar = Unicode.Scalar(value), InlineLayout.attachesToPrevious(scalar) { found |= 4 }
        classes[Int(value)] = found
        return found
    }
}

/// Running moments of inter-word space factors (set width ÷ natural width) on justified lines.
public struct SpacingStatistics: Sendable, Hashable {
    public var count = 0
    public var sum = 0.0
    public var sumOfSquares = 0.0

    public init() {}

    public mutating func add(_ other: SpacingStatistics) {
        count += other.count
        sum += other.sum
        sumOfSquares += other.sumOfSquares
    }

    public var mean: Double { count == 0 ? 0 : sum / Double(count) }
    public var standardDeviation: Double {
        guard count > 1 else { return 0 }
        return (max(0, sumOfSquares / Double(count) - mean * mean)).squareRoot()
    }
}

