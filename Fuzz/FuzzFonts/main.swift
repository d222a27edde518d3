import FuzzSupport
import QuireCore
@testable import QuireText

// Font files, as a book may carry them: the face as Quire loads it, and map-only layout's word
// widths (the pairwise sum, which reads the GSUB and GPOS tables raw through PlanLookups, and
// words composed around punctuation) against HarfBuzz shaping the same words whole. A width that
// differs is a finding: map-only layout and painting would break lines differently.

private let words: [[UInt16]] = [
    "office", "fifty", "Theatre", "whale,", "“Call", "me.”", "1/2", "12°C", "...!?", "AVAST", "WAVE", "ſt", "naïve", "Ty.",
    "tt", "ffi", "Qu", "façade", "(p.", "—never",
].map { Array($0.utf16) }

@_cdecl("FuzzFonts_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let face = try? FontFace(source: .memory(name: "fuzz.otf", data: Fuzz.bytes(data, size), index: 0)) else { return 0 }
    let summing = Shaper(keepsGlyphs: false)
    let shaping = Shaper()
    let summingID = summing.parameterID(ShapingParameters(face: face, size: 12))
    let shapingID = shaping.parameterID(ShapingParameters(face: face, size: 12))
    for word in words {
        let measured = summing.measure(word[...], parameterID: summingID).advance
        let shaped = shaping.shape(word[...], parameterID: shapingID).advance
        if measured != shaped {
            fatalError("map-only width \(measured) is not HarfBuzz's \(shaped) for \(String(decoding: word, as: UTF16.self))")
        }
    }
    return 0
}
