import CHarfBuzz
import Glibc
import QuireStyle
import QuireCore

/// One positioned glyph. Advances and offsets are in px at the run's size; `cluster` is the UTF-16
/// offset of the glyph's first character within the shaped text. Text shaped top to bottom
/// (`ShapingParameters.vertical`) is given as if the column were a line turned a quarter turn
/// counter-clockwise: `advance` runs down the column, `xOffset` along it (down) from the pen to
/// the glyph's horizontal origin, `yOffset` across it (to the right) from the column's centre line.
public struct ShapedGlyph: Sendable, Hashable {
    public var id: UInt32
    public var cluster: UInt32
    public var advance: Float
    public var xOffset: Float
    public var yOffset: Float
}

/// Glyphs for one piece of text in one face at one size and direction.
public struct ShapedText: Sendable, Hashable {
    public var glyphs: [ShapedGlyph]
    public var advance: Double
    /// Some character had no glyph in the face (.notdef, glyph 0).
    public var hasMissingGlyphs: Bool

    public init(glyphs: [ShapedGlyph], advance: Double) {
        self.glyphs = glyphs
        self.advance = advance
        hasMissingGlyphs = glyphs.contains { $0.id == 0 }
    }

    public static let empty = ShapedText(glyphs: [], advance: 0)
}

/// What shaping depends on, besides the text.
public struct ShapingParameters: Hashable, Sendable {
    public var face: FontFace
    public var size: Double
    public var features: [FontFeature]
    public var rightToLeft: Bool
    public var language: String?
    /// Upright text in a vertical line: shaped top to bottom, with the font's vertical metrics
    /// and its vertical forms (HarfBuzz turns on `vert` for a vertical direction).
    public var vertical: Bool

    public init(
        face: FontFace, size: Double, features: [FontFeature] = [], rightToLeft: Bool = false, language: String? = nil, vertical: Bool = false
    ) {
        self.face = face
        self.size = size
        self.features = features
        self.rightToLeft = rightToLeft
        self.language = language
        self.vertical = vertical
    }

    public static func == (lhs: ShapingParameters, rhs: ShapingParameters) -> Bool {
        lhs.face === rhs.face && lhs.size == rhs.size && lhs.features == rhs.features && lhs.rightToLeft == rhs.rightToLeft
            && lhs.language == rhs.language && lhs.vertical == rhs.vertical
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(face))
        hasher.combine(size)
        hasher.combine(features)
        hasher.combine(rightToLeft)
        hasher.combine(language)
        hasher.combine(vertical)
    }
}

/// What all layout workers of one book share about shaping: parameter ids (so a word's key means
/// the same in every worker) and the widths of words measured so far, so two workers do not shape
/// the same words twice. A worker asks here only when its own table misses; a width is a pure
/// function of its key, so what is found here never depends on which worker measured it first.
public final class SharedShaping: Sendable {
    private let registry = LockedValue<(ids: [ShapingParameters: Int], list: [ShapingParameters])>(([:], []))
    /// The widths in shards: every worker asks here for each word its recent widths miss, and one
    /// lock made them queue (a `Mutex` takes the kernel's PI slow path when contended).
    private let widths = Shards(count: 8) { WidthTable(part: 8) }

    public init() {}

    /// High bits: the table inside a shard places entries by the low ones.
    private static func shard(_ key: WidthKey) -> Int { key.slotHash >> 40 }

    func id(for parameters: ShapingParameters) -> Int {
        registry.withLock { registry in
            if let id = registry.ids[parameters] { return id }
            registry.list.append(parameters)
            registry.ids[parameters] = registry.list.count - 1
            return registry.list.count - 1
        }
    }

    func parameters(_ id: Int) -> ShapingParameters { registry.withLock { $0.list[id] } }

    func width(_ key: WidthKey) -> (advance: Double, missing: Bool)? {
        widths.withShard(Self.shard(key)) { $0.find(key) }
    }

    func store(_ key: WidthKey, advance: Double, missing: Bool) {
        widths.withShard(Self.shard(key)) { table in
            if table.find(key) == nil { table.insert(key, advance: advance, missing: missing) }
        }
    }

    /// Painting's short words, their measured widths and the glyphs they were shaped with, shared
    /// in shards as well: each worker kept all of them before, and in a long book both workers
    /// meet the same words (Moby-Dick: about 4 MB a worker).
    private let painted = Shards(count: 8) { ShapedWords(part: 8) }

    func paintedWidth(_ key: WidthKey) -> (advance: Double, missing: Bool)? {
        painted.withShard(Self.shard(key)) { $0.width(key) }
    }

