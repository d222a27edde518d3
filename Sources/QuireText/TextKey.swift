/// A hash key for a short run of UTF-16 text. Words of up to `inlineUnits` units (nearly every word
/// of a book) are packed into the key itself, so a cache lookup compares keys without following a
/// pointer to the text or touching reference counts; longer runs keep a slice. The hash is
/// computed once with a tight loop (FNV-1a), far cheaper than feeding each unit through `Hasher`.
public struct TextKey: Hashable, Sendable {
    public static let inlineUnits = 12
    private(set) var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
    /// The unit count in the low 16 bits, the tag above it.
    let countAndTag: UInt64
    let fingerprint: UInt64
    /// The text of a run longer than `inlineUnits`; nil for short ones.
    private var long: ArraySlice<UInt16>?

    /// `tag` distinguishes keys from different contexts (a shaping parameter id, a language).
    public init(_ units: ArraySlice<UInt16>, tag: Int = 0) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bitPattern: Int64(tag))
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let count = units.count
        units.withUnsafeBufferPointer { buffer in
            for (index, unit) in buffer.enumerated() {
                hash = (hash ^ UInt64(unit)) &* 0x0000_0100_0000_01B3
                guard index < Self.inlineUnits else { continue }
                let shifted = UInt64(unit) << UInt64((index & 3) * 16)
                switch index >> 2 {
                case 0: words.0 |= shifted
                case 1: words.1 |= shifted
                default: words.2 |= shifted
                }
            }
        }
        fingerprint = hash
        countAndTag = UInt64(truncatingIfNeeded: min(count, 0xFFFF)) | UInt64(truncatingIfNeeded: tag) << 16
        if count > Self.inlineUnits {
            long = units
        } else {
            packed = words
        }
    }

    /// The whole text is packed into the key (it is at most `inlineUnits` long).
    var isInline: Bool { long == nil }

    /// A copy that owns its units (so a cache never keeps a whole paragraph alive).
    public var detached: TextKey {
        guard let long else { return self }
        var copy = self
        copy.long = ArraySlice(Array(long))
        return copy
    }

    public static func == (lhs: TextKey, rhs: TextKey) -> Bool {
        guard lhs.fingerprint == rhs.fingerprint, lhs.countAndTag == rhs.countAndTag, lhs.packed.0 == rhs.packed.0,
            lhs.packed.1 == rhs.packed.1, lhs.packed.2 == rhs.packed.2
        else { return false }
        guard let left = lhs.long, let right = rhs.long else { return lhs.long == nil && rhs.long == nil }
        return left.elementsEqual(right)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

    /// Dictionaries hash through this: the fingerprint is already a good hash, so it is only mixed
    /// with the seed (a murmur finalizer) instead of going through SipHash again.
    public func _rawHashValue(seed: Int) -> Int { PackedKey.mix(fingerprint, seed: seed) }
}

/// A dictionary key made of one 64-bit value (small ids packed together): it hashes with one
/// multiply-shift mix instead of SipHash, which matters on lookups made for every word.
public struct PackedKey: Hashable, Sendable {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    /// Packs up to three small non-negative ids (high: 24 bits, middle: 24 bits, low: 16 bits).
    public init(_ high: Int, _ middle: Int, _ low: Int) {
        value = UInt64(truncatingIfNeeded: high) << 40 | (UInt64(truncatingIfNeeded: middle) & 0xFF_FFFF) << 16 | (UInt64(truncatingIfNeeded: low) & 0xFFFF)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(value) }

    public func _rawHashValue(seed: Int) -> Int { Self.mix(value, seed: seed) }

    /// A murmur3 finalizer over the value and the dictionary's seed.
    @inline(__always)
    static func mix(_ value: UInt64, seed: Int) -> Int {
        var mixed = value ^ UInt64(UInt(bitPattern: seed))
        mixed ^= mixed >> 33
        mixed &*= 0xff51_afd7_ed55_8ccd
        mixed ^= mixed >> 33
        mixed &*= 0xc4ce_b9fe_1a85_ec53
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }
}
