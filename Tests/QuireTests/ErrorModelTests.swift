import Quire
import QuireCore
import QuireXML
import QuireContainer
import QuireDocument
import QuireStyle
import QuireText
import QuireImages
import QuirePreparation
import QuireLayout
import QuirePaint
import QuirePDF
import QuirePositions
import Testing

/// The error model's exit codes are a documented interface (README, `quire --help`).
@Suite struct ErrorModelTests {
    @Test(arguments: [
        (QuireError.usage("x"), Int32(64)),
        (.notAnEPUB("x"), 65), (.corruptArchive("x"), 65), (.missingContainer, 65),
        (.invalidPackageDocument("x"), 65), (.invalidXML(document: "d", reason: "r"), 65),
        (.invalidImage("x"), 65),
        (.missingResource(href: "h", context: "c"), 65), (.unsafeEntryName("../x"), 65),
        (.limitExceeded(limit: "l", detail: "d"), 65), (.invalidPDF("x"), 65),
        (.notFound(path: "p"), 66), (.cannotOpen(path: "p", reason: "r"), 66),
        (.drmProtected("x"), 69), (.unsupported("x"), 69), (.passwordRequired("x"), 69),
        (.cannotCreateOutput(path: "p", reason: "r"), 73), (.io("x"), 74), (.unresolvable("x"), 3),
    ])
    func exitCodes(error: QuireError, code: Int32) {
        #expect(error.exitCode == code)
        #expect(!error.description.contains("\n"), "messages are one line")
    }

    @Test func limitsDefaults() {
        let limits = Limits.standard
        #expect(limits.maxCompressionRatio == Limits.defaultMaxCompressionRatio)
        #expect(limits.maxEntryUncompressedSize <= limits.maxTotalUncompressedSize)
    }

    @Test func whitespaceHelpers() {
        #expect("  a \n b\t".collapsingWhitespace() == "a b")
        #expect("\n x y \r".trimmingWhitespace() == "x y")
        #expect("nav  toc\tcover".whitespaceTokens() == ["nav", "toc", "cover"])
    }

    /// The UTF-8 → UTF-16 transcoding gives the standard library's units and counts.
    @Test func utf16UnitsMatchTheStandardLibrary() {
        let samples = ["", "plain ASCII", "Café naïve — “quotes” ½", "日本語のテキスト", "flag 🇫🇷 and 👩‍👩‍👧 family 𝄞", "\u{10FFFF}\u{FFFF}\u{80}\u{7FF}\u{800}"]
        for text in samples {
            #expect(text.utf16Units == Array(text.utf16), "\(text)")
            #expect(text.utf16Length == text.utf16.count, "\(text)")
            var units: [UInt16] = [0x41]
            text.appendUTF16(to: &units)
            #expect(units == [0x41] + Array(text.utf16))
        }
    }

    /// The direct UTF-16 → UTF-8 collapse gives exactly what decoding and then collapsing gives,
    /// unpaired surrogates (U+FFFD) and every kind of space included.
    @Test func collapsingWhitespaceFromUTF16MatchesDecoding() {
        let samples: [[UInt16]] = [
            Array("  a \n b\t".utf16), Array("\u{A0}Café\u{2003}naïve\u{3000}日本語 ".utf16),
            Array("flag 🇫🇷 and 👩‍👩‍👧 family".utf16), Array("x\u{85}y\u{2028}z\u{202F}w\u{1680}v".utf16),
            [0x61, 0xD800, 0x62], [0xDC00, 0x20, 0x63], [0x64, 0xD83D], [0xD83D, 0xD83D, 0xDE00], [0x20, 0x09, 0x0B, 0x0C], [],
        ]
        for units in samples {
            let expected = String(decoding: units, as: UTF16.self).collapsingWhitespace()
            #expect(String.collapsingWhitespace(utf16: units) == expected, "\(units)")
            #expect(String.collapsingWhitespace(utf16: units[...]) == expected)
        }
    }
}
