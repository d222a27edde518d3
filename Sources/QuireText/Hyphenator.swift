import CHyphen
import Glibc
import QuireCore

/// libhyphen with the system's dictionaries (/usr/share/hyphen/hyph_LANG.dic), one per language,
/// loaded once. libhyphen's dictionary is read-only after loading, so lookups are thread-safe.
public final class Hyphenator: @unchecked Sendable {
    public static let dictionaryDirectory = "/usr/share/hyphen"
    /// Words shorter than this are never hyphenated; fragments keep at least these many characters.
    public static let minimumWordLength = 5
    public static let minimumPrefix = 2
    public static let minimumSuffix = 3

    /// Guards the language ids.
    private let lock = Lock()
    /// Words repeat endlessly in a book and libhyphen's lookups are slow: answers are cached once
    /// for all of a book's workers, keyed by the word's units and its language's id. Words of up
    /// to 12 units (nearly all) keep their points as bits (bit i: a break may follow unit i).
    /// The cache is split in shards: every worker asks for nearly every word, and one lock (or
    /// one shared reference count) moved between the cores at each word.
    private struct Cache {
        var short: [WidthKey: UInt16] = [:]
        var long: [TextKey: [Int]] = [:]
    }
    private static let shardCount = 16
    private let caches = Shards(count: Hyphenator.shardCount) { Cache() }
    private var languageIDs: [String: Int] = [:]
    public static let maxCacheEntries = 500_000

    public init() {}

    /// The dictionary file for a BCP 47 tag: exact region first (en-GB → hyph_en_GB), then a default region.
    public static func dictionaryPath(for language: String) -> String? {
        let parts = language.replacing("_", with: "-").split(separator: "-").map(String.init)
        guard let primary = parts.first?.lowercased(), !primary.isEmpty else { return nil }
        var names: [String] = []
        if parts.count > 1 { names.append("hyph_\(primary)_\(parts[1].uppercased()).dic") }
        let defaults = ["en": "US", "de": "DE", "fr": "FR", "es": "ES", "it": "IT", "pt": "PT", "nl": "NL"]
        if let region = defaults[primary] { names.append("hyph_\(primary)_\(region).dic") }
        names.append("hyph_\(primary).dic")
        return names.map { dictionaryDirectory + "/" + $0 }.first { FileSystem.exists($0) }
    }

    /// Loads `language`'s dictionary on a background thread. Loading takes about 5 ms (the
    /// patterns are compiled), which the first workers to hyphenate would otherwise wait for;
    /// started as soon as the book's language is known, it runs while the book is being opened.
    public static func preloadInBackground(_ language: String) {
        HyphenationDictionaries.shared.preloadInBackground(language)
    }

    /// Hyphenation points of a word, as UTF-16 offsets where a break may go (a hyphen is added before it).
    public func points(in word: String, language: String) -> [Int] {
        points(units: Array(word.utf16)[...], language: language)
    }

    /// Hyphenation points of a word given as UTF-16 units (offsets into those units).
    public func points(units: ArraySlice<UInt16>, language: String) -> [Int] {
        points(units: units, languageID: languageID(for: language), language: language)
    }

    /// A small number naming `language` in this hyphenator's cache keys (workers keep it).
    public func languageID(for language: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        if let known = languageIDs[language] { return known }
        languageIDs[language] = languageIDs.count
        return languageIDs.count - 1
    }

    /// `languageID` from `languageID(for: language)`.
    public func points(units: ArraySlice<UInt16>, languageID: Int, language: String) -> [Int] {
        let short = units.withUnsafeBufferPointer { WidthKey(units: $0, tag: languageID) }
        let long = short == nil ? TextKey(units, tag: languageID) : nil
        let shard = short?.slotHash ?? long!.hashValue
        let known: [Int]? = caches.withShard(shard) { cache in
            if let short { return cache.short[short].map { bits in (1..<16).filter { bits & 1 << $0 != 0 } } }
            return cache.long[long!]
        }
        if let known { return known }
        let result = computePoints(units: units, language: language)
        caches.withShard(shard) { cache in
            if cache.short.count + cache.long.count >= Hyphenator.maxCacheEntries / Hyphenator.shardCount {
                cache.short.removeAll(keepingCapacity: true)
                cache.long.removeAll(keepingCapacity: true)
            }
            if let short {
                cache.short[short] = result.reduce(0) { $0 | 1 << UInt16($1) }
            } else {
                cache.long[long!.detached] = result
            }
        }
        return result
    }