    func storePaintedWidth(_ key: WidthKey, advance: Double, missing: Bool) {
        painted.withShard(Self.shard(key)) { $0.storeWidth(key, advance: advance, missing: missing) }
    }

    /// The glyphs kept for a word, as `Shaper` makes them at `scale` (nil when none are kept).
    func keptGlyphs(_ key: WidthKey, scale: Double, vertical: Bool) -> ShapedText? {
        painted.withShard(Self.shard(key)) { words in
            guard let kept = words.shaped(key) else { return nil }
            var glyphs: [ShapedGlyph] = []
            glyphs.reserveCapacity(kept.glyphs.count)
            for glyph in kept.glyphs {
                glyphs.append(
                    Shaper.glyph(
                        UInt32(glyph.id), UInt32(glyph.cluster), advance: glyph.advance, xOffset: Int32(glyph.xOffset), yOffset: Int32(glyph.yOffset),
                        scale: scale, vertical: vertical))
            }
            return ShapedText(glyphs: glyphs, advance: Double(kept.units) * scale)
        }
    }

    func keep(_ key: WidthKey, _ glyphs: [PackedGlyph], units: Int32) {
        painted.withShard(Self.shard(key)) { $0.storeShaped(key, glyphs, units: units) }
    }
}

/// HarfBuzz shaping with a cache of shaped words: a novel repeats the same few thousand words,
/// so each distinct (face, size, features, direction, text) is shaped once per cache.
/// A cache belongs to one worker thread (no locking); results do not depend on the cache.
public final class Shaper {
    /// Parameters are interned to small ids (shared by the book's workers) so a cache lookup
    /// hashes only the text.
    private let shared: SharedShaping
    private var parameterIDs: [ShapingParameters: Int] = [:]
    private var parameters: [Int: ShapingParameters] = [:]
    /// Shaped runs longer than `TextKey.inlineUnits`, in two generations: when the young one is
    /// full it becomes the old one and the one before is dropped, and a run found in the old one
    /// moves back to the young. A worker's glyphs stay bounded while the runs a book keeps using
    /// stay cached; a long book's rare ones do not pile up.
    private var cache: [TextKey: ShapedText] = [:]
    private var olderCache: [TextKey: ShapedText] = [:]
    private var recent = RecentWidths()
    /// Map-only layout's widths of words too long for the width tables.
    private var longWidths: [TextKey: (advance: Double, hasMissingGlyphs: Bool)] = [:]
    private let buffer: OpaquePointer
    /// What HarfBuzz needs per parameter id, made once: language, features and, per script, the
    /// shape plan (so a word is shaped without HarfBuzz finding its plan in the face's cache, or
    /// the language and feature tags being parsed again).
    private var harfBuzzSettings: [HarfBuzzSettings?] = []
    private var plans: [PackedKey: OpaquePointer] = [:]
    /// Per shape plan, what measuring words as sums of character and pair advances needs (nil
    /// when the face has tables the sum cannot follow).
    private var pairwise: [PackedKey: PairwiseWidths?] = [:]
    /// Words measured by the pairwise sum, without shaping them.
    public private(set) var pairwiseWords = 0
    /// The plan the last word was summed with (a paragraph's words mostly share one).
    private var lastPairwise: (key: PackedKey, widths: PairwiseWidths?)?

    /// Plain values only: reading them retains nothing, where copying the parameters out retains
    /// their face, which every worker shares (its reference count then moves between cores).
    private struct HarfBuzzSettings {
        var language: hb_language_t?
        var features: [hb_feature_t]
        var rightToLeft: Bool
        var vertical: Bool
        var face: OpaquePointer
        var font: OpaquePointer
        /// From font units to points.
        var scale: Double
    }
    public private(set) var hits = 0
    public private(set) var misses = 0
    /// The caches are dropped when they grow past this many entries (bounded memory on huge books).
    public static let maxCacheEntries = 300_000
    /// Shaped long runs per generation of their cache (see `cache`).
    static let cacheGeneration = 4096

    /// Whether measured words keep their shaped glyphs for drawing (off for map-only layout).
    public let keepsGlyphs: Bool

    public init(keepsGlyphs: Bool = true, shared: SharedShaping = SharedShaping()) {
        self.keepsGlyphs = keepsGlyphs
        self.shared = shared
        buffer = hb_buffer_create()
    }

    deinit {
        hb_buffer_destroy(buffer)
        for plan in plans.values { hb_shape_plan_destroy(plan) }
    }

