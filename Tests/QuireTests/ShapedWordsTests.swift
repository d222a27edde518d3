import Foundation
import QuireStyle
@testable import QuireText
import XCTest

final class ShapedWordsTests: XCTestCase {
    /// Painting keeps a short word's glyphs packed in font units and rebuilds them on each use:
    /// the glyphs and advance a worker hands out the second time must be bit for bit the ones a
    /// fresh shaper gives, in horizontal, right-to-left and vertical runs, and a word measured from
    /// its parts (a word with punctuation) must still paint with its own shaped advance.
    func testKeptGlyphsEqualFreshlyShapedOnes() throws {
        let fonts = try FontCollection()
        var runs: [(ShapingParameters, [String])] = []
        let latin = "Call me Ishmael. “Whale,” office—fifty (affluent) Æsop naïve ſt 1/2 3/4 x² AVAST! Ty. o\u{301}".split(separator: " ").map(String.init)
        for face in [fonts.bundledFace(generic: "serif", bold: false, italic: false), fonts.bundledFace(generic: "serif", bold: false, italic: true)] {
            runs.append((ShapingParameters(face: face, size: 12, language: "en"), latin))
            runs.append((ShapingParameters(face: face, size: 16.7, features: [FontFeature("smcp")], language: "en"), latin))
        }
        let arabic = "/usr/share/fonts/truetype/noto/NotoNaskhArabic-Regular.ttf"
        if FileManager.default.fileExists(atPath: arabic) {
            let face = try FontFace(source: .file(path: arabic, index: 0))
            runs.append((ShapingParameters(face: face, size: 14, rightToLeft: true, language: "ar"), ["السلام", "عليكم،", "كتاب"]))
        }
        let cjk = "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc"
        if FileManager.default.fileExists(atPath: cjk) {
            let face = try FontFace(source: .file(path: cjk, index: 0))
            runs.append((ShapingParameters(face: face, size: 14, language: "ja", vertical: true), ["吾輩は猫である。", "「名前」", "ー〜…"]))
        }
        XCTAssertGreaterThanOrEqual(runs.count, 4)
        var compared = 0
        for (parameters, words) in runs {
            let painting = Shaper()
            let id = painting.parameterID(parameters)
            for word in words {
                let units = Array(word.utf16)[...]
                XCTAssertLessThanOrEqual(units.count, TextKey.inlineUnits, word)
                // Measured first (from its parts when it has punctuation), then painted twice.
                _ = painting.measure(units, parameterID: id)
                let first = painting.shape(units, parameterID: id)
                let hitsBefore = painting.hits
                let again = painting.shape(units, parameterID: id)
                XCTAssertEqual(painting.hits, hitsBefore + 1, "\(word): the second shaping comes from the kept glyphs")
                let fresh = Shaper().shape(units, parameters)
                XCTAssertEqual(first, fresh, word)
                XCTAssertEqual(again, fresh, word)
                XCTAssertEqual(again.advance.bitPattern, fresh.advance.bitPattern, word)
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 40)
    }

    /// The book's workers share the kept words: what one worker shaped, another paints without
    /// shaping it again, with the same glyphs.
    func testWorkersShareKeptWords() throws {
        let fonts = try FontCollection()
        let parameters = ShapingParameters(face: fonts.bundledFace(generic: "serif", bold: false, italic: false), size: 12, language: "en")
        let shared = SharedShaping()
        let first = Shaper(shared: shared)
        let second = Shaper(shared: shared)
        let units = Array("whale,".utf16)[...]
        let measured = first.measure(units, parameterID: first.parameterID(parameters))
        let shaped = first.shape(units, parameterID: first.parameterID(parameters))
        let id = second.parameterID(parameters)
        XCTAssertEqual(second.measure(units, parameterID: id).advance, measured.advance)
        XCTAssertEqual(second.shape(units, parameterID: id), shaped)
        XCTAssertEqual(second.hits, 2, "both answered from what the first worker kept")
        XCTAssertEqual(second.misses, 0)
    }

    private func key(_ index: Int) -> WidthKey {
        // Six letters spell the index in base 26: distinct narrow keys.
        var units: [UInt16] = []
        var rest = index
        for _ in 0..<6 {
            units.append(UInt16(0x61 + rest % 26))
            rest /= 26
        }
        return units.withUnsafeBufferPointer { WidthKey(units: $0, tag: 3)! }
    }

    private func glyphs(_ index: Int, count: Int) -> [PackedGlyph] {
        (0..<count).map { PackedGlyph(id: UInt16(truncatingIfNeeded: index + $0), cluster: UInt16($0), advance: Int32(index), xOffset: -1, yOffset: 2) }
    }

    /// Past `maxGlyphs` kept glyphs every word's glyphs are dropped, never its measured width;
    /// words kept after that point at the right glyphs.
    func testDroppingGlyphsKeepsWidths() {
        var words = ShapedWords()
        let perWord = 4
        let wordCount = ShapedWords.maxGlyphs / perWord + 10
        for index in 0..<wordCount {
            words.storeWidth(key(index), advance: Double(index) / 2, missing: index % 7 == 0)
            words.storeShaped(key(index), glyphs(index, count: perWord), units: Int32(index * 3))
        }
        XCTAssertNil(words.shaped(key(0)), "the first words' glyphs were dropped")
        XCTAssertEqual(words.width(key(0))?.advance, 0)
        XCTAssertEqual(words.width(key(7))?.missing, true)
        for index in [wordCount - 1, wordCount - 5] {
            let kept = words.shaped(key(index))
            XCTAssertEqual(kept?.units, Int32(index * 3))
            XCTAssertEqual(kept.map { Array($0.glyphs.map(\.id)) }, glyphs(index, count: perWord).map(\.id))
            XCTAssertEqual(words.width(key(index))?.advance, Double(index) / 2)
        }
        // A word shaped but never measured gives no width; a word measured but not shaped, no glyphs.
        words.storeShaped(key(wordCount), glyphs(1, count: 2), units: 9)
        XCTAssertNil(words.width(key(wordCount)))
        words.storeWidth(key(wordCount + 1), advance: 1, missing: false)
        XCTAssertNil(words.shaped(key(wordCount + 1)))
    }

    /// Past `maxEntries` words the tables start again, glyphs included, so no entry can point at
    /// blocks reused by later words.
    func testTablesStartAgainPastMaxEntries() {
        var words = ShapedWords()
        for index in 0..<ShapedWords.maxEntries {
            words.storeWidth(key(index), advance: Double(index), missing: false)
        }
        words.storeShaped(key(5), glyphs(5, count: 3), units: 1)
        XCTAssertEqual(words.width(key(5))?.advance, 5)
        XCTAssertNotNil(words.shaped(key(5)))
        words.storeWidth(key(ShapedWords.maxEntries), advance: -1, missing: false)
        XCTAssertNil(words.width(key(5)), "the full table started again")
        XCTAssertNil(words.shaped(key(5)))
        XCTAssertEqual(words.width(key(ShapedWords.maxEntries))?.advance, -1)
    }

    /// A new word's glyphs stored into a full table (the usual order: painting keeps a word's
    /// glyphs before its width): the tables start again first, then the glyphs go in, so the entry
    /// points at them and not at blocks thrown away.
    func testGlyphsStoredIntoAFullTableAreKept() {
        var words = ShapedWords()
        for index in 0..<ShapedWords.maxEntries {
            words.storeShaped(key(index), glyphs(index, count: 1), units: 1)
        }
        let newcomer = key(ShapedWords.maxEntries)
        words.storeShaped(newcomer, glyphs(7, count: 3), units: 21)
        let kept = words.shaped(newcomer)
        XCTAssertEqual(kept?.units, 21)
        XCTAssertEqual(kept.map { $0.glyphs.map(\.id) }, [7, 8, 9])
        XCTAssertNil(words.shaped(key(0)), "the words before started again")
        words.storeShaped(key(1), glyphs(1, count: 2), units: 4)
        XCTAssertEqual(words.shaped(newcomer).map { $0.glyphs.map(\.id) }, [7, 8, 9], "later words do not overwrite it")
    }
}