    /// libhyphen's answer for a lowercased UTF-8 word: flags per byte (odd = a break may follow).
    private func hyphenFlags(_ lowered: [UInt8], _ dictionary: UnsafeMutablePointer<HyphenDict>) -> [CChar]? {
        var hyphens = [CChar](filling: 0, count: lowered.count + 5)
        var rep: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        var pos: UnsafeMutablePointer<Int32>?
        var cut: UnsafeMutablePointer<Int32>?
        // NUL-terminated: libhyphen looks for the dictionary's NOHYPHEN strings with strstr on the
        // word, and where it finds one past the word's end it writes into `hyphens` out of bounds
        // (the heap corruption long batches crashed on; AddressSanitizer showed the read).
        let word = lowered + [0]
        let result = word.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                hnj_hyphen_hyphenate2(dictionary, $0, Int32(lowered.count), &hyphens, nil, &rep, &pos, &cut)
            }
        }
        if let rep {
            for index in 0..<lowered.count { free(rep[index]) }
            free(rep)
        }
        free(pos)
        free(cut)
        return result == 0 ? hyphens : nil
    }

    private func computePoints(units: ArraySlice<UInt16>, language: String) -> [Int] {
        // ASCII words (most of an English book): bytes, UTF-16 offsets and characters coincide,
        // and no String needs to be made.
        if units.allSatisfy({ $0 < 0x80 && (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || $0 == 0x27) }) {
            return asciiPoints(units.map { UInt8($0) }, language: language)
        }
        return computePoints(in: String(decoding: units, as: UTF16.self), language: language)
    }

    /// Letters and apostrophes, one byte each.
    private func asciiPoints(_ word: [UInt8], language: String) -> [Int] {
        var utf8 = word
        guard utf8.count >= Hyphenator.minimumWordLength, utf8.count < 1000, let dictionary = HyphenationDictionaries.shared.dictionary(for: language) else { return [] }
        for index in utf8.indices where utf8[index] >= 0x41 && utf8[index] <= 0x5A { utf8[index] |= 0x20 }
        guard let hyphens = hyphenFlags(utf8, dictionary) else { return [] }
        var points: [Int] = []
        for count in Hyphenator.minimumPrefix...max(Hyphenator.minimumPrefix, utf8.count - Hyphenator.minimumSuffix)
        where count <= utf8.count - Hyphenator.minimumSuffix && hyphens[count - 1] & 1 == 1 {
            points.append(count)
        }
        return points
    }

    /// Words with letters beyond ASCII.
    private func computePoints(in word: String, language: String) -> [Int] {
        let scalars = Array(word.unicodeScalars)
        guard scalars.count >= Hyphenator.minimumWordLength, scalars.allSatisfy({ $0.properties.isAlphabetic || $0 == "'" || $0 == "’" }),
            let dictionary = HyphenationDictionaries.shared.dictionary(for: language)
        else { return [] }
        // libhyphen works on the dictionary's encoding (UTF-8 for every Debian dictionary) and wants lowercase.
        let lowercased = word.lowercased()
        let lowered = Array(lowercased.utf8)
        guard lowered.count < 1000, let hyphens = hyphenFlags(lowered, dictionary) else { return [] }
        // Map byte positions (hyphen after byte i) to UTF-16 offsets, honouring the minimum fragments.
        var points: [Int] = []
        var byteIndex = 0
        var utf16Offset = 0
        var scalarIndex = 0
        let lowerScalars = Array(lowercased.unicodeScalars)
        guard lowerScalars.count == scalars.count else { return [] }
        for scalar in lowerScalars {
            let byteLength = scalar.utf8.count
            byteIndex += byteLength
            utf16Offset += scalar.utf16.count
            scalarIndex += 1
            if hyphens[byteIndex - 1] & 1 == 1, scalarIndex >= Hyphenator.minimumPrefix,
                scalars.count - scalarIndex >= Hyphenator.minimumSuffix
            {
                points.append(utf16Offset)
            }
        }
        return points
    }
}

/// libhyphen's dictionaries, loaded once per process and kept for its life: they are read-only
/// files, the same for every book, so one can be loaded before any book's layout exists.
private final class HyphenationDictionaries: @unchecked Sendable {
    static let shared = HyphenationDictionaries()
    /// Guards the tables; held only for lookups and stores.
    private let lock = Lock()
    /// Held while a dictionary loads (milliseconds; seconds for German), which must not hold up
    /// words of the languages already loaded.
    private let loadLock = Lock()
    private var dictionaries: [String: UnsafeMutablePointer<HyphenDict>?] = [:]
    private var preloading: Set<String> = []

    func dictionary(for language: String) -> UnsafeMutablePointer<HyphenDict>? {
        let key = language.lowercased()
        func loaded() -> UnsafeMutablePointer<HyphenDict>?? {
            lock.lock()
            defer { lock.unlock() }
            return dictionaries[key]
        }
        if let known = loaded() { return known }
        loadLock.lock()
        defer { loadLock.unlock() }
        if let known = loaded() { return known }
        let dictionary = Hyphenator.dictionaryPath(for: language).flatMap { hnj_hyphen_load($0) }
        lock.lock()
        dictionaries.updateValue(dictionary, forKey: key)
        lock.unlock()
        return dictionary
    }

    func preloadInBackground(_ language: String) {
        guard Hyphenator.dictionaryPath(for: language) != nil else { return }
        lock.lock()
        let isNew = preloading.insert(language.lowercased()).inserted
        lock.unlock()
        guard isNew else { return }
        startThread { [self] in _ = dictionary(for: language) }
    }
}
