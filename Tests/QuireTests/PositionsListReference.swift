// An independent reference implementation of two other apps' EPUB positions lists,
// written from those projects' own sources (not from Quire's code), so tests can
// compare Quire's position map against them:
//
//  * Readium swift-toolkit >= 3.4 (read at f7d10d2b, 3.8.0+):
//      Sources/Streamer/Parser/EPUB/EPUBContainerParser.swift   (container.xml -> OPF)
//      Sources/Streamer/Parser/EPUB/OPFParser.swift              (manifest, spine, fallback swap, Divina)
//      Sources/Streamer/Parser/EPUB/OPFMeta.swift                (meta list, prefixes, vocabularies)
//      Sources/Streamer/Parser/EPUB/EPUBMetadataParser.swift     (layout(): last rendition:layout, display options)
//      Sources/Streamer/Parser/EPUB/Services/EPUBPositionsService.swift
//      Sources/Shared/Toolkit/ZIP/Minizip/MinizipContainer.swift (entry keys, entryLength)
//      Sources/Shared/Toolkit/URL/{RelativeURL,URLProtocol,URLExtensions}.swift, Publication/Link.swift
//      Sources/Shared/Toolkit/Format/MediaType.swift
//    plus swift-foundation's URL percent-encoding sets (URL_Validation.swift, URLEncoder.swift).
//  * Komga (read at cba53ed3):
//      infrastructure/mediacontainer/epub/{Epub,Opf,EpubExtractor}.kt, domain/service/BookAnalyzer.kt,
//      infrastructure/mediacontainer/ContentDetector.kt, with jsoup 1.23.1 selector/text() semantics.
//
// Everything (ZIP directory, raw DEFLATE, a lenient XML tree builder) is implemented here
// with Foundation only.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

struct ReferencePosition: Equatable {
    /// Readium: `link.url().string`, the ZIP path percent-encoded with the RFC 3986 path set
    /// (e.g. `OPS/xhtml/%E4%B8%80.xhtml`). Komga: the ZIP entry name, not encoded.
    var href: String
    var mediaType: String
    var position: Int
    var progression: Double
    var totalProgression: Double
}

struct ReferencePositionsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum ReferencePositions {
    /// Readium swift-toolkit (≥3.4) EPUBPositionsService for the EPUB at `path`.
    static func readium(epub path: String) throws -> [ReferencePosition] {
        try readiumPositions(zip: ReferenceZip(path: path))
    }

    /// Komga EpubExtractor.computePositions (with BookAnalyzer's fixed-layout / Divina decision and missing-file removal).
    static func komga(epub path: String) throws -> [ReferencePosition] {
        try komgaPositions(zip: ReferenceZip(path: path))
    }
}

// MARK: - Readium

extension ReferencePositions {
    fileprivate static let nsOPF = "http://www.idpf.org/2007/opf"
    fileprivate static let nsDC = "http://purl.org/dc/elements/1.1/"
    fileprivate static let nsCN = "urn:oasis:names:tc:opendocument:xmlns:container"
    fileprivate static let vocabRendition = "http://www.idpf.org/vocab/rendition/#"
    fileprivate static let vocabDefault = "http://idpf.org/epub/vocab/package/#"
    fileprivate static let vocabDCTerms = "http://purl.org/dc/terms/"