    public var hitRate: Double { hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses) }

    public func parameterID(_ parameters: ShapingParameters) -> Int {
        if let id = parameterIDs[parameters] { return id }
        let id = shared.id(for: parameters)
        self.parameters[id] = parameters
        parameterIDs[parameters] = id
        return id
    }

    private func parameters(_ id: Int) -> ShapingParameters {
        if let known = parameters[id] { return known }
        let found = shared.parameters(id)
        parameters[id] = found
        return found
    }

    public func shape(_ text: ArraySlice<UInt16>, _ parameters: ShapingParameters) -> ShapedText {
        shape(text, parameterID: parameterID(parameters))
    }

    /// The advance of a shaped text and whether it lacks glyphs. Short words are answered from the
    /// worker's recent widths, then from the book's shared width table (map-only) or this worker's
    /// table with its glyph cache (painting); longer runs go through the shaping cache. A new word
    /// with punctuation around it is composed from the widths of its parts (see `composed`).
    public func measure(_ text: ArraySlice<UInt16>, parameterID: Int) -> (advance: Double, hasMissingGlyphs: Bool) {
        if text.isEmpty { return (0, false) }
        guard text.count <= TextKey.inlineUnits else {
            if keepsGlyphs {
                let shaped = shape(text, parameterID: parameterID)
                return (shaped.advance, shaped.hasMissingGlyphs)
            }
            // Map-only: a long word's width alone, without the glyphs the shaping cache would keep.
            let key = TextKey(text, tag: parameterID)
            if let known = longWidths[key] {
                hits += 1
                return known
            }
            misses += 1
            let measured = text.withUnsafeBufferPointer { measureUncached($0, id: parameterID) }
            if longWidths.count >= Shaper.maxCacheEntries { longWidths.removeAll(keepingCapacity: true) }
            longWidths[key.detached] = (measured.advance, measured.missing)
            return (measured.advance, measured.missing)
        }
        return text.withUnsafeBufferPointer { measure(short: $0, parameterID: parameterID) }
    }

    /// `measure` of a text of at most `TextKey.inlineUnits` units, borrowed (the hot path: no
    /// reference to the paragraph's text is taken for each word).
    public func measure(short text: UnsafeBufferPointer<UInt16>, parameterID: Int) -> (advance: Double, hasMissingGlyphs: Bool) {
        guard let widthKey = WidthKey(units: text, tag: parameterID) else { return measure(text[...].copied, parameterID: parameterID) }
        let measured = width(text, key: widthKey, parameterID: parameterID, composing: true)
        return (measured.advance, measured.missing)
    }

    /// A short text's width from the tables, or measured and stored: composed from its parts when
    /// `composing` allows and it has punctuation around it, else shaped.
    private func width(_ text: UnsafeBufferPointer<UInt16>, key widthKey: WidthKey, parameterID: Int, composing: Bool) -> (advance: Double, missing: Bool) {
        if let known = recent.find(widthKey) {
            hits += 1
            return known
        }
        let measured: (advance: Double, missing: Bool)
        if keepsGlyphs, let known = shared.paintedWidth(widthKey) {
            // Painting keeps the book's words with their glyphs.
            hits += 1
            measured = known
        } else if !keepsGlyphs, let known = shared.width(widthKey) {
            // Map-only layout keeps no glyphs; every word's width is in the book's shared table.
            hits += 1
            measured = known
        } else {
            misses += 1
            // Map-only layout tries the pairwise sum on the whole word first, punctuation and all.
            let sums = composing && !keepsGlyphs
            if sums, let summed = pairwiseWidth(text, id: parameterID) {
                measured = summed
            } else if composing, let parts = composed(text, id: parameterID) {
                measured = parts
            } else if keepsGlyphs && composing {
                // Painting shapes the same words again: keep their glyphs (not those of a word's
                // parts and seams, which are never drawn on their own).
                let shaped = shapedShort(text, key: widthKey, parameterID: parameterID).shaped
                measured = (shaped.advance, shaped.hasMissingGlyphs)
            } else {
                measured = measureUncached(text, id: parameterID, summing: !sums)
            }
            if keepsGlyphs {
                shared.storePaintedWidth(widthKey, advance: measured.advance, missing: measured.missing)
            } else {
                shared.store(widthKey, advance: measured.advance, missing: measured.missing)
            }
        }
        recent.store(widthKey, advance: measured.advance, missing: measured.missing)
        return measured
    }

    /// A word with punctuation before or after it ("whale," “The) measured from the widths of its
    /// parts plus, at each seam, what shaping the two characters either side together adds (kerning,
    /// a ligature at the word's end). Nearly half of a novel's new words are known words with other
    /// punctuation, so HarfBuzz runs far less. Widths are whole font units times the scale, so the
    /// sum is exact: over the 62,000 distinct tokens of Moby-Dick and War and Peace, in the 33 faces
    /// of the bundled fonts, Noto and the corpus's embedded fonts, every composed width equals the
    /// shaped one. Only horizontal left-to-right text of Latin letters and punctuation is composed.
    private func composed(_ text: UnsafeBufferPointer<UInt16>, id: Int) -> (advance: Double, missing: Bool)? {
        guard text.allSatisfy({ $0 < 0x300 || (0x2010...0x206F).contains($0) }) else { return nil }
        var lead = text.startIndex
        while lead < text.endIndex && Self.isPunctuation(text[lead]) { lead += 1 }
        var trail = text.endIndex
        while trail > lead && Self.isPunctuation(text[trail - 1]) { trail -= 1 }
        guard lead < trail, lead > text.startIndex || trail < text.endIndex else { return nil }
        let settings = harfBuzzSettings(id)
        guard !settings.rightToLeft, !settings.vertical else { return nil }
        var total = 0.0
        for part in [text.startIndex..<lead, lead..<trail, trail..<text.endIndex] where !part.isEmpty {
            guard let units = units(UnsafeBufferPointer(rebasing: text[part]), id: id, scale: settings.scale) else { return nil }
            total += units
        }
        for seam in [lead, trail] where seam > text.startIndex && seam < text.endIndex {
            // Two visible characters either side (word joiners and soft hyphens are skipped, as
            // HarfBuzz skips them when kerning).
            var start = seam
            var visible = 0
            while start > text.startIndex && visible < 2 {
                start -= 1
                if !Self.isIgnorable(text[start]) { visible += 1 }
            }
            var end = seam
            visible = 0
            while end < text.endIndex && visible < 2 {
                if !Self.isIgnorable(text[end]) { visible += 1 }
                end += 1
            }
            guard let both = units(UnsafeBufferPointer(rebasing: text[start..<end]), id: id, scale: settings.scale),
                let left = units(UnsafeBufferPointer(rebasing: text[start..<seam]), id: id, scale: settings.scale),
                let right = units(UnsafeBufferPointer(rebasing: text[seam..<end]), id: id, scale: settings.scale)
            else { return nil }
            total += both - left - right
        }
        return (total * settings.scale, false)
    }

    /// A short text's advance in whole font units (nil when a glyph is missing or the text is long).
    private func units(_ text: UnsafeBufferPointer<UInt16>, id: Int, scale: Double) -> Double? {
        guard let key = WidthKey(units: text, tag: id) else { return nil }
        let measured = width(text, key: key, parameterID: id, composing: false)
        return measured.missing ? nil : (measured.advance / scale).rounded()
    }

    /// Punctuation a word may carry before or after it: ASCII and Latin-1 punctuation and symbols,
    /// and the general punctuation block (dashes, curly quotes, an ellipsis, word joiners).
    public static func isPunctuation(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x21...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E, 0xA1...0xBF, 0xD7, 0xF7, 0x2010...0x206F: return true
        default: return false
        }
    }

    /// Characters HarfBuzz hides and skips over when kerning.
    static func isIgnorable(_ unit: UInt16) -> Bool {
        unit == 0xAD || (0x200B...0x200F).contains(unit) || (0x2060...0x2064).contains(unit) || unit == 0xFEFF
    }

    public func shape(_ text: ArraySlice<UInt16>, parameterID: Int) -> ShapedText {
        if text.isEmpty { return .empty }
        let result =
            if let widthKey = text.withUnsafeBufferPointer({ WidthKey(units: $0, tag: parameterID) }) {
                text.withUnsafeBufferPointer { shapedShort($0, key: widthKey, parameterID: parameterID) }
            } else {
                cachedShape(text, key: TextKey(text, tag: parameterID), parameterID: parameterID)
            }
        if result.wasCached { hits += 1 } else { misses += 1 }
        return result.shaped
    }

    /// A short text's glyphs from the book's kept words, or shaped and kept (not counted:
    /// callers count).
    private func shapedShort(_ text: UnsafeBufferPointer<UInt16>, key: WidthKey, parameterID: Int) -> (shaped: ShapedText, wasCached: Bool) {
        let settings = harfBuzzSettings(parameterID)
        if let kept = shared.keptGlyphs(key, scale: settings.scale, vertical: settings.vertical) { return (kept, true) }
        let result = shapeUncached(text, id: parameterID, packing: true)
        if let packed = result.packed { shared.keep(key, packed, units: Int32(result.units)) }
        return (result.shaped, false)
    }

    /// The shaped text from the cache, or shaped and cached (not counted: callers count).
    private func cachedShape(_ text: ArraySlice<UInt16>, key: TextKey, parameterID: Int) -> (shaped: ShapedText, wasCached: Bool) {
        if let cached = cache[key] { return (cached, true) }
        if let older = olderCache[key] {
            keepShaped(older, key: key)
            return (older, true)
        }
        let shaped = text.withUnsafeBufferPointer { shapeUncached($0, id: parameterID).shaped }
        keepShaped(shaped, key: key)
        return (shaped, false)
    }

    private func keepShaped(_ shaped: ShapedText, key: TextKey) {
        if cache.count >= Shaper.cacheGeneration {
            olderCache = cache
            cache = Dictionary(minimumCapacity: Shaper.cacheGeneration)
        }
        // Keys are copied so the cache never keeps a whole paragraph's text alive.
        cache[key.detached] = shaped
    }

    /// Runs HarfBuzz over the text into the shaper's buffer; its glyphs, their positions and the
    /// scale from font units to points.
    /// `script`, when given, is used instead of the one HarfBuzz would guess from the text (the
    /// pairwise widths shape a word's characters with the word's script).
    private func runHarfBuzz(_ text: UnsafeBufferPointer<UInt16>, id: Int, script forcedScript: hb_script_t? = nil) -> (
        count: Int, infos: UnsafeMutablePointer<hb_glyph_info_t>, positions: UnsafeMutablePointer<hb_glyph_position_t>, scale: Double
    ) {
        hb_buffer_clear_contents(buffer)
        hb_buffer_add_utf16(buffer, text.baseAddress, Int32(text.count), 0, Int32(text.count))
        let settings = harfBuzzSettings(id)
        hb_buffer_set_direction(buffer, settings.vertical ? HB_DIRECTION_TTB : settings.rightToLeft ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
        if let language = settings.language { hb_buffer_set_language(buffer, language) }
        if let forcedScript { hb_buffer_set_script(buffer, forcedScript) }
        hb_buffer_guess_segment_properties(buffer)
        let script = hb_buffer_get_script(buffer)
        let key = PackedKey(id, Int(script.rawValue & 0xFF_FFFF), Int(script.rawValue >> 24))
        var features = settings.features
        let plan: OpaquePointer
        if let known = plans[key] {
            plan = known
        } else {
            var properties = hb_segment_properties_t()
            hb_buffer_get_segment_properties(buffer, &properties)
            // With the font's variation coordinates, as hb_shape would (a variable font's named instance).
            var length: UInt32 = 0
            let coordinates = hb_font_get_var_coords_normalized(settings.font, &length)
            plan = hb_shape_plan_create_cached2(
                settings.face, &properties, &features, UInt32(features.count), coordinates, length, nil)
            plans[key] = plan
        }
        hb_shape_plan_execute(plan, settings.font, buffer, &features, UInt32(features.count))
        var count: UInt32 = 0
        let infos = hb_buffer_get_glyph_infos(buffer, &count)!
        let positions = hb_buffer_get_glyph_positions(buffer, &count)!
        return (Int(count), infos, positions, settings.scale)
    }

    private func harfBuzzSettings(_ id: Int) -> HarfBuzzSettings {
        if id < harfBuzzSettings.count, let known = harfBuzzSettings[id] { return known }
        // The face stays alive with the book's shared parameters, so its pointers may be kept.
        let parameters = parameters(id)
        let settings = HarfBuzzSettings(
            // lang="" (language unknown) has no HarfBuzz language: NULL, which map force-unwrapped.
            language: parameters.language.flatMap { hb_language_from_string($0, -1) },
            features: parameters.features.map { feature in
                hb_feature_t(tag: hb_tag_from_string(feature.tag, -1), value: feature.value, start: 0, end: UInt32.max)
            },
            rightToLeft: parameters.rightToLeft, vertical: parameters.vertical, face: parameters.face.hbFace, font: parameters.face.hbFont,
            scale: parameters.size / parameters.face.unitsPerEm)
        if id >= harfBuzzSettings.count { harfBuzzSettings += Array(repeating: nil, count: id + 1 - harfBuzzSettings.count) }
        harfBuzzSettings[id] = settings
        return settings
    }

    /// HarfBuzz's glyphs for a text, and the sum of their advances in font units; with `packing`,
    /// the glyphs as `ShapedWords` keeps them too (nil when a value does not fit its packed field).
    private func shapeUncached(_ text: UnsafeBufferPointer<UInt16>, id: Int, packing: Bool = false) -> (
        shaped: ShapedText, packed: [PackedGlyph]?, units: Int
    ) {
        let (count, infos, positions, scale) = runHarfBuzz(text, id: id)
        let vertical = harfBuzzSettings(id).vertical
        var glyphs: [ShapedGlyph] = []
        glyphs.reserveCapacity(count)
        var packed: [PackedGlyph]? = packing ? [] : nil
        packed?.reserveCapacity(count)
        var units = 0
        for index in 0..<count {
            let position = positions[index]
            // A vertical run's advance is HarfBuzz's y advance, its offsets are y then x.
            let advance = vertical ? position.y_advance : position.x_advance
            let xOffset = vertical ? position.y_offset : position.x_offset
            let yOffset = vertical ? position.x_offset : position.y_offset
            units += Int(vertical ? -advance : advance)
            let id = infos[index].codepoint
            let cluster = infos[index].cluster
            glyphs.append(Self.glyph(id, cluster, advance: advance, xOffset: xOffset, yOffset: yOffset, scale: scale, vertical: vertical))
            if packed != nil {
                if let id = UInt16(exactly: id), let cluster = UInt16(exactly: cluster), let x = Int16(exactly: xOffset), let y = Int16(exactly: yOffset) {
                    packed!.append(PackedGlyph(id: id, cluster: cluster, advance: advance, xOffset: x, yOffset: y))
                } else {
                    packed = nil
                }
            }
        }
        if Int32(exactly: units) == nil { packed = nil }
        return (ShapedText(glyphs: glyphs, advance: Double(units) * scale), packed, units)
    }

    /// A glyph from HarfBuzz's font units; in a vertical run, its y advance, y offset and x offset,
    /// given as if the column were a line turned a quarter turn (see `ShapedGlyph`). Glyphs shaped
    /// now and glyphs kept packed go through this one computation, so both come out the same.
    @inline(__always)
    static func glyph(
        _ id: UInt32, _ cluster: UInt32, advance: Int32, xOffset: Int32, yOffset: Int32, scale: Double, vertical: Bool
    ) -> ShapedGlyph {
        if vertical {
            return ShapedGlyph(
                id: id, cluster: cluster, advance: Float(-Double(advance) * scale), xOffset: Float(-Double(xOffset) * scale),
                yOffset: Float(Double(yOffset) * scale))
        }
        return ShapedGlyph(
            id: id, cluster: cluster, advance: Float(Double(advance) * scale), xOffset: Float(Double(xOffset) * scale),
            yOffset: Float(Double(yOffset) * scale))
    }

    /// The advance alone (as `shapeUncached` sums it: whole font units, then the scale) and whether
    /// a glyph is missing: map-only layout keeps no glyphs, so none are built.
    /// `summing`: whether to try the pairwise sum first (false when it was just tried).
    private func measureUncached(_ text: UnsafeBufferPointer<UInt16>, id: Int, summing: Bool = true) -> (advance: Double, missing: Bool) {
        if summing, let summed = pairwiseWidth(text, id: id) { return summed }
        let (count, infos, positions, scale) = runHarfBuzz(text, id: id)
        let vertical = harfBuzzSettings(id).vertical
        var units = 0
        var missing = false
        for index in 0..<count {
            units += Int(vertical ? -positions[index].y_advance : positions[index].x_advance)
            missing = missing || infos[index].codepoint == 0
        }
        return (Double(units) * scale, missing)
    }
}

