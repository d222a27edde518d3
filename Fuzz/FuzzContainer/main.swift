import FuzzSupport
import Glibc
import QuireContainer
import QuireCore

// The container and OPF reader. Input that starts with "PK" is the zip file itself. Any other input
// is cut at NUL bytes into container.xml, the package document, the nav document, the NCX and
// encryption.xml, zipped with a chapter at every href the package document names (so the CRCs
// hold and the XML readers are reached).
// Either way the book is opened as `EPUBContainer.open` opens it, every manifest item read, and
// the book described as `quire info` describes it.

let path = Fuzz.scratchPath("container.epub")

/// The values of `href="…"` in a document, as written.
func hrefs(in bytes: [UInt8]) -> [String] {
    let marker = Array("href=\"".utf8)
    var found: [String] = []
    var at = 0
    while at + marker.count <= bytes.count {
        guard bytes[at..<(at + marker.count)].elementsEqual(marker) else {
            at += 1
            continue
        }
        let start = at + marker.count
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { break }
        found.append(String(decoding: bytes[start..<end], as: UTF8.self))
        at = end + 1
    }
    return found
}

@_cdecl("FuzzContainer_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    if bytes.starts(with: Array("PK".utf8)) {
        Fuzz.write(bytes, to: path)
    } else {
        let parts = Fuzz.parts(bytes, count: 5)
        var entries: [(name: String, data: [UInt8])] = [
            ("mimetype", Array("application/epub+zip".utf8)),
            ("META-INF/container.xml", parts[0]),
            ("OEBPS/content.opf", parts[1]),
            ("OEBPS/nav.xhtml", parts[2]),
            ("OEBPS/toc.ncx", parts[3]),
            ("OEBPS/chapter1.xhtml", Array("<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>One</p></body></html>".utf8)),
            ("OEBPS/fonts/a.otf", Array(repeating: 0x41, count: 1100)),
        ]
        if !parts[4].isEmpty { entries.append(("META-INF/encryption.xml", parts[4])) }
        // Whatever the package document links to is there (a chapter), so a spine still opens.
        for href in hrefs(in: parts[1]).prefix(32) {
            let name = "OEBPS/" + href
            guard !href.isEmpty, !href.hasPrefix("/"), !href.contains(".."), !href.contains(":"), !href.contains("\\"),
                !entries.contains(where: { $0.name == name })
            else { continue }
            entries.append((name, entries[5].data))
        }
        Fuzz.writeZip(entries, to: path)
    }
    defer { unlink(path) }
    guard let container = try? EPUBContainer.open(path: path, limits: Fuzz.limits) else { return 0 }
    let publication = container.publication
    for item in publication.manifest { _ = try? container.read(item) }
    for spineItem in publication.spine {
        _ = publication.isFixedPage(spineItem)
        if let item = publication.item(for: spineItem) { _ = publication.fallbackChain(of: item) }
    }
    _ = PublicationInfo.json(container, file: path).serializedBytes(pretty: true)
    _ = PublicationInfo.text(container)
    return 0
}
