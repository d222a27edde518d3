import CHarfBuzz
import Glibc
import Synchronization
import QuireStyle
import QuireCore

/// One positioned glyph. Advances and offsets are in px at the run's size; `cluster` is the UTF-16
/// offset of the glyph's first character within the shaped text.
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

    public init(face: FontFace, size: Double, features: [FontFeature] = [], rightToLeft: Bool = false, language: String? = nil) {
        self.face = face
        self.size = size
        self.features = features
        self.rightToLeft = rightToLeft
        self.language = language
    }

    public static func == (lhs: ShapingParameters, rhs: ShapingParameters) -> Bool {
        lhs.face === rhs.face && lhs.size == rhs.size && lhs.features == rhs.features && lhs.rightToLeft == rhs.rightToLeft
            && lhs.language == rhs.language
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(face))
        hasher.combine(size)
        hasher.combine(features)
        hasher.combine(rightToLeft)
        hasher.combine(language)
    }
}

/// What all layout workers of one book share about shaping: parameter ids (so a word's key means
/// the same in every worker) and the widths of words measured so far, so two workers do not shape
/// the same words twice. A worker asks here only when its own table misses; a width is a pure
/// function of its key, so what is found here never depends on which worker measured it first.
public final class SharedShaping: Sendable {
    private let registry = Mutex<(ids: [ShapingParameters: Int], list: [ShapingParameters])>(([:], []))
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
    private var cache: [TextKey: ShapedText] = [:]
    /// Render mode's exact table of this worker's word widths (map-only layout uses the shared one).
    private var widths = WidthTable()
    private var recent = RecentWidths()
    private let buffer: OpaquePointer
    /// What HarfBuzz needs per parameter id, made once: language, features and, per script, the
    /// shape plan (so a word is shaped without HarfBuzz finding its plan in the face's cache, or
    /// the language and feature tags being parsed again).
    private var harfBuzzSettings: [Int: HarfBuzzSettings] = [:]
    private var plans: [PackedKey: OpaquePointer] = [:]

    /// Plain values only: reading them retains nothing, where copying the parameters out retains
    /// their face, which every worker shares (its reference count then moves between cores).
    private struct HarfBuzzSettings {
        var language: hb_language_t?
        var features: [hb_feature_t]
        var rightToLeft: Bool
        var face: OpaquePointer
        var font: OpaquePointer
        /// From font units to points.
        var scale: Double
    }
    public private(set) var hits = 0
    public private(set) var misses = 0
    /// The caches are dropped when they grow past this many entries (bounded memory on huge books).
    public static let maxCacheEntries = 300_000

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
    /// table with its glyph cache (painting); longer runs go through the shaping cache.
    public func measure(_ text: ArraySlice<UInt16>, parameterID: Int) -> (advance: Double, hasMissingGlyphs: Bool) {
        if text.isEmpty { return (0, false) }
        let key = TextKey(text, tag: parameterID)
        guard key.isInline else {
            let shaped = shape(text, parameterID: parameterID)
            return (shaped.advance, shaped.hasMissingGlyphs)
        }
        let widthKey = WidthKey(key)
        if let known = recent.find(widthKey) {
            hits += 1
            return (known.advance, known.missing)
        }
        let measured: (advance: Double, missing: Bool)
        if keepsGlyphs {
            // Painting shapes the same words again: keep their glyphs.
            if let known = widths.find(widthKey) {
                hits += 1
                measured = known
            } else {
                misses += 1
                let shaped = cachedShape(text, key: key, parameterID: parameterID).shaped
                measured = (shaped.advance, shaped.hasMissingGlyphs)
                widths.insert(widthKey, advance: measured.advance, missing: measured.missing)
            }
        } else if let known = shared.width(widthKey) {
            // Map-only layout keeps no glyphs; every word's width is in the book's shared table.
            hits += 1
            measured = known
        } else {
            misses += 1
            measured = measureUncached(text, id: parameterID)
            shared.store(widthKey, advance: measured.advance, missing: measured.missing)
        }
        recent.store(widthKey, advance: measured.advance, missing: measured.missing)
        return (measured.advance, measured.missing)
    }