extension Shaper {
    /// What the pairwise sum knows for one shape plan (parameter id and script): the plan's
    /// lookups and the advances HarfBuzz gave characters alone and in pairs, in font units.
    final class PairwiseWidths {
        struct Character {
            var glyph: UInt32
            var units: Int32
            /// The plan's subtables whose rules can start at this glyph (`PlanLookups`).
            var subtables: UInt64
        }

        let lookups: PlanLookups
        /// By slot (`pairwiseSlot`): the character's index in `characters`, `unknown` or `unusable`.
        var slots = [Int16](repeating: PairwiseWidths.unknownSlot, count: Shaper.pairwiseSlots)
        var characters: [Character] = []
        /// What shaping two characters together adds to their advances, by their indexes, in a
        /// square of `side` that doubles as characters come (a book's text in one style uses a
        /// few dozen; a worker keeps one per style and script).
        var pairs = [Int32](repeating: PairwiseWidths.unknown, count: 16 * 16)
        private(set) var side = 16

        static let maxCharacters = 128
        static let unknownSlot: Int16 = -1
        static let unusableSlot: Int16 = -2
        static let unknown = Int32.min
        /// A pair whose glyphs change when shaped together.
        static let changes = Int32.min + 1

        init(lookups: PlanLookups) { self.lookups = lookups }