    /// Readium `MediaType` (MediaType.swift): lowercased type/subtype, parameters sorted in `string`.
    fileprivate struct RMediaType {
        let type: String, subtype: String, parameters: [String: String]
        init?(_ string: String) {
            guard !string.isEmpty else { return nil }
            let components = string.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = components.first else { return nil }
            let types = first.split(separator: "/")
            guard types.count == 2 else { return nil }
            type = types[0].lowercased()
            subtype = types[1].lowercased()
            var params: [String: String] = [:]
            for component in components.dropFirst() {
                let parts = component.split(separator: "=").map(String.init)
                if parts.count == 2 { params[parts[0].lowercased()] = parts[1] }
            }
            if let charset = params["charset"] { params["charset"] = charset.uppercased() }
            parameters = params
        }
        var string: String {
            let params = parameters.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ";")
            return "\(type)/\(subtype)\(params.isEmpty ? "" : ";\(params)")"
        }
        func contains(_ other: RMediaType) -> Bool {
            guard type == "*" || type == other.type, subtype == "*" || subtype == other.subtype else { return false }
            let mine = Set(parameters.map { "\($0.key)=\($0.value)" })
            return mine.isSubset(of: Set(other.parameters.map { "\($0.key)=\($0.value)" }))
        }
        func matches(_ other: String) -> Bool {
            guard let other = RMediaType(other) else { return false }
            return contains(other) || other.contains(self)
        }
        var isHTML: Bool { matches("text/html") || matches("application/xhtml+xml") }
        var isBitmap: Bool {
            ["image/avif", "image/bmp", "image/gif", "image/jpeg", "image/jxl", "image/png", "image/tiff", "image/webp"]
                .contains { matches($0) }
        }
    }

    /// A relative URL as Readium holds it: decoded path, raw query and fragment.
    fileprivate struct RURL {
        var path: String
        var query: String? = nil
        var fragment: String? = nil
        /// `url.absoluteString`.
        var string: String {
            rEncodePath(path) + (query.map { "?" + $0 } ?? "") + (fragment.map { "#" + $0 } ?? "")
        }
    }

    /// RFC 3986 `pchar + "/"` (swift-foundation `URLComponentAllowedSet.rfc3986Path` / `URLComponentAllowedMask.path`).
    private static let rfcPathSet: [Bool] = {
        var t = [Bool](repeating: false, count: 128)
        for c in "!$&'()*+,-./0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~".utf8 { t[Int(c)] = true }
        return t
    }()
    /// Sets used when validating a string with `URL(string:encodingInvalidCharacters: false)` ("lax": also `[` `]`).
    private static let laxPathSet: [Bool] = {
        var t = rfcPathSet
        t[Int(UInt8(ascii: "["))] = true; t[Int(UInt8(ascii: "]"))] = true
        return t
    }()
    private static let laxQuerySet: [Bool] = {
        var t = laxPathSet
        t[Int(UInt8(ascii: "?"))] = true
        return t
    }()

    /// `String.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)` as swift-foundation does it
    /// (`URLEncoder.percentEncode(path:)`): RFC 3986 path set, ':' encoded in the first segment, uppercase hex.
    fileprivate static func rEncodePath(_ s: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var firstSegment = true
        for b in s.utf8 {
            if b == UInt8(ascii: "/") { firstSegment = false; out.append(b) }
            else if b < 128 && rfcPathSet[Int(b)] && !(firstSegment && b == UInt8(ascii: ":")) { out.append(b) }
            else { out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func percentDecode(_ s: Substring) -> String {
        guard s.contains("%") else { return String(s) }
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) {
                out.append(h << 4 | l); i += 3
            } else { out.append(bytes[i]); i += 1 }
        }
        return String(decoding: out, as: UTF8.self)
    }

    fileprivate static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    /// `RelativeURL(string:)`: a valid (already percent-encoded) relative reference, or nil.
    private static func strictRelativeURL(_ s: String) -> RURL? {
        guard !s.isEmpty, !s.hasPrefix("//") else { return nil }
        let bytes = Array(s.utf8)
        guard bytes.allSatisfy({ $0 < 128 }) else { return nil }
        // A ':' before any '/', '?' or '#' is a scheme (absolute URL) or invalid: either way not a RelativeURL.
        for b in bytes {
            if b == UInt8(ascii: "/") || b == UInt8(ascii: "?") || b == UInt8(ascii: "#") { break }
            if b == UInt8(ascii: ":") { return nil }
        }
        let hashIndex = s.firstIndex(of: "#")
        let beforeFragment = s[..<(hashIndex ?? s.endIndex)]
        let queryIndex = beforeFragment.firstIndex(of: "?")
        let pathPart = beforeFragment[..<(queryIndex ?? beforeFragment.endIndex)]
        let queryPart = queryIndex.map { beforeFragment[beforeFragment.index(after: $0)...] }
        let fragmentPart = hashIndex.map { s[s.index(after: $0)...] }
        func valid(_ part: Substring, _ set: [Bool]) -> Bool {
            let b = Array(part.utf8)
            var i = 0
            while i < b.count {
                if b[i] == UInt8(ascii: "%") {
                    guard i + 2 < b.count, hexValue(b[i + 1]) != nil, hexValue(b[i + 2]) != nil else { return false }
                    i += 3
                } else {
                    guard set[Int(b[i])] else { return false }
                    i += 1
                }
            }
            return true
        }
        guard valid(pathPart, laxPathSet), queryPart.map({ valid($0, laxQuerySet) }) ?? true,
              fragmentPart.map({ valid($0, laxQuerySet) }) ?? true else { return nil }
        return RURL(path: percentDecode(pathPart), query: queryPart.map(String.init), fragment: fragmentPart.map(String.init))
    }

    /// `RelativeURL(epubHREF:)`: valid URL first, else the string taken as a decoded path.
    private static func epubHREF(_ s: String) -> RURL? {
        if let url = strictRelativeURL(s) { return url }
        guard !s.isEmpty else { return nil }
        return RURL(path: s)
    }

    /// URLProtocol `normalizedPath` (URLProtocol.swift).
    private static func normalizedPath(_ p: String) -> String {
        guard !p.isEmpty else { return "" }
        var segments: [Substring] = []
        for segment in p.split(separator: "/", omittingEmptySubsequences: false) {
            if segment == ".." {
                if !segments.isEmpty { segments.removeLast() } else { segments.append(segment) }
            } else if segment != "." {
                segments.append(segment)
            }
        }
        return segments.joined(separator: "/")
    }

    /// `RelativeURL.resolve(_:)` followed by `.normalized`.
    private static func resolve(_ base: RURL, _ other: RURL) -> RURL {
        var result: RURL
        if other.string.hasPrefix("/") {
            result = other
        } else {
            var dir = base.path
            if !other.path.isEmpty && !base.path.hasSuffix("/") {
                // url.deletingLastPathComponent().path + "/"
                if let slash = base.path.lastIndex(of: "/") { dir = String(base.path[...slash]) } else { dir = "" }
            }
            result = RURL(path: dir + other.path, query: other.query, fragment: other.fragment)
        }
        result.path = normalizedPath(result.path)
        return result
    }

    private static func readiumPositions(zip: ReferenceZip) throws -> [ReferencePosition] {
        // MinizipContainer: entries keyed by RelativeURL(path: entry.path); directories ("/" suffix) ignored;
        // later duplicates overwrite earlier ones. Lookups use `url.normalized`.
        var entriesByKey: [String: ReferenceZipEntry] = [:]
        for entry in zip.entries where !entry.name.hasSuffix("/") { entriesByKey[rEncodePath(entry.name)] = entry }
        func lookup(_ url: RURL) -> ReferenceZipEntry? {
            guard url.query == nil, url.fragment == nil else { return nil }
            return entriesByKey[rEncodePath(normalizedPath(url.path))]
        }
        func read(_ url: RURL) -> [UInt8]? { lookup(url).flatMap { try? zip.data(of: $0) } }

        // EPUBContainerParser.parseOPFHREF: /cn:container/cn:rootfiles/cn:rootfile/@full-path
        guard let containerData = read(RURL(path: "META-INF/container.xml")) else {
            throw ReferencePositionsError("Readium: missing META-INF/container.xml")
        }
        let container = ReferenceXML.parse(containerData).rootElement
        guard let root = container, root.isElement(nsCN, "container"),
              let rootfile = root.childElements(nsCN, "rootfiles").lazy.flatMap({ $0.childElements(nsCN, "rootfile") }).first,
              let opfURL = rootfile.xmlProp("full-path").flatMap(epubHREF)
        else { throw ReferencePositionsError("Readium: missing rootfile") }
        guard let opfData = read(opfURL) else { throw ReferencePositionsError("Readium: missing OPF \(opfURL.string)") }
        let package = ReferenceXML.parse(opfData).rootElement.flatMap { $0.isElement(nsOPF, "package") ? $0 : nil }

        // OPFParser.init(container:opfHREF:): iBooks display options, else Kobo's.
        let displayOptionsData = read(RURL(path: "META-INF/com.apple.ibooks.display-options.xml"))
            ?? read(RURL(path: "META-INF/com.kobobooks.display-options.xml"))
        let displayOptions = displayOptionsData.flatMap { ReferenceXML.parse($0).rootElement }

        // OPFParser.parseManifestItems / makeManifestItem
        struct Item { let id: String; let url: RURL; let mediaType: RMediaType?; let fallback: String?; let overlay: String? }
        var items: [Item] = []
        for manifest in package?.childElements(nsOPF, "manifest") ?? [] {
            for element in manifest.childElements(nsOPF, "item") {
                guard let id = element.xmlProp("id"),
                      let relative = element.xmlProp("href").flatMap(epubHREF) else { continue }
                items.append(Item(id: id, url: resolve(opfURL, relative),
                                  mediaType: element.xmlProp("media-type").flatMap(RMediaType.init),
                                  fallback: element.xmlProp("fallback"), overlay: element.xmlProp("media-overlay")))
            }
        }

        // OPFParser.splitResourcesAndReadingOrderLinks
        var readingOrder: [(url: RURL, mediaType: RMediaType?)] = []
        for spine in package?.childElements(nsOPF, "spine") ?? [] {
            for itemref in spine.childElements(nsOPF, "itemref") {
                guard let idref = itemref.xmlProp("idref"),
                      let index = items.firstIndex(where: { $0.id == idref }),
                      itemref.xmlProp("linear")?.lowercased() != "no" else { continue }
                let item = items.remove(at: index)
                var link = (url: item.url, mediaType: item.mediaType)
                if let fallbackID = item.fallback, let fallbackIndex = items.firstIndex(where: { $0.id == fallbackID }) {
                    let fallback = items.remove(at: fallbackIndex)
                    // resolveFallbackChain: HTML spine item with a bitmap fallback -> the bitmap is primary.
                    if item.mediaType?.isHTML == true, fallback.mediaType?.isBitmap == true {
                        link = (url: fallback.url, mediaType: fallback.mediaType)
                    }
                }
                if let overlayID = item.overlay,
                   let smilIndex = items.firstIndex(where: { $0.id == overlayID && $0.mediaType?.matches("application/smil+xml") == true }) {
                    items.remove(at: smilIndex)
                }
                readingOrder.append(link)
            }
        }

        // EPUBMetadataParser.layout(): metas["layout", in: .rendition].last, else display option; then
        // OPFParser.parsePublication forces .fixed when every reading order item is a bitmap.
        var isFixed: Bool
        switch readiumLayoutMeta(package) ?? "" {
        case "reflowable": isFixed = false
        case "pre-paginated": isFixed = true
        default: isFixed = readiumDisplayOption(displayOptions, "fixed-layout") == "true"
        }
        if readingOrder.allSatisfy({ $0.mediaType?.isBitmap == true }) { isFixed = true }

        // EPUBPositionsService.computePositionsByReadingOrder
        var positions: [ReferencePosition] = []
        var last = 0
        for link in readingOrder {
            let href = link.url.string
            let mediaType = link.mediaType?.string ?? "text/html"
            if isFixed {
                last += 1
                positions.append(ReferencePosition(href: href, mediaType: mediaType, position: last, progression: 0, totalProgression: 0))
                continue
            }
            guard let entry = lookup(link.url) else { continue } // missing reflowable resource: no positions
            // MinizipContainer: entryLength = compressedLength (method != 0) ?? length
            let length = entry.method != 0 ? entry.compressedSize : entry.uncompressedSize
            let count = max(1, Int((Double(length) / 1024.0).rounded(.up)))
            for p in 1...count {
                positions.append(ReferencePosition(href: href, mediaType: mediaType, position: last + p,
                                                   progression: Double(p - 1) / Double(count), totalProgression: 0))
            }
            last += count
        }
        let total = positions.count
        for i in positions.indices { positions[i].totalProgression = Double(positions[i].position - 1) / Double(total) }
        return positions
    }

    /// OPFMetaList (OPFMeta.swift): `meta` and `dc:*` nodes of the union XPath in document order; returns the
    /// content of the last one whose property is `layout` in the rendition vocabulary.
    private static func readiumLayoutMeta(_ package: ReferenceXMLNode?) -> String? {
        guard let package else { return nil }
        let prefixes = readiumPrefixes(package.xmlProp("prefix"))
        var nodes: [ReferenceXMLNode] = []
        for metadata in package.childElements(nsOPF, "metadata") {
            for child in metadata.childNodes where !child.isText {
                if child.isElement(nsOPF, "meta") || child.namespaceURI == nsDC { nodes.append(child) }
                else if child.isElement(nsOPF, "dc-metadata") { nodes += child.childNodes.filter { !$0.isText && $0.namespaceURI == nsDC } }
                else if child.isElement(nsOPF, "x-metadata") { nodes += child.childElements(nsOPF, "meta") }
            }
        }
        var layout: String?
        for node in nodes where node.localName == "meta" {
            let property: String, content: String
            if let p = node.xmlProp("property") {
                property = p
                content = node.stringValue.trimmingCharacters(in: .whitespacesAndNewlines)
            } else if let n = node.xmlProp("name") {
                property = n
                content = node.xmlProp("content")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            } else { continue }
            let (name, vocabulary) = readiumParseProperty(property, prefixes)
            if name == "layout" && vocabulary == vocabRendition { layout = content }
        }
        return layout
    }

    /// OPFVocabulary.prefixes(in:)
    private static func readiumPrefixes(_ attribute: String?) -> [String: String] {
        guard let attribute, let regex = try? NSRegularExpression(pattern: "(\\S+?):\\s*(\\S+)") else { return [:] }
        var result: [String: String] = [:]
        for match in regex.matches(in: attribute, range: NSRange(attribute.startIndex..., in: attribute)) where match.numberOfRanges == 3 {
            if let p = Range(match.range(at: 1), in: attribute), let u = Range(match.range(at: 2), in: attribute) {
                result[String(attribute[p])] = String(attribute[u])
            }
        }
        return result
    }

    /// OPFVocabulary.parse(property:prefixes:) and resolveURI(ofPrefix:prefixes:)
    private static func readiumParseProperty(_ raw: String, _ prefixes: [String: String]) -> (String, String) {
        let property = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let regex = try? NSRegularExpression(pattern: "^\\s*(\\S+?):\\s*(.+?)\\s*$"),
              let match = regex.firstMatch(in: property, range: NSRange(property.startIndex..., in: property)),
              let p = Range(match.range(at: 1), in: property), let n = Range(match.range(at: 2), in: property)
        else { return (property, vocabDefault) }
        let prefix = String(property[p])
        if let uri = prefixes[prefix] { return (String(property[n]), uri == nsDC ? vocabDCTerms : uri) }
        let known: [String: String] = [
            "defaultMetadata": vocabDefault, "defaultLinkRel": "http://idpf.org/epub/vocab/package/link/#",
            "a11y": "http://www.idpf.org/epub/vocab/package/a11y/#", "dcterms": vocabDCTerms,
            "epubsc": "http://idpf.org/epub/vocab/sc/#", "marc": "http://id.loc.gov/vocabulary/",
            "media": "http://www.idpf.org/epub/vocab/overlays/#",
            "onix": "http://www.editeur.org/ONIX/book/codelists/current.html#", "rendition": vocabRendition,
            "schema": "http://schema.org/", "xsd": "http://www.w3.org/2001/XMLSchema#",
            "calibre": "https://calibre-ebook.com", "tdm": "http://www.w3.org/ns/tdmrep#",
        ]
        return (String(property[n]), known[prefix == "dc" ? "dcterms" : prefix] ?? vocabDefault)
    }

    /// EPUBMetadataParser.layout().displayOption: XPath `platform[@name='*']`, `ipad`, `iphone`, any `platform`,
    /// then `option[@name=...]` string value (not trimmed).
    private static func readiumDisplayOption(_ root: ReferenceXMLNode?, _ name: String) -> String? {
        guard let root else { return nil }
        let platforms = root.childElements(nil, "platform")
        guard let platform = platforms.first(where: { $0.noNamespaceAttr("name") == "*" })
            ?? platforms.first(where: { $0.noNamespaceAttr("name") == "ipad" })
            ?? platforms.first(where: { $0.noNamespaceAttr("name") == "iphone" })
            ?? platforms.first else { return nil }
        return platform.childElements(nil, "option").first(where: { $0.noNamespaceAttr("name") == name })?.stringValue
    }
}