    public func shape(_ text: ArraySlice<UInt16>, parameterID: Int) -> ShapedText {
        if text.isEmpty { return .empty }
        let result = cachedShape(text, key: TextKey(text, tag: parameterID), parameterID: parameterID)
        if result.wasCached { hits += 1 } else { misses += 1 }
        return result.shaped
    }

    /// The shaped text from the cache, or shaped and cached (not counted: callers count).
    private func cachedShape(_ text: ArraySlice<UInt16>, key: TextKey, parameterID: Int) -> (shaped: ShapedText, wasCached: Bool) {
        if let cached = cache[key] { return (cached, true) }
        let shaped = shapeUncached(text, id: parameterID)
        if cache.count >= Shaper.maxCacheEntries { cache.removeAll(keepingCapacity: true) }
        // Keys are copied so the cache never keeps a whole paragraph's text alive.
        cache[key.detached] = shaped
        return (shaped, false)
    }

    /// Runs HarfBuzz over the text into the shaper's buffer; its glyphs, their positions and the
    /// scale from font units to points.
    private func runHarfBuzz(_ text: ArraySlice<UInt16>, id: Int) -> (
        count: Int, infos: UnsafeMutablePointer<hb_glyph_info_t>, positions: UnsafeMutablePointer<hb_glyph_position_t>, scale: Double
    ) {
        hb_buffer_clear_contents(buffer)
        text.withUnsafeBufferPointer { units in
            hb_buffer_add_utf16(buffer, units.baseAddress, Int32(units.count), 0, Int32(units.count))
        }
        let settings: HarfBuzzSettings
        if let known = harfBuzzSettings[id] {
            settings = known
        } else {
            // The face stays alive with the book's shared parameters, so its pointers may be kept.
            let parameters = parameters(id)
            settings = HarfBuzzSettings(
                language: parameters.language.map { hb_language_from_string($0, -1) },
                features: parameters.features.map { feature in
                    hb_feature_t(tag: hb_tag_from_string(feature.tag, -1), value: feature.value, start: 0, end: UInt32.max)
                },
                rightToLeft: parameters.rightToLeft, face: parameters.face.hbFace, font: parameters.face.hbFont,
                scale: parameters.size / parameters.face.unitsPerEm)
            harfBuzzSettings[id] = settings
        }
        hb_buffer_set_direction(buffer, settings.rightToLeft ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
        if let language = settings.language { hb_buffer_set_language(buffer, language) }
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

    private func shapeUncached(_ text: ArraySlice<UInt16>, id: Int) -> ShapedText {
        let (count, infos, positions, scale) = runHarfBuzz(text, id: id)
        var glyphs: [ShapedGlyph] = []
        glyphs.reserveCapacity(count)
        var advance = 0.0
        for index in 0..<count {
            let x = Double(positions[index].x_advance) * scale
            advance += x
            glyphs.append(
                ShapedGlyph(
                    id: infos[index].codepoint, cluster: infos[index].cluster, advance: Float(x),
                    xOffset: Float(Double(positions[index].x_offset) * scale),
                    yOffset: Float(Double(positions[index].y_offset) * scale)))
        }
        return ShapedText(glyphs: glyphs, advance: advance)
    }

    /// The advance alone (summed as `shapeUncached` sums it) and whether a glyph is missing: map-only
    /// layout keeps no glyphs, so none are built.
    private func measureUncached(_ text: ArraySlice<UInt16>, id: Int) -> (advance: Double, missing: Bool) {
        let (count, infos, positions, scale) = runHarfBuzz(text, id: id)
        var advance = 0.0
        var missing = false
        for index in 0..<count {
            advance += Double(positions[index].x_advance) * scale
            missing = missing || infos[index].codepoint == 0
        }
        return (advance, missing)
    }
}
