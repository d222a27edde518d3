/// A hash key for a short run of UTF-16 text: the hash is computed once with a tight loop
/// (FNV-1a), which is far cheaper than feeding each unit through `Hasher`.
public struct TextKey: Hashable, Sendable {
    public let units: ArraySlice<UInt16>
    public let tag: Int
    private let fingerprint: UInt64

    /// `tag` distinguishes keys from different contexts (a shaping parameter id, a language).
    public init(_ units: ArraySlice<UInt16>, tag: Int = 0) {
        self.units = units
        self.tag = tag
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bitPattern: Int64(tag))
        units.withUnsafeBufferPointer { buffer in
            for unit in buffer {
                hash = (hash ^ UInt64(unit)) &* 0x0000_0100_0000_01B3
            }
        }
        fingerprint = hash
    }

    /// A copy that owns its units (so a cache never keeps a whole paragraph alive).
    public var detached: TextKey { TextKey(ArraySlice(Array(units)), tag: tag, fingerprint: fingerprint) }

    private init(_ units: ArraySlice<UInt16>, tag: Int, fingerprint: UInt64) {
        self.units = units
        self.tag = tag
        self.fingerprint = fingerprint
    }

    public static func == (lhs: TextKey, rhs: TextKey) -> Bool {
        guard lhs.fingerprint == rhs.fingerprint, lhs.tag == rhs.tag, lhs.units.count == rhs.units.count else { return false }
        // A plain loop: most keys are short words, where calling memcmp costs more than comparing.
        return lhs.units.withUnsafeBufferPointer { left in
            rhs.units.withUnsafeBufferPointer { right in
                for index in 0..<left.count where left[index] != right[index] { return false }
                return true
            }
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

    /// Dictionaries hash through this: the fingerprint is already a good hash, so it is only mixed
    /// with the seed (a murmur finalizer) instead of going through SipHash again.
    public func _rawHashValue(seed: Int) -> Int {
        var mixed = fingerprint ^ UInt64(UInt(bitPattern: seed))
        mixed ^= mixed >> 33
        mixed &*= 0xff51_afd7_ed55_8ccd
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }
}