// MARK: - Komga

extension ReferencePositions {
    fileprivate struct KItem: Equatable { let id: String; let href: String; let mediaType: String }

    private static func komgaPositions(zip: ReferenceZip) throws -> [ReferencePosition] {
        func entry(_ name: String) -> ReferenceZipEntry? { zip.entries.first { $0.name == name } } // ZipFile.getEntry
        func read(_ name: String) -> [UInt8]? { entry(name).flatMap { try? zip.data(of: $0) } }

        // BookAnalyzer.analyze: a .epub that is not detected as EPUB must have mimetype == application/epub+zip.
        guard let mimetype = read("mimetype"),
              String(decoding: mimetype, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "application/epub+zip"
        else { throw ReferencePositionsError("Komga: ERR_1032 (not an EPUB)") }

        // Epub.kt getPackagePath: first <rootfile> anywhere, attr full-path.
        guard let containerData = read("META-INF/container.xml"),
              let rootfile = ReferenceXML.parse(containerData).descendants.first(where: { $0.normalName == "rootfile" })
        else { throw ReferencePositionsError("Komga: container.xml does not contain rootfile tag") }
        let opfFile = rootfile.jsoupAttr("full-path")
        guard let opfData = read(opfFile) else { throw ReferencePositionsError("Komga: Could not open OPF resource") }
        let opf = ReferenceXML.parse(opfData)
        let opfDir = javaParent(opfFile)

        // Opf.kt getManifest: select("*|manifest > *|item").associate { id -> item } (first key position, last value).
        var manifestOrder: [String] = []
        var manifest: [String: KItem] = [:]
        for element in opf.select(parent: "manifest", child: "item") {
            let item = KItem(id: element.jsoupAttr("id"), href: element.jsoupAttr("href"), mediaType: element.jsoupAttr("media-type"))
            if manifest[item.id] == nil { manifestOrder.append(item.id) }
            manifest[item.id] = item
        }
        let spine = opf.select(parent: "spine", child: "itemref").compactMap { manifest[$0.jsoupAttr("idref")] }

        // EpubExtractor.getResources (URLDecoder throws on malformed escapes -> analysis fails)
        for item in manifest.values { _ = try javaURLDecode(item.href) }
        let zipSizes: (String) -> UInt64? = { name in entry(name)?.uncompressedSize }
        var readingOrder: [(fileName: String, mediaType: String, size: UInt64)] = []
        for page in spine {
            let fileName = komgaNormalizeHref(opfDir, try javaURLDecode(page.href))
            // BookAnalyzer.analyzeEpub: resources without a ZIP entry are dropped (ERR_1033).
            if let size = zipSizes(fileName) { readingOrder.append((fileName, page.mediaType, size)) }
        }

        let isDivina = komgaIsDivina(zip: zip, opf: opf, opfDir: opfDir, manifest: manifest, manifestOrder: manifestOrder)
        // EpubExtractor.isFixedLayout
        let layoutMeta = opf.select(parent: "metadata", child: "meta").first { $0.jsoupAttrEquals("property", "rendition:layout") }
        let fixedMeta = opf.select(parent: "metadata", child: "meta").first { $0.jsoupAttrEquals("name", "fixed-layout") }
        let isFixed = isDivina || layoutMeta.map { $0.jsoupText == "pre-paginated" } == true
            || fixedMeta.map { $0.jsoupAttr("content") == "true" } == true

        // EpubExtractor.computePositions
        var positions: [ReferencePosition] = []
        var position = 1
        for file in readingOrder {
            let count = isFixed ? 1 : max(1, Int((Double(file.size) / 1024.0).rounded(.up)))
            for p in 0..<count {
                let progression = isFixed ? Float(0) : Float(p) / Float(count)
                positions.append(ReferencePosition(href: file.fileName, mediaType: file.mediaType, position: position,
                                                   progression: Double(progression), totalProgression: 0))
                position += 1
            }
        }
        let total = positions.count
        for i in positions.indices { positions[i].totalProgression = Double(Float(positions[i].position) / Float(total)) }
        return positions
    }

    /// EpubExtractor.getDivinaPages(...).isNotEmpty() (threshold komgaProperties.epubDivinaLetterCountThreshold = 15).
    private static func komgaIsDivina(zip: ReferenceZip, opf: ReferenceXMLNode, opfDir: String?,
                                      manifest: [String: KItem], manifestOrder: [String]) -> Bool {
        let itemrefs = opf.select(parent: "spine", child: "itemref").compactMap { manifest[$0.jsoupAttr("idref")] }
        let spinePaths = Set(itemrefs.map { komgaNormalizeHref(opfDir, $0.href) })
        let pageCount = zip.entries.filter { spinePaths.contains($0.name) }.count
        var pagesWithImages: [[String]] = []
        for item in itemrefs {
            let pagePath = komgaNormalizeHref(opfDir, item.href)
            if item.mediaType.lowercased().hasPrefix("image") {
                pagesWithImages.append([javaNormalize(javaParse(pagePath))])
                continue
            }
            guard let entry = zip.entries.first(where: { $0.name == pagePath }), let data = try? zip.data(of: entry) else {
                pagesWithImages.append([]); continue
            }
            let doc = ReferenceXML.parse(data)
            if doc.jsoupBody.map({ $0.jsoupText.utf16.count }) ?? 0 > 15 { return false }
            let sources = doc.descendants.filter { $0.normalName == "img" }.map { $0.jsoupAttr("src") }
                + doc.descendants.filter { $0.normalName == "image" && $0.parent?.normalName == "svg" && $0.jsoupHasAttr("xlink:href") }
                    .map { $0.jsoupAttr("xlink:href") }
            let folder = javaParent(pagePath) ?? ""
            pagesWithImages.append(sources.map { javaNormalize(javaResolve(folder, $0)) })
        }
        guard pagesWithImages.count == pageCount else { return false }
        var imagesPath: [String] = []
        for page in pagesWithImages {
            var seen = Set<String>()
            for path in page where seen.insert(path).inserted { imagesPath.append(path) }
        }
        guard imagesPath.count == pageCount else { return false }
        var divinaPages = 0
        for imagePath in imagesPath {
            guard let id = manifestOrder.first(where: { komgaNormalizeHref(opfDir, manifest[$0]!.href) == imagePath }) else { continue }
            guard manifest[id]!.mediaType.hasPrefix("image/") else { continue } // ContentDetector.isImage
            // a missing ZIP entry throws (NPE on zipEntry.size), caught by BookAnalyzer -> not Divina
            guard zip.entries.contains(where: { $0.name == imagePath }) else { return false }
            divinaPages += 1
        }
        return divinaPages == pageCount && divinaPages > 0
    }

    /// Opf.kt normalizeHref
    private static func komgaNormalizeHref(_ opfDir: String?, _ href: String) -> String {
        var anchor = "", base = href
        if let hash = href.lastIndex(of: "#") {
            anchor = String(href[href.index(after: hash)...])
            base = String(href[..<hash])
        }
        let resolved = opfDir.map { javaNormalize(javaResolve($0, base)) } ?? javaParse(base)
        return resolved + (anchor.allSatisfy(\.isWhitespace) ? "" : "#" + anchor)
    }

    /// java.nio UnixPath parsing: redundant and trailing slashes removed.
    private static func javaParse(_ s: String) -> String {
        var out = ""
        var previousSlash = false
        for ch in s {
            if ch == "/" { if previousSlash { continue }; previousSlash = true } else { previousSlash = false }
            out.append(ch)
        }
        if out.count > 1 && out.hasSuffix("/") { out.removeLast() }
        return out
    }

    private static func javaParent(_ s: String) -> String? {
        let p = javaParse(s)
        guard let slash = p.lastIndex(of: "/"), p != "/" else { return nil }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }

    private static func javaResolve(_ base: String, _ other: String) -> String {
        let o = javaParse(other)
        if o.hasPrefix("/") { return o }
        if o.isEmpty { return base }
        if base.isEmpty { return o }
        return base == "/" ? "/" + o : base + "/" + o
    }

    private static func javaNormalize(_ p: String) -> String {
        let absolute = p.hasPrefix("/")
        var segments: [Substring] = []
        for segment in p.split(separator: "/") {
            if segment == "." { continue }
            if segment == ".." {
                if let last = segments.last, last != ".." { segments.removeLast() } else if !absolute { segments.append(segment) }
            } else { segments.append(segment) }
        }
        return (absolute ? "/" : "") + segments.joined(separator: "/")
    }

    /// java.net.URLDecoder.decode(s, UTF_8): '+' -> ' ', %XX runs decoded as UTF-8, malformed escapes throw.
    private static func javaURLDecode(_ s: String) throws -> String {
        guard s.contains("%") || s.contains("+") else { return s }
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: " ")); i += 1
            case UInt8(ascii: "%"):
                guard i + 2 < bytes.count else {
                    throw ReferencePositionsError("Komga: URLDecoder: Incomplete trailing escape (%) pattern")
                }
                let hi = bytes[i + 1], lo = bytes[i + 2]
                // Integer.parseInt(.., 16) also accepts a leading '+'; a '-' gives a negative value (rejected).
                guard let l = hexValue(lo), let h = (hi == UInt8(ascii: "+") ? 0 : hexValue(hi)) else {
                    throw ReferencePositionsError("Komga: URLDecoder: Illegal hex characters in escape (%) pattern")
                }
                out.append(h << 4 | l); i += 3
            default: out.append(bytes[i]); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

// MARK: - ZIP

struct ReferenceZipEntry {
    let name: String
    let method: Int
    let compressedSize: UInt64
    let uncompressedSize: UInt64
    let localHeaderOffset: UInt64
}

/// Central-directory reader (end-of-central-directory record, ZIP64 locator/record and extra field).
final class ReferenceZip {
    let bytes: [UInt8]
    private(set) var entries: [ReferenceZipEntry] = []

