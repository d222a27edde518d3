@testable import QuireText
import XCTest

final class FontFallbackTests: XCTestCase {
    /// A fallback is chosen from the fonts that have the character, sorted alone for a query
    /// substituted once without the character; the list (and so the face) must be what FcFontSort
    /// gives for the query with the character, scoring every font of the system. Characters
    /// from Latin to emoji, in the three generic families, with and without a language, upright,
    /// bold and italic.
    func testFallbackOrderIsFcFontSortsOrder() throws {
        let fonts = try FontCollection()
        let ranges: [ClosedRange<UInt32>] = [
            0x00A0...0x02FF, 0x0370...0x052F, 0x0590...0x06FF, 0x0900...0x097F, 0x0E00...0x0E7F, 0x2000...0x2BFF,
            0x3000...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF00...0xFFEF, 0x1F300...0x1F5FF,
        ]
        var requests: [(String, FontRequest)] = []
        for (generic, family) in [("serif", "serif"), ("sans-serif", "sans-serif"), ("monospace", "monospace")] {
            for language in [nil, "en", "zh-Hant", "ja", "ar", "ko"] as [String?] {
                requests.append((generic, FontRequest(families: [family], bold: false, italic: false, language: language)))
            }
        }
        requests.append(("serif", FontRequest(families: ["serif"], bold: true, italic: false, language: "en")))
        requests.append(("serif", FontRequest(families: ["serif"], bold: false, italic: true, language: "ja")))
        var compared = 0
        var covered = 0
        for (number, (generic, request)) in requests.enumerated() {
            for range in ranges {
                // A different sample of each range for each request (every 97th character, offset).
                var value = range.lowerBound + UInt32(number * 7) % 97
                while value <= range.upperBound {
                    defer { value += 97 }
                    guard let scalar = Unicode.Scalar(value) else { continue }
                    let sorted = fonts.fallbackFiles(for: scalar, generic: generic, request: request, fromAllFonts: false)
                    let reference = fonts.fallbackFiles(for: scalar, generic: generic, request: request, fromAllFonts: true)
                    XCTAssertEqual(sorted, reference, "U+\(String(value, radix: 16)) \(generic) \(request.language ?? "-")")
                    if sorted != reference { return }
                    compared += 1
                    if !sorted.isEmpty { covered += 1 }
                }
            }
        }
        XCTAssertGreaterThan(compared, 5_000)
        XCTAssertGreaterThan(covered, compared / 2, "most sampled characters have a font on this machine")
    }
}