        /// Adds a measured character; nil when the pair table is full.
        func add(_ character: Character) -> Int? {
            guard characters.count < Self.maxCharacters else { return nil }
            if characters.count == side {
                var grown = [Int32](repeating: Self.unknown, count: 4 * side * side)
                for row in 0..<side {
                    for column in 0..<side { grown[row * 2 * side + column] = pairs[row * side + column] }
                }
                pairs = grown
                side *= 2
            }
            characters.append(character)
            return characters.count - 1
        }
    }

    /// The pairwise sum's width for horizontal left-to-right text; nil for other text, or when
    /// the sum cannot take it.
    func pairwiseWidth(_ text: UnsafeBufferPointer<UInt16>, id: Int) -> (advance: Double, missing: Bool)? {
        let settings = harfBuzzSettings(id)
        guard !settings.rightToLeft, !settings.vertical, let units = pairwiseUnits(text, id: id) else { return nil }
        pairwiseWords += 1
        return (Double(units) * settings.scale, false)
    }

    /// A horizontal left-to-right word's advance in font units as the sum of its characters'
    /// advances and of the kerning of each adjacent pair, or nil when that sum may differ from
    /// HarfBuzz's: a character outside Latin letters and common punctuation, a glyph missing or
    /// not a base glyph, or a lookup of the plan that would act on the word (`PlanLookups`). Most
    /// new words of a book are measured so, without HarfBuzz shaping them. Each advance and
    /// adjustment comes from HarfBuzz shaping one character or two, with the word's script, so
    /// the sum equals what shaping the word gives, unit for unit.
    func pairwiseUnits(_ text: UnsafeBufferPointer<UInt16>, id: Int) -> Int? {
        var script = HB_SCRIPT_INVALID
        let unicode = hb_unicode_funcs_get_default()
        for unit in text {
            guard Self.pairwiseSlot(unit) != nil else { return nil }
            // As hb_buffer_guess_segment_properties: the first character with a real script
            // (below U+0041 and from U+2010 on, every candidate is common).
            if script == HB_SCRIPT_INVALID && unit >= 0x41 && unit < 0x250 {
                let found = hb_unicode_script(unicode, hb_codepoint_t(unit))
                if found != HB_SCRIPT_COMMON && found != HB_SCRIPT_INHERITED && found != HB_SCRIPT_UNKNOWN { script = found }
            }
        }
        guard let first = text.first else { return 0 }
        guard let widths = pairwiseWidths(id: id, script: script, sample: first) else { return nil }
        let forced = script == HB_SCRIPT_INVALID ? nil : script
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: text.count) { glyphs -> Int? in
            var units = 0
            var acting: UInt64 = 0
            var previous = -1
            for (position, unit) in text.enumerated() {
                guard let index = character(unit, in: widths, id: id, script: forced) else { return nil }
                let character = widths.characters[index]
                glyphs[position] = character.glyph
                units += Int(character.units)
                acting |= character.subtables
                if previous >= 0 {
                    guard let kerning = pair(previous, index, text[position - 1], unit, in: widths, id: id, script: forced) else { return nil }
                    units += Int(kerning)
                }
                previous = index
            }
            if acting != 0 {
                let lookups = widths.lookups
                for position in text.indices {
                    let subtables = widths.characters[Int(widths.slots[Self.pairwiseSlot(text[position])!])].subtables
                    if subtables != 0 && lookups.acts(on: UnsafeBufferPointer(glyphs), at: position, subtables: subtables) { return nil }
                }
            }
            return units
        }
    }

    /// Slots for the characters the pairwise sum takes: letters of the Latin blocks, ASCII and
    /// Latin-1 symbols, spaces and general punctuation; no marks, no characters HarfBuzz hides
    /// (soft hyphen, joiners, bidi controls), no fraction slash (it turns on fraction features).
    @inline(__always)
    static func pairwiseSlot(_ unit: UInt16) -> Int? {
        switch unit {
        case 0x20...0x7E, 0xA0...0xAC, 0xAE...0x24F: return Int(unit)
        case 0x2010...0x2027, 0x2030...0x2043, 0x2045...0x205E: return 0x250 + Int(unit - 0x2010)
        default: return nil
        }
    }

    static let pairwiseSlots = 0x250 + 0x4F

    /// Nil when the face has tables the sum cannot follow (see `PlanLookups.init`).
    private func pairwiseWidths(id: Int, script: hb_script_t, sample: UInt16) -> PairwiseWidths? {
        let key = PackedKey(id, Int(script.rawValue & 0xFF_FFFF), Int(script.rawValue >> 24))
        if let last = lastPairwise, last.key == key { return last.widths }
        if let known = pairwise[key] {
            lastPairwise = (key, known)
            return known
        }
        // The plan HarfBuzz shapes such a word with: the one shaping one of its characters makes.
        var unit = sample
        _ = withUnsafePointer(to: &unit) {
            runHarfBuzz(UnsafeBufferPointer(start: $0, count: 1), id: id, script: script == HB_SCRIPT_INVALID ? nil : script)
        }
        let settings = harfBuzzSettings(id)
        let widths = plans[key].flatMap { PlanLookups(face: settings.face, plan: $0) }.map(PairwiseWidths.init)
        pairwise[key] = widths
        lastPairwise = (key, widths)
        return widths
    }

    /// The character's index in `widths.characters`, measured on first use; nil when the sum
    /// cannot take it (no glyph, not a base glyph, shaped alone into another glyph, or past the
    /// pair table's size).
    @inline(__always)
    private func character(_ unit: UInt16, in widths: PairwiseWidths, id: Int, script: hb_script_t?) -> Int? {
        let slot = Self.pairwiseSlot(unit)!
        let known = widths.slots[slot]
        if known >= 0 { return Int(known) }
        if known == PairwiseWidths.unusableSlot { return nil }
        let index = measureCharacter(unit, id: id, script: script).flatMap { measured in
            widths.add(PairwiseWidths.Character(glyph: measured.glyph, units: measured.units, subtables: widths.lookups.subtableMask(startingAt: measured.glyph)))
        }
        widths.slots[slot] = index.map { Int16($0) } ?? PairwiseWidths.unusableSlot
        return index
    }

    private func measureCharacter(_ unit: UInt16, id: Int, script: hb_script_t?) -> (glyph: UInt32, units: Int32)? {
        let settings = harfBuzzSettings(id)
        var glyph: hb_codepoint_t = 0
        guard hb_font_get_nominal_glyph(settings.font, hb_codepoint_t(unit), &glyph) != 0, glyph != 0 else { return nil }
        let glyphClass = hb_ot_layout_get_glyph_class(settings.face, glyph)
        guard glyphClass == HB_OT_LAYOUT_GLYPH_CLASS_UNCLASSIFIED || glyphClass == HB_OT_LAYOUT_GLYPH_CLASS_BASE_GLYPH else { return nil }
        var single = unit
        let run = withUnsafePointer(to: &single) { runHarfBuzz(UnsafeBufferPointer(start: $0, count: 1), id: id, script: script) }
        guard run.count == 1, run.infos[0].codepoint == glyph else { return nil }
        return (glyph, run.positions[0].x_advance)
    }

    /// What shaping the two characters (by index) together adds to their advances alone; nil
    /// when it changes their glyphs.
    @inline(__always)
    private func pair(_ first: Int, _ second: Int, _ left: UInt16, _ right: UInt16, in widths: PairwiseWidths, id: Int, script: hb_script_t?) -> Int32? {
        let slot = first * widths.side + second
        var kerning = widths.pairs[slot]
        if kerning == PairwiseWidths.unknown {
            kerning = measurePair(widths.characters[first], widths.characters[second], left, right, id: id, script: script)
            widths.pairs[slot] = kerning
        }
        return kerning == PairwiseWidths.changes ? nil : kerning
    }

    private func measurePair(
        _ first: PairwiseWidths.Character, _ second: PairwiseWidths.Character, _ left: UInt16, _ right: UInt16, id: Int, script: hb_script_t?
    ) -> Int32 {
        var both = (left, right)
        let run = withUnsafeBytes(of: &both) {
            runHarfBuzz(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt16.self), count: 2), id: id, script: script)
        }
        guard run.count == 2, run.infos[0].codepoint == first.glyph, run.infos[1].codepoint == second.glyph else { return PairwiseWidths.changes }
        let kerning = run.positions[0].x_advance &+ run.positions[1].x_advance &- first.units &- second.units
        return kerning == PairwiseWidths.unknown || kerning == PairwiseWidths.changes ? PairwiseWidths.changes : kerning
    }
}

extension Slice where Base == UnsafeBufferPointer<UInt16> {
    /// The units as an owned array slice (for the caches that keep their keys).
    var copied: ArraySlice<UInt16> { Array(self)[...] }
}