    init(path: String) throws {
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try readCentralDirectory()
    }

    private func u16(_ o: Int) -> UInt64 { o >= 0 && o + 2 <= bytes.count ? UInt64(bytes[o]) | UInt64(bytes[o + 1]) << 8 : 0 }
    private func u32(_ o: Int) -> UInt64 { u16(o) | u16(o + 2) << 16 }
    private func u64(_ o: Int) -> UInt64 { u32(o) | u32(o + 4) << 32 }

    private func readCentralDirectory() throws {
        let n = bytes.count
        guard n >= 22 else { throw ReferencePositionsError("not a ZIP") }
        var eocd = -1
        var i = n - 22
        while i >= max(0, n - 22 - 0xFFFF) {
            if u32(i) == 0x0605_4B50 { eocd = i; break }
            i -= 1
        }
        guard eocd >= 0 else { throw ReferencePositionsError("not a ZIP: no end of central directory") }
        var cdOffset = u32(eocd + 16)
        if (u16(eocd + 10) == 0xFFFF || cdOffset == 0xFFFF_FFFF), eocd >= 20, u32(eocd - 20) == 0x0706_4B50 {
            let record = Int(clamping: u64(eocd - 20 + 8))
            if u32(record) == 0x0606_4B50 { cdOffset = u64(record + 48) }
        }
        var p = Int(clamping: cdOffset)
        while p + 46 <= n, u32(p) == 0x0201_4B50 {
            let nameLength = Int(u16(p + 28)), extraLength = Int(u16(p + 30)), commentLength = Int(u16(p + 32))
            guard p + 46 + nameLength + extraLength <= n else { break }
            var compressed = u32(p + 20), uncompressed = u32(p + 24), offset = u32(p + 42)
            var e = p + 46 + nameLength
            let extraEnd = e + extraLength
            while e + 4 <= extraEnd {
                let id = u16(e), size = Int(u16(e + 2))
                if id == 1 {
                    var q = e + 4
                    if uncompressed == 0xFFFF_FFFF { uncompressed = u64(q); q += 8 }
                    if compressed == 0xFFFF_FFFF { compressed = u64(q); q += 8 }
                    if offset == 0xFFFF_FFFF { offset = u64(q) }
                }
                e += 4 + size
            }
            let name = String(decoding: bytes[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self)
            entries.append(ReferenceZipEntry(name: name, method: Int(u16(p + 10)), compressedSize: compressed,
                                             uncompressedSize: uncompressed, localHeaderOffset: offset))
            p += 46 + nameLength + extraLength + commentLength
        }
    }

    /// The entry's uncompressed bytes (STORED or DEFLATE).
    func data(of entry: ReferenceZipEntry) throws -> [UInt8] {
        let o = Int(clamping: entry.localHeaderOffset)
        guard o + 30 <= bytes.count, u32(o) == 0x0403_4B50 else { throw ReferencePositionsError("bad local header for \(entry.name)") }
        let start = o + 30 + Int(u16(o + 26)) + Int(u16(o + 28))
        let end = start + Int(clamping: entry.compressedSize)
        guard end <= bytes.count, start <= end else { throw ReferencePositionsError("truncated entry \(entry.name)") }
        switch entry.method {
        case 0: return Array(bytes[start..<end])
        case 8:
            var inflater = ReferenceInflater(input: bytes, start: start, end: end)
            return try inflater.inflate()
        default: throw ReferencePositionsError("unsupported compression method \(entry.method)")
        }
    }
}

// MARK: - Raw DEFLATE (RFC 1951: stored, fixed and dynamic Huffman blocks), after zlib's puff.c

struct ReferenceInflater {
    private let input: [UInt8]
    private var position: Int
    private let end: Int
    private var bitBuffer = 0
    private var bitCount = 0
    private var output: [UInt8] = []

