/// A counting Bloom filter of the tags, ids and classes of the element being styled's ancestors
/// (the technique browsers call the selector filter). A rule whose selector needs an ancestor with
/// a name the filter has never seen cannot match, so most candidate rules with descendant or
/// child combinators are turned down without walking the tree. The filter only ever says "maybe"
/// or "no": when it says maybe, the selector is matched in full, so results never depend on it.
///
/// Names are hashed as bytes, but the matcher compares Swift strings, which are equal when
/// canonically equivalent (U+212A KELVIN SIGN equals "K"). Only ASCII names are hashed: a selector
/// name that is not ASCII is no requirement, and below an ancestor with a name that is not ASCII
/// the filter answers "maybe" to everything.
struct AncestorFilter {
    private static let bits = 12
    private static let mask = UInt32(1 << bits - 1)
    private var counters = [UInt32](repeating: 0, count: 1 << bits)
    /// The elements pushed so far (outermost first), with how many keys each added to `keys`;
    /// an opaque one (a name that is not ASCII) added none.
    private var elements: [(element: Int32, keyCount: Int, opaque: Bool)] = []
    private var keys: [UInt32] = []
    private var opaqueElements = 0

    static func isASCII(_ name: String) -> Bool {
        name.utf8.allSatisfy { $0 < 0x80 }
    }

    enum Kind: UInt32 {
        case tag = 0x9E37_79B9
        case id = 0x85EB_CA6B
        case className = 0xC2B2_AE35
        case attribute = 0x27D4_EB2F
    }

    /// FNV-1a over the UTF-8 bytes, seeded by kind so that a tag and a class of one name differ.
    static func key(_ name: String, _ kind: Kind) -> UInt32 {
        var hash: UInt32 = 2_166_136_261 ^ kind.rawValue
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// An attribute's value, or one word of it, under the attribute's name without any prefix.
    static func attributeKey(name: String, value: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261 ^ Kind.attribute.rawValue
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        hash ^= 0x1F
        hash = hash &* 16_777_619
        for byte in value {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// The keys a selector requires of the element's ancestors: the tag, ids, classes and
    /// `[name="value"]`/`[name~="word"]` tests of every compound on the left of a child or
    /// descendant combinator. (A compound reached through such a combinator is an ancestor of the
    /// element, even after sibling combinators: siblings share their ancestors.) Tags are
    /// lowercased, as the element side is. `attributeNames` collects the attribute names used,
    /// so that only those attributes of each element are hashed.
    static func requiredKeys(_ selector: ComplexSelector, attributeNames: inout Set<String>) -> [UInt32] {
        var result: [UInt32] = []
        for (index, combinator) in selector.combinators.enumerated() where combinator == .child || combinator == .descendant {
            let compound = selector.compounds[index + 1]
            if let tag = compound.tag, isASCII(tag) { result.append(key(tag, .tag)) }
            for id in compound.ids where isASCII(id) { result.append(key(id, .id)) }
            for name in compound.classes where isASCII(name) { result.append(key(name, .className)) }
            for attribute in compound.attributes
            where (attribute.op == .equals || attribute.op == .includes) && !attribute.caseInsensitive
                && !attribute.name.contains(":") && !attribute.value.isEmpty && isASCII(attribute.name) && isASCII(attribute.value)
            {
                result.append(attributeKey(name: attribute.name, value: attribute.value.utf8))
                attributeNames.insert(attribute.name)
            }
        }
        return result
    }

    /// The keys of an element's attribute for `requiredKeys`' tests: its whole value and each of
    /// its whitespace-separated words, under its lowercased name without a prefix (`epub:type`
    /// parsed as HTML keeps its prefix; a selector's `epub|type` still matches it).
    static func attributeKeys(name: String, value: String, into keys: inout [UInt32]) -> Bool {
        guard isASCII(name), isASCII(value) else { return false }
        var value = value
        value.withUTF8 { bytes in
            keys.append(attributeKey(name: name, value: bytes))
            var start = 0
            for index in 0...bytes.count {
                let separator = index == bytes.count || [9, 10, 12, 13, 32].contains(bytes[index])
                guard separator else { continue }
                if index > start && !(start == 0 && index == bytes.count) {
                    keys.append(attributeKey(name: name, value: UnsafeBufferPointer(rebasing: bytes[start..<index])))
                }
                start = index + 1
            }
        }
        return true
    }

    /// An attribute name as `requiredKeys` records it: ASCII-lowercased, after any prefix.
    static func baseName(_ name: String) -> String {
        // Cut by bytes: the colon is ASCII, and Character search breaks graphemes at every step.
        let bytes = name.utf8
        let local = bytes.lastIndex(of: UInt8(ascii: ":")).map { String(name[bytes.index(after: $0)...]) } ?? name
        return SelectorMatcher.lowerASCII(local)
    }

    @inline(__always)
    private static func slots(_ key: UInt32) -> (Int, Int) {
        (Int(key & mask), Int((key >> UInt32(bits)) & mask))
    }

    /// Whether every key may be among the ancestors (false: certainly not).
    @inline(__always)
    func mayContain(all required: UnsafeBufferPointer<UInt32>) -> Bool {
        if opaqueElements > 0 { return true }
        for key in required {
            let (a, b) = Self.slots(key)
            if counters[a] == 0 || counters[b] == 0 { return false }
        }
        return true
    }

    /// Makes the filter hold exactly the ancestors of an element whose parent is `parent` (-1 for
    /// the root), given that elements are visited in document order.
    mutating func moveTo(parent: Int32) {
        while let last = elements.last, last.element != parent {
            elements.removeLast()
            if last.opaque { opaqueElements -= 1 }
            for _ in 0..<last.keyCount {
                let (a, b) = Self.slots(keys.removeLast())
                counters[a] -= 1
                counters[b] -= 1
            }
        }
    }

    /// Adds an element (whose parent is the innermost element pushed) to the ancestors.
    /// `attributeKeys` from `attributeKeys(name:value:into:)`, nil when a value is not ASCII.
    mutating func push(_ element: Int32, tag: String, id: String?, classes: [String], attributeKeys: [UInt32]?) {
        guard let attributeKeys, Self.isASCII(tag), id.map(Self.isASCII) ?? true, classes.allSatisfy(Self.isASCII) else {
            elements.append((element, 0, true))
            opaqueElements += 1
            return
        }
        var count = 0
        func add(_ key: UInt32) {
            let (a, b) = Self.slots(key)
            counters[a] += 1
            counters[b] += 1
            keys.append(key)
            count += 1
        }
        add(Self.key(tag, .tag))
        if let id { add(Self.key(id, .id)) }
        for name in classes { add(Self.key(name, .className)) }
        for key in attributeKeys { add(key) }
        elements.append((element, count, false))
    }
}
