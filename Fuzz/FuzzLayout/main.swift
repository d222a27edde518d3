import FuzzSupport
import Glibc
import QuireContainer
import QuireCore
@testable import QuireLayout
import QuireText

// The layout of a tiny page: the input is cut at its first NUL into a chapter (XHTML) and a user
// stylesheet, zipped into a book with a second, fixed chapter, and the fuzzed chapter laid out on a
// 160 × 200 px page, display items and all. The fonts (FreeType faces, shaping caches) are shared
// between runs, as a book's chapters share them.

let path = Fuzz.scratchPath("layout.epub")
let services = TextServices(fonts: try! FontCollection())
let chapter2 = Array(
    "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>Two</title></head><body><p id=\"b\">Two</p></body></html>".utf8)

@_cdecl("FuzzLayout_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let parts = Fuzz.parts(Fuzz.bytes(data, size), count: 2)
    Fuzz.writeBook(chapter1: parts[0], chapter2: chapter2, css: [], to: path)
    defer { unlink(path) }
    guard let container = try? EPUBContainer.open(path: path, limits: Fuzz.limits) else { return 0 }
    var settings = LayoutSettings(profile: PageProfile(name: "fuzz", width: 160, height: 200, dpi: 96))
    settings.userCSS = String(decoding: parts[1], as: UTF8.self)
    var settleLimits = SettleLimits()
    settleLimits.timeBudget = 2
    guard
        let layout = try? BookLayout(
            container: container, settings: settings, services: services, settleLimits: settleLimits,
            measurer: ArchiveImageMeasurer(container: container), clipsToViewport: false)
    else { return 0 }
    _ = layout.layout(jobs: 1, spineIndices: [0])
    return 0
}
