@testable import QuireText
import XCTest

final class PairwiseWidthTests: XCTestCase {
    /// Map-only layout measures most new words as the sum of their characters' advances and the
    /// kerning of each adjacent pair, skipping HarfBuzz when no lookup of the plan would act on the
    /// word. The width must be the one HarfBuzz gives the whole word, to the bit, for every word:
    /// those the sum takes and those it must leave to HarfBuzz (ligatures, the Libertine chain
    /// contexts on f, i and j, fractions, old-style digits).
    func testPairwiseWidthsEqualShapedWidths() throws {
        let fonts = try FontCollection()
        var faces = [
            fonts.bundledFace(generic: "serif", bold: false, italic: false), fonts.bundledFace(generic: "serif", bold: false, italic: true),
            fonts.bundledFace(generic: "serif", bold: true, italic: false), fonts.bundledFace(generic: "serif", bold: true, italic: true),
            fonts.bundledFace(generic: "sans-serif", bold: false, italic: false), fonts.bundledFace(generic: "monospace", bold: false, italic: false),
        ]
        // System fonts with other lookups: DejaVu (a legacy kern table too), Noto, Liberation.
        for path in [
            "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", "/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf",
            "/usr/share/fonts/truetype/noto/NotoSans-Italic.ttf", "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
        ] where FileManager.default.fileExists(atPath: path) {
            faces.append(try FontFace(source: .file(path: path, index: 0)))
        }
        let text = """
            Call me Ishmael. Some years ago—never mind how long precisely—having little or no money in my purse, and nothing \
            particular to interest me on shore, I thought I would sail about a little and see the watery part of the world. \
            office fifty affluent fjord Theatre Quaker tt fft ffk ſt ſſ 1/2 3/4 12°C 98.6°F !? ?! ... 1851 ½ Æsop façade naïve \
            Œuvre Ðorđe Łódź čeština ĳssel ǅ ‘quoted’ “double” ‹guillemet› †‡•‰′″ AVAST! WAVE Ty. Yo, LT. P.J. V.A. To Tr.
            """
        // Words, plus pairs and triples of characters around the ones the plans' lookups start at.
        var words = text.split(separator: " ").map { Array($0.utf16) }
        let alphabet = Array("aefijlstTQhku1234/.!?°ſ,’AVWYo".utf16)
        for first in alphabet {
            for second in alphabet {
                words.append([first, second])
                words.append([first, second, 0x65])
                words.append([0x6F, first, second])
            }
        }
        var measuredBySum = 0
        var measured = 0
        for face in faces {
            for size in [12.0, 16.7] {
                let pairwise = Shaper(keepsGlyphs: false)
                let reference = Shaper()
                let id = pairwise.parameterID(ShapingParameters(face: face, size: size, language: "en"))
                let referenceID = reference.parameterID(ShapingParameters(face: face, size: size, language: "en"))
                for word in words {
                    let before = pairwise.pairwiseWords
                    let width = pairwise.measure(word[...], parameterID: id).advance
                    XCTAssertEqual(width, reference.shape(word[...], parameterID: referenceID).advance, "\(String(decoding: word, as: UTF16.self)) in \(face.key)")
                    measuredBySum += pairwise.pairwiseWords - before
                }
                measured += pairwise.misses
            }
        }
        // The sum takes most words (else this test would check nothing) but not all of them.
        XCTAssertGreaterThan(measuredBySum, measured / 2)
        XCTAssertLessThan(measuredBySum, measured)
    }

    /// A book's font may carry garbled GSUB and GPOS tables. HarfBuzz shapes with what its
    /// sanitizer keeps; the sum reads the raw bytes. Whatever the damage, the widths stay
    /// HarfBuzz's and nothing reads out of bounds: 120 copies of Linux Libertine, each with 40
    /// random bytes of its layout tables overwritten.
    func testGarbledLayoutTablesKeepWidthsExact() throws {
        let original = [UInt8](try Data(contentsOf: TestSupport.packageRoot.appendingPathComponent("Fonts/LinLibertine_R.otf")))
        func u16(_ at: Int) -> Int { Int(original[at]) << 8 | Int(original[at + 1]) }
        func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }
        var layout: [Range<Int>] = []
        for table in 0..<u16(4) {
            let record = 12 + 16 * table
            let tag = String(decoding: original[record..<(record + 4)], as: UTF8.self)
            if tag == "GSUB" || tag == "GPOS" { layout.append(u32(record + 8)..<(u32(record + 8) + u32(record + 12))) }
        }
        XCTAssertEqual(layout.count, 2)
        let words = "office fifty Theatre whale, “Call me” 1/2 12°C ...!? WAVE AVAST Ty. ſt tt fft naïve façade"
            .split(separator: " ").map { Array($0.utf16) }
        var random = SplitMix64(seed: 23)
        var summed = 0
        for copy in 0..<120 {
            var bytes = original
            for _ in 0..<40 {
                let table = layout[Int(random.next() % 2)]
                bytes[table.lowerBound + Int(random.next() % UInt64(table.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            let face = try FontFace(source: .memory(name: "garbled-\(copy).otf", data: bytes, index: 0))
            let pairwise = Shaper(keepsGlyphs: false)
            let reference = Shaper()
            let id = pairwise.parameterID(ShapingParameters(face: face, size: 12))
            let referenceID = reference.parameterID(ShapingParameters(face: face, size: 12))
            for word in words {
                XCTAssertEqual(
                    pairwise.measure(word[...], parameterID: id).advance, reference.shape(word[...], parameterID: referenceID).advance,
                    "\(String(decoding: word, as: UTF16.self)) in copy \(copy)")
            }
            summed += pairwise.pairwiseWords
        }
        XCTAssertGreaterThan(summed, 120 * 5)
    }

    /// Truncated or garbled layout tables make the check say "it would act" (so HarfBuzz measures
    /// the word), never read out of bounds.
    func testMalformedTablesAreReadSafely() throws {
        let bytes: [UInt8] = [0, 1, 0, 0, 0, 10, 0, 12, 0, 200, 0xFF, 0xFF]
        try bytes.withUnsafeBufferPointer { buffer in
            let table = FontTable(bytes: buffer.baseAddress, count: buffer.count)
            XCTAssertEqual(try table.u16(0), 1)
            XCTAssertThrowsError(try table.u16(11))
            XCTAssertThrowsError(try table.u16(-1))
            XCTAssertThrowsError(try table.coverageIndex(8, 3))
            XCTAssertNil(try table.coverageIndex(nil, 3))
            XCTAssertEqual(try table.glyphClass(nil, 3), 0)
        }
        // An unsorted coverage (f = 73 before a = 68): HarfBuzz's binary search looks at entry 0
        // first and finds f there; the search must too, or a ligature on f goes unseen.
        let unsorted: [UInt8] = [0, 1, 0, 2, 0, 73, 0, 68]
        try unsorted.withUnsafeBufferPointer { buffer in
            XCTAssertEqual(try FontTable(bytes: buffer.baseAddress, count: buffer.count).coverageIndex(0, 73), 0)
        }
        // A class table that runs past the end: HarfBuzz drops it (every glyph class 0), so
        // reading the entries in range would disagree; it is malformed.
        let truncated: [UInt8] = [0, 1, 0, 10, 0, 5, 0, 1, 0, 2]
        try truncated.withUnsafeBufferPointer { buffer in
            XCTAssertThrowsError(try FontTable(bytes: buffer.baseAddress, count: buffer.count).glyphClass(0, 10))
        }
    }
}