    init(input: [UInt8], start: Int, end: Int) {
        self.input = input; position = start; self.end = end
    }

    private struct Huffman {
        var count = [Int](repeating: 0, count: 16)
        var symbol: [Int]
        init(_ lengths: ArraySlice<Int>) {
            symbol = [Int](repeating: 0, count: lengths.count)
            for l in lengths { count[l] += 1 }
            var offsets = [Int](repeating: 0, count: 16)
            for l in 1..<15 { offsets[l + 1] = offsets[l] + count[l] }
            for (s, l) in zip(0..., lengths) where l != 0 { symbol[offsets[l]] = s; offsets[l] += 1 }
        }
    }

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
                                       2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    private mutating func bits(_ need: Int) throws -> Int {
        var value = bitBuffer
        while bitCount < need {
            guard position < end else { throw ReferencePositionsError("inflate: input exhausted") }
            value |= Int(input[position]) << bitCount
            position += 1
            bitCount += 8
        }
        bitBuffer = value >> need
        bitCount -= need
        return value & ((1 << need) - 1)
    }

    private mutating func decode(_ h: Huffman) throws -> Int {
        var code = 0, first = 0, index = 0
        for length in 1...15 {
            code |= try bits(1)
            let count = h.count[length]
            if code - count < first { return h.symbol[index + (code - first)] }
            index += count; first += count; first <<= 1; code <<= 1
        }
        throw ReferencePositionsError("inflate: bad code")
    }

