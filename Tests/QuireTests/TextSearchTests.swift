import Foundation
@testable import Quire
import XCTest

final class TextSearchTests: XCTestCase {
    private func find(_ query: String, in text: String, forward: Bool = true) -> Range<Int>? {
        let units = Array(text.utf16)
        return TextSearch.first(query, in: units, spineIndex: 0, range: 0..<units.count, forward: forward)?.range
    }

    /// Search folds case and diacritics through ICU (it used Foundation's string search, which
    /// the executable no longer links): matches are the ones Foundation found, in the text's own
    /// offsets, whole characters, for composed and decomposed text alike.
    func testFoldsCaseAndDiacriticsAsFoundationDid() {
        let texts = [
            "Être ou ne pas être, said the needle.", "E\u{301}te\u{301} à la plage", "NAÏVE café Zoë", "Ångström and ångström",
            "İstanbul ıstanbul", "Ποσειδῶν and ποσειδων", "Москва ёлка ЁЛКА", "office ﬁle ﬂow", "x ½ y", "déjà vu, DEJA VU",
        ]
        let queries = ["etre", "ÊTRE", "ete", "été", "a la", "naive", "CAFE", "zoe", "angstrom", "ποσειδων", "елка", "ёлка", "vu", "deja", "e", "é"]
        var compared = 0
        for text in texts {
            for query in queries {
                for forward in [true, false] {
                    var options: NSString.CompareOptions = [.caseInsensitive, .diacriticInsensitive]
                    if !forward { options.insert(.backwards) }
                    let expected = (text as NSString).range(of: query, options: options)
                    let found = find(query, in: text, forward: forward)
                    if expected.location == NSNotFound {
                        XCTAssertNil(found, "\(query) in \(text)")
                    } else {
                        XCTAssertEqual(found, expected.location..<(expected.location + expected.length), "\(query) in \(text), forward \(forward)")
                        compared += 1
                    }
                }
            }
        }
        XCTAssertGreaterThan(compared, 40)
    }

    /// Full case folding: ß is ss and a ligature is its letters; a match covers whole characters.
    func testFullCaseFoldingAndWholeCharacters() {
        XCTAssertEqual(find("STRASSE", in: "die Straße"), 4..<10)
        XCTAssertEqual(find("strasse", in: "STRASSE"), 0..<7)
        XCTAssertEqual(find("file", in: "a ﬁle"), 2..<5)
        XCTAssertNil(find("s", in: "ß"), "part of a folded character is no match")
        XCTAssertEqual(find("ss", in: "ß"), 0..<1)
        XCTAssertNil(find("하", in: "한국"), "a Hangul syllable decomposes to letters: its first two are not it")
        XCTAssertEqual(find("하", in: "한 하다"), 2..<3)
        XCTAssertNil(find("ে", in: "কো"), "nor is a vowel sign part of another (ো is ে and া)")
        XCTAssertEqual(find("ে", in: "কো কে"), 4..<5)
        XCTAssertNil(find("\u{301}", in: "café"), "a query of diacritics alone finds nothing")
        XCTAssertNil(find("zebra", in: "café"))
        XCTAssertEqual(find("𝐀b", in: "x 𝐀B"), 2..<5, "characters outside the BMP")
    }
}
