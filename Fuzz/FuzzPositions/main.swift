import FuzzSupport
import Glibc
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import QuirePositions

// The CFI and XPointer parsers and `locate`: the input, as text, is tried as a CFI, an XPointer,
// an element id and a Locator (JSON) against a fixed two-chapter book and its position map; input
// that starts with `{` is also read as a positions.json and queried as `quire locate` does.
// With QUIRE_FUZZ_SEEDS=DIR set, the first run writes the book's map and its pages' CFIs and
// XPointers to DIR (scripts/fuzz.sh makes the seed corpus that way).

let chapter1 = Array(
    """
    <?xml version="1.0" encoding="utf-8"?>
    <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head>
    <body id="top"><h1 id="h1">One</h1><p id="p1">The first paragraph, with <em id="e1">emphasis</em> and more words.</p>
    <div><p>Two</p><p id="p3">Three <span>and <b>bold</b></span> text.</p></div><p>Four, a longer paragraph to take a line or two more.</p></body></html>
    """.utf8)
let chapter2 = Array(
    """
    <?xml version="1.0" encoding="utf-8"?>
    <html xmlns="http://www.w3.org/1999/xhtml"><head><title>Two</title><link rel="stylesheet" href="style.css"/></head>
    <body><section id="b"><h2>Two</h2><p>Alpha</p><p id="x">Beta <a href="chapter1.xhtml#p3">link</a></p><ul><li>i</li><li id="li2">ii</li></ul></section></body></html>
    """.utf8)

struct Fixture {
    let anchors: BookAnchors
    let map: MapIndex
    let spineStep: Int
}

// libFuzzer runs one input at a time, on one thread.
nonisolated(unsafe) let fixture: Fixture = {
    let path = Fuzz.scratchPath("positions.epub")
    Fuzz.writeBook(chapter1: chapter1, chapter2: chapter2, css: Array("p { margin: 0 0 1em }".utf8), to: path)
    defer { unlink(path) }
    let container = try! EPUBContainer.open(path: path)
    var settings = LayoutSettings(profile: PageProfile(name: "fuzz", width: 240, height: 200, dpi: 96))
    settings.hyphenation = false
    let layout = try! BookLayout(container: container, settings: settings)
    let result = layout.layout(jobs: 1, buildItems: false)
    let map = PositionMap(layout: layout, result: result, identity: try! .of(file: path), profileName: "fuzz", withImages: false)
    if let directory = getenv("QUIRE_FUZZ_SEEDS").map({ String(cString: $0) }) {
        Fuzz.write(map.serializedBytes(), to: directory + "/map.json")
        for (index, page) in map.pages.enumerated() {
            let locator = Locate.startLocator(page)
            if let cfi = locator.locations.cfi { Fuzz.write(Array(cfi.utf8), to: directory + "/cfi-\(index)") }
            if let xpointer = locator.locations.xpointer { Fuzz.write(Array(xpointer.utf8), to: directory + "/xpointer-\(index)") }
            Fuzz.write(locator.json.serializedBytes(pretty: false), to: directory + "/locator-\(index)")
        }
    }
    return Fixture(anchors: BookAnchors(container: container), map: MapIndex(map: map), spineStep: container.publication.spineStep)
}()

/// The lookups `quire locate` makes of a map.
func query(_ map: MapIndex, _ anchors: BookAnchors, _ text: String) {
    if let locator = try? Locator(jsonString: text) {
        _ = try? Locate.resolve(locator: locator, map: map) { try anchors.position(spineIndex: $0, id: $1) }
    }
    for page in [0, 1, 2, map.pageCount / 2, map.pageCount, map.pageCount + 1] {
        if let entry = try? map.entry(page: page) {
            _ = Locate.startLocator(entry)
            _ = Locate.endLocator(entry)
        }
        _ = try? map.startPosition(ofPage: page)
        _ = try? map.middlePosition(ofPage: page)
        _ = try? map.page(position: page, convention: .readium)
        _ = try? map.page(position: page, convention: .komga)
        _ = try? map.page(matching: page, in: fixture.map)
        _ = try? fixture.map.page(matching: page, in: map)
    }
    for chapter in map.chapters {
        for offset in [0, chapter.length / 2, chapter.length] { _ = try? map.page(of: Position(spineIndex: chapter.spineIndex, offset: offset)) }
    }
    for fraction in [0, 0.5, 1] {
        _ = try? map.position(totalProgression: fraction)
        _ = try? map.readiumPosition(totalProgression: fraction)
    }
    _ = try? map.page(label: text)
    _ = try? map.page(tocTitle: text)
}

@_cdecl("FuzzPositions_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let anchors = fixture.anchors
    _ = try? anchors.position(cfi: text, spineStep: fixture.spineStep)
    _ = try? anchors.position(xpointer: text)
    _ = try? anchors.position(spineIndex: size % 2, id: text)
    if let path = try? CFI.parse(text) {
        _ = try? CFI.spineIndex(of: path, spineStep: fixture.spineStep, itemrefIDs: [nil, "c2"])
    }
    _ = try? XPointer.parse(text)
    query(fixture.map, anchors, text)
    if bytes.first == UInt8(ascii: "{"), let map = try? PositionMap(bytes: bytes) {
        query(MapIndex(map: map), anchors, text)
    }
    return 0
}