    private mutating func codes(_ lengthCode: Huffman, _ distanceCode: Huffman) throws {
        while true {
            var symbol = try decode(lengthCode)
            if symbol < 256 { output.append(UInt8(symbol)); continue }
            if symbol == 256 { return }
            symbol -= 257
            guard symbol < 29 else { throw ReferencePositionsError("inflate: bad length symbol") }
            let length = Self.lengthBase[symbol] + (try bits(Self.lengthExtra[symbol]))
            let d = try decode(distanceCode)
            guard d < 30 else { throw ReferencePositionsError("inflate: bad distance symbol") }
            let distance = Self.distanceBase[d] + (try bits(Self.distanceExtra[d]))
            guard distance <= output.count else { throw ReferencePositionsError("inflate: distance too far") }
            let from = output.count - distance
            for k in 0..<length { output.append(output[from + k]) }
        }
    }

    mutating func inflate() throws -> [UInt8] {
        var last = 0
        repeat {
            last = try bits(1)
            switch try bits(2) {
            case 0:
                bitBuffer = 0; bitCount = 0
                guard position + 4 <= end else { throw ReferencePositionsError("inflate: truncated stored block") }
                let length = Int(input[position]) | Int(input[position + 1]) << 8
                let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
                guard length == (~complement & 0xFFFF), position + 4 + length <= end else { throw ReferencePositionsError("inflate: bad stored block") }
                output += input[(position + 4)..<(position + 4 + length)]
                position += 4 + length
            case 1:
                var lengths = [Int](repeating: 8, count: 288)
                for s in 144..<256 { lengths[s] = 9 }
                for s in 256..<280 { lengths[s] = 7 }
                try codes(Huffman(lengths[...]), Huffman([Int](repeating: 5, count: 30)[...]))
            case 2:
                let nlen = try bits(5) + 257, ndist = try bits(5) + 1, ncode = try bits(4) + 4
                guard nlen <= 286, ndist <= 30 else { throw ReferencePositionsError("inflate: bad counts") }
                let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
                var lengths = [Int](repeating: 0, count: 320)
                for k in 0..<ncode { lengths[order[k]] = try bits(3) }
                let codeCode = Huffman(lengths[0..<19])
                var index = 0
                while index < nlen + ndist {
                    var symbol = try decode(codeCode)
                    if symbol < 16 { lengths[index] = symbol; index += 1; continue }
                    var repeated = 0
                    if symbol == 16 {
                        guard index > 0 else { throw ReferencePositionsError("inflate: repeat with no length") }
                        repeated = lengths[index - 1]; symbol = 3 + (try bits(2))
                    } else if symbol == 17 { symbol = 3 + (try bits(3)) } else { symbol = 11 + (try bits(7)) }
                    guard index + symbol <= nlen + ndist else { throw ReferencePositionsError("inflate: too many lengths") }
                    for _ in 0..<symbol { lengths[index] = repeated; index += 1 }
                }
                try codes(Huffman(lengths[0..<nlen]), Huffman(lengths[nlen..<(nlen + ndist)]))
            default:
                throw ReferencePositionsError("inflate: invalid block type")
            }
        } while last == 0
        return output
    }
}

// MARK: - Lenient XML tree (libxml2-recover / jsoup-XML-like)

final class ReferenceXMLNode {
    /// Qualified name as written; "" for text nodes, "#document" for the document.
    let name: String
    var attributes: [(name: String, value: String)] = []
    var childNodes: [ReferenceXMLNode] = []
    weak var parent: ReferenceXMLNode?
    var text = ""
    var isText = false
    var isCDATA = false
    var namespaceURI: String?
    var scope: [String: String] = [:]

    init(name: String) { self.name = name }

    var localName: String { name.firstIndex(of: ":").map { String(name[name.index(after: $0)...]) } ?? name }
    var normalName: String { name.lowercased() }
    var rootElement: ReferenceXMLNode? { childNodes.first { !$0.isText } }

    func isElement(_ ns: String?, _ local: String) -> Bool { !isText && namespaceURI == ns && localName == local }
    func childElements(_ ns: String?, _ local: String) -> [ReferenceXMLNode] { childNodes.filter { $0.isElement(ns, local) } }

    /// libxml2 xmlGetProp (Fuzi `attr(_:)`): first attribute with that local name, whatever its namespace.
    func xmlProp(_ local: String) -> String? {
        attributes.first { a in
            a.name != "xmlns" && !a.name.hasPrefix("xmlns:")
                && (a.name == local || (a.name.firstIndex(of: ":").map { a.name[a.name.index(after: $0)...] == local } ?? false))
        }?.value
    }
    /// XPath `@name` (no namespace).
    func noNamespaceAttr(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
    /// jsoup `attr(key)`: case-insensitive key, "" when absent.
    func jsoupAttr(_ key: String) -> String { attributes.first { $0.name.lowercased() == key.lowercased() }?.value ?? "" }
    func jsoupHasAttr(_ key: String) -> Bool { attributes.contains { $0.name.lowercased() == key.lowercased() } }
    /// jsoup `[key=value]`: case-insensitive value (1.23.1: no trimming).
    func jsoupAttrEquals(_ key: String, _ value: String) -> Bool {
        jsoupHasAttr(key) && jsoupAttr(key).lowercased() == value.lowercased()
    }

    /// libxml2 xmlNodeGetContent.
    var stringValue: String {
        if isText { return text }
        return childNodes.map(\.stringValue).joined()
    }

    /// Elements in document order (pre-order), excluding self.
    var descendants: [ReferenceXMLNode] {
        var result: [ReferenceXMLNode] = []
        func walk(_ node: ReferenceXMLNode) {
            for child in node.childNodes where !child.isText { result.append(child); walk(child) }
        }
        walk(self)
        return result
    }

    /// jsoup `select("*|parent > *|child")` (names compared lowercased; `*|x` = `x` or `…:x`).
    func select(parent: String, child: String) -> [ReferenceXMLNode] {
        func matches(_ node: ReferenceXMLNode?, _ name: String) -> Bool {
            guard let node, !node.isText, node.name != "#document" else { return false }
            return node.normalName == name || node.normalName.hasSuffix(":" + name)
        }
        return descendants.filter { matches($0, child) && matches($0.parent, parent) }
    }

    /// jsoup Document.body(): first `body`/`frameset` child of the first `html` child of the document.
    var jsoupBody: ReferenceXMLNode? {
        childNodes.first { !$0.isText && $0.normalName == "html" }?
            .childNodes.first { !$0.isText && ($0.normalName == "body" || $0.normalName == "frameset") }
    }

    /// jsoup Element.text() for XML-parsed trees (all tags unknown, so inline): whitespace-normalised text,
    /// CDATA kept raw, a space before `<br>`, trimmed.
    var jsoupText: String {
        var accum: [Unicode.Scalar] = []
        func walk(_ node: ReferenceXMLNode) {
            for child in node.childNodes {
                if child.isText {
                    if child.isCDATA { accum += child.text.unicodeScalars; continue }
                    var lastWasWhite = false, reachedNonWhite = false
                    let stripLeading = accum.last == " "
                    for c in child.text.unicodeScalars {
                        if c == " " || c == "\t" || c == "\n" || c == "\u{0C}" || c == "\r" || c.value == 160 {
                            if (stripLeading && !reachedNonWhite) || lastWasWhite { continue }
                            accum.append(" "); lastWasWhite = true
                        } else if c.value != 8203 && c.value != 173 {
                            accum.append(c); lastWasWhite = false; reachedNonWhite = true
                        }
                    }
                } else {
                    if !accum.isEmpty && child.normalName == "br" && accum.last != " " { accum.append(" ") }
                    walk(child)
                }
            }
        }
        walk(self)
        while let f = accum.first, f.value <= 0x20 { accum.removeFirst() }
        while let l = accum.last, l.value <= 0x20 { accum.removeLast() }
        var s = ""
        s.unicodeScalars.append(contentsOf: accum)
        return s
    }
}

enum ReferenceXML {
    static func parse(_ raw: [UInt8]) -> ReferenceXMLNode {
        let b = transcode(raw)
        let n = b.count
        let document = ReferenceXMLNode(name: "#document")
        document.scope = ["xml": "http://www.w3.org/XML/1998/namespace"]
        var stack = [document]

        func string(_ r: Range<Int>) -> String { String(decoding: b[r], as: UTF8.self) }
        func find(_ pattern: String, from: Int) -> Int? {
            let p = Array(pattern.utf8)
            var i = from
            while i + p.count <= n {
                if b[i] == p[0] && Array(b[i..<(i + p.count)]) == p { return i }
                i += 1
            }
            return nil
        }
        func startsWith(_ pattern: String, at i: Int) -> Bool {
            let p = Array(pattern.utf8)
            return i + p.count <= n && Array(b[i..<(i + p.count)]) == p
        }
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0C }
        func addText(_ text: String, cdata: Bool) {
            let node = ReferenceXMLNode(name: "")
            node.isText = true; node.isCDATA = cdata; node.text = text
            node.parent = stack.last!
            stack.last!.childNodes.append(node)
        }

        var i = 0
        while i < n {
            guard b[i] == UInt8(ascii: "<") else {
                var e = i
                while e < n && b[e] != UInt8(ascii: "<") { e += 1 }
                addText(decodeEntities(string(i..<e)), cdata: false)
                i = e
                continue
            }
            if startsWith("<!--", at: i) { i = find("-->", from: i + 4).map { $0 + 3 } ?? n; continue }
            if startsWith("<![CDATA[", at: i) {
                let e = find("]]>", from: i + 9) ?? n
                addText(string((i + 9)..<e), cdata: true)
                i = min(n, e + 3)
                continue
            }
            if startsWith("<?", at: i) { i = find("?>", from: i + 2).map { $0 + 2 } ?? n; continue }
            if startsWith("<!", at: i) { // DOCTYPE and friends, with an internal subset
                var j = i + 2, depth = 0
                var quote: UInt8 = 0
                while j < n {
                    let c = b[j]
                    if quote != 0 { if c == quote { quote = 0 } }
                    else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") { quote = c }
                    else if c == UInt8(ascii: "[") { depth += 1 }
                    else if c == UInt8(ascii: "]") { depth -= 1 }
                    else if c == UInt8(ascii: ">") && depth <= 0 { break }
                    j += 1
                }
                i = j + 1
                continue
            }
            if i + 1 < n && b[i + 1] == UInt8(ascii: "/") { // end tag: pop to the nearest open element of that name
                var j = i + 2
                while j < n && !isSpace(b[j]) && b[j] != UInt8(ascii: ">") { j += 1 }
                let name = string((i + 2)..<j)
                while j < n && b[j] != UInt8(ascii: ">") { j += 1 }
                i = j + 1
                if let index = stack.lastIndex(where: { $0 !== document && $0.name == name }) { stack.removeSubrange(index...) }
                continue
            }
            // start tag
            guard i + 1 < n, b[i + 1] >= 0x80 || (b[i + 1] | 0x20 >= UInt8(ascii: "a") && b[i + 1] | 0x20 <= UInt8(ascii: "z"))
                    || b[i + 1] == UInt8(ascii: "_") || b[i + 1] == UInt8(ascii: ":") else {
                addText("<", cdata: false); i += 1; continue
            }
            var j = i + 1
            while j < n && !isSpace(b[j]) && b[j] != UInt8(ascii: ">") && b[j] != UInt8(ascii: "/") { j += 1 }
            let element = ReferenceXMLNode(name: string((i + 1)..<j))
            var selfClosing = false
            while j < n {
                while j < n && isSpace(b[j]) { j += 1 }
                guard j < n else { break }
                if b[j] == UInt8(ascii: ">") { j += 1; break }
                if b[j] == UInt8(ascii: "/") {
                    if j + 1 < n && b[j + 1] == UInt8(ascii: ">") { selfClosing = true; j += 2; break }
                    j += 1; continue
                }
                let s = j
                while j < n && !isSpace(b[j]) && b[j] != UInt8(ascii: "=") && b[j] != UInt8(ascii: ">")
                        && !(b[j] == UInt8(ascii: "/") && j + 1 < n && b[j + 1] == UInt8(ascii: ">")) { j += 1 }
                if j == s { j += 1; continue }
                let attributeName = string(s..<j)
                while j < n && isSpace(b[j]) { j += 1 }
                var value = ""
                if j < n && b[j] == UInt8(ascii: "=") {
                    j += 1
                    while j < n && isSpace(b[j]) { j += 1 }
                    if j < n && (b[j] == UInt8(ascii: "\"") || b[j] == UInt8(ascii: "'")) {
                        let q = b[j]
                        var e = j + 1
                        while e < n && b[e] != q { e += 1 }
                        value = decodeEntities(string((j + 1)..<e))
                        j = min(n, e + 1)
                    } else {
                        let vs = j
                        while j < n && !isSpace(b[j]) && b[j] != UInt8(ascii: ">") { j += 1 }
                        value = decodeEntities(string(vs..<j))
                    }
                }
                if !element.attributes.contains(where: { $0.name == attributeName }) { element.attributes.append((attributeName, value)) }
            }
            i = j
            let parent = stack.last!
            element.parent = parent
            element.scope = parent.scope
            for a in element.attributes {
                if a.name == "xmlns" { element.scope[""] = a.value }
                else if a.name.hasPrefix("xmlns:") { element.scope[String(a.name.dropFirst(6))] = a.value }
            }
            let prefix = element.name.firstIndex(of: ":").map { String(element.name[..<$0]) } ?? ""
            element.namespaceURI = element.scope[prefix].flatMap { $0.isEmpty ? nil : $0 }
            parent.childNodes.append(element)
            if !selfClosing { stack.append(element) }
        }
        return document
    }

    /// UTF-8 (BOM stripped), UTF-16 with BOM, or a declared ISO-8859-1 / windows-1252 document, as UTF-8 bytes.
    private static func transcode(_ b: [UInt8]) -> [UInt8] {
        if b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF { return Array(b[3...]) }
        if b.count >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF)) {
            let little = b[0] == 0xFF
            var units: [UInt16] = []
            var k = 2
            while k + 1 < b.count {
                units.append(little ? UInt16(b[k]) | UInt16(b[k + 1]) << 8 : UInt16(b[k]) << 8 | UInt16(b[k + 1]))
                k += 2
            }
            return Array(String(decoding: units, as: UTF16.self).utf8)
        }
        if b.starts(with: Array("<?xml".utf8)), let end = b.firstIndex(of: UInt8(ascii: ">")) {
            let declaration = String(decoding: b[..<end], as: UTF8.self).lowercased()
            if declaration.contains("iso-8859-1") || declaration.contains("latin1") || declaration.contains("windows-1252") {
                return Array(String(b.map { Character(Unicode.Scalar($0)) }).utf8)
            }
        }
        return b
    }

    private static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var rest = Substring(s)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semi = after.firstIndex(of: ";"), after.distance(from: after.startIndex, to: semi) <= 10 {
                let entity = after[..<semi]
                var scalar: Unicode.Scalar?
                switch entity {
                case "amp": scalar = "&"
                case "lt": scalar = "<"
                case "gt": scalar = ">"
                case "quot": scalar = "\""
                case "apos": scalar = "'"
                case "nbsp": scalar = "\u{A0}"
                default:
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X") { scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init) }
                    else if entity.hasPrefix("#") { scalar = UInt32(entity.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init) }
                }
                if let scalar {
                    out.unicodeScalars.append(scalar)
                    rest = after[after.index(after: semi)...]
                    continue
                }
            }
            out += "&"
            rest = after
        }
        out += rest
        return out
    }
}
