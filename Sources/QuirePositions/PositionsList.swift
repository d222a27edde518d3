import Glibc
import QuireContainer
import QuireCore
import QuireDocument
import QuireXML

/// The Readium positions list and Komga's, each by its own toolkit's rules (quoted with their
/// source files in docs/position-map.md):
/// - Readium (swift-toolkit ≥ 3.4, `OPFParser` and `EPUBPositionsService`): the reading order is
///   the linear spine items, each manifest item once, a bitmap fallback standing in for its HTML;
///   the layout is the publication's; a reflowable resource gets `max(1, ceil(length / 1024))`
///   positions where length is the zip entry's stored (compressed) size, a missing one none; a
///   fixed one gets 1; totalProgression = (position − 1) / count.
/// - Komga (`EpubExtractor.computePositions`): every itemref, linear or not, whose file is in the
///   zip; uncompressed sizes; the whole book fixed or not; progressions as 32-bit floats and
///   totalProgression = position / count.
public enum PositionsConvention: String, Sendable, CaseIterable {
    case readium, komga

    public var rule: String {
        switch self {
        case .readium:
            return "linear spine items once each; max(1, ceil(compressed entry size / 1024)) per reflowable resource, 1 per fixed one; totalProgression = (position - 1) / count"
        case .komga:
            return "every spine item in the zip; max(1, ceil(uncompressed entry size / 1024)) per item, 1 when the book is fixed-layout; totalProgression = position / count (32-bit floats)"
        }
    }
}

public struct ReadiumPosition: Sendable, Hashable {
    public var position: Int
    /// The spine item whose pages hold the position.
    public var spineIndex: Int
    /// The resource as the toolkit names it (for Readium a bitmap fallback's path where one stands in).
    public var href: String
    public var mediaType: String
    public var progression: Double
    public var totalProgression: Double
}

public enum PositionsList {
    public static let bytesPerPosition = 1024.0

    public static func make(_ container: EPUBContainer, convention: PositionsConvention) -> [ReadiumPosition] {
        switch convention {
        case .readium: return number(readiumResources(container), convention: .readium)
        case .komga: return number(komgaResources(container), convention: .komga)
        }
    }

    /// Readium's position for a totalProgression it wrote: (position − 1) / count, inverted.
    public static func readiumPosition(totalProgression: Double, count: Int) -> Int {
        min(count, max(1, Int((totalProgression * Double(count) + 1e-6).rounded(.down)) + 1))
    }

    struct Resource {
        var spineIndex: Int
        var href: String
        var mediaType: String
        var count: Int
    }

    static func positions(length: Int) -> Int { max(1, Int((Double(length) / bytesPerPosition).rounded(.up))) }

    static func isBitmap(_ mediaType: String) -> Bool {
        ["image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "image/tiff", "image/avif", "image/jxl"].contains(mediaType.lowercased())
    }

    /// swift-toolkit `OPFParser.splitResourcesAndReadingOrderLinks`, `EPUBMetadataParser.layout()`
    /// and `EPUBPositionsService.computePositionsByReadingOrder`.
    static func readiumResources(_ container: EPUBContainer) -> [Resource] {
        let publication = container.publication
        var unused = Set(publication.manifest.map(\.id))
        var order: [(spineIndex: Int, item: ManifestItem)] = []
        for spineItem in publication.spine {
            guard unused.contains(spineItem.idref), spineItem.linearAttribute?.lowercased() != "no",
                var item = publication.manifest.first(where: { $0.id == spineItem.idref })
            else { continue }
            unused.remove(spineItem.idref)
            // The fallback is used up either way; a bitmap one takes an HTML item's place
            // (`resolveFallbackChain`: image-based EPUBs read as Divina).
            if let fallbackID = item.fallback, unused.contains(fallbackID),
                let fallback = publication.manifest.first(where: { $0.id == fallbackID })
            {
                unused.remove(fallbackID)
                if isBitmap(fallback.mediaType), isHTML(item.mediaType) { item = fallback }
            }
            // So is its media overlay.
            if let overlay = publication.manifest.first(where: { $0.id == spineItem.idref })?.mediaOverlay,
                publication.manifest.contains(where: { $0.id == overlay && $0.mediaType.lowercased().hasPrefix("application/smil+xml") })
            {
                unused.remove(overlay)
            }
            order.append((spineItem.index, item))
        }
        let fixed = readiumIsFixed(container, allBitmaps: !order.isEmpty && order.allSatisfy { isBitmap($0.item.mediaType) })
        return order.map { spineIndex, item in
            let href = item.path ?? item.href
            let entry = item.path.flatMap { container.archive.entry(named: $0) }
            let count: Int
            if fixed {
                count = 1
            } else if let entry {
                count = positions(length: Int(entry.compressionMethod != 0 ? entry.compressedSize : entry.uncompressedSize))
            } else {
                count = 0  // a reflowable resource missing from the container has no positions
            }
            return Resource(
                spineIndex: spineIndex, href: PercentEncoding.encodePath(href), mediaType: item.mediaType.isEmpty ? "text/html" : item.mediaType.lowercased(),
                count: count)
        }
    }

    static func isHTML(_ mediaType: String) -> Bool {
        let type = mediaType.lowercased().split(separator: ";").first.map { String($0).trimmingWhitespace() } ?? ""
        return type == "text/html" || type == "application/xhtml+xml"
    }

    /// The last `rendition:layout` meta (refining or not), else the iBooks display option, else
    /// fixed when every reading-order resource is a bitmap.
    static func readiumIsFixed(_ container: EPUBContainer, allBitmaps: Bool) -> Bool {
        switch container.publication.metadata.layoutDeclarations.last?.value.trimmingWhitespace() {
        case "pre-paginated": return true
        case "reflowable": return allBitmaps
        default: return displayOptionFixedLayout(container) || allBitmaps
        }
    }

    /// The iBooks display options (else Kobo's): `<platform name="*">` (else ipad, iphone, the
    /// first) `<option name="fixed-layout">true</option>`, compared as written.
    static func displayOptionFixedLayout(_ container: EPUBContainer) -> Bool {
        let paths = ["META-INF/com.apple.ibooks.display-options.xml", "META-INF/com.kobobooks.display-options.xml"]
        guard let path = paths.first(where: { container.archive.entry(named: $0) != nil }), let bytes = try? container.read(path: path),
            let tree = try? XMLParser.parse(bytes, path: path, mode: .recover, limits: container.archive.limits), let root = tree.root
        else { return false }
        let platforms = root.elementChildren.filter { $0.localName == "platform" }
        let platform =
            platforms.first { $0.attribute("name") == "*" } ?? platforms.first { $0.attribute("name") == "ipad" }
            ?? platforms.first { $0.attribute("name") == "iphone" } ?? platforms.first
        let option = platform?.elementChildren.first { $0.localName == "option" && $0.attribute("name") == "fixed-layout" }
        return option?.textContent == "true"
    }

    /// Komga `EpubExtractor.getResources`, `isFixedLayout` and `computePositions`, with
    /// `BookAnalyzer.analyzeEpub` dropping spine files the zip lacks.
    static func komgaResources(_ container: EPUBContainer) -> [Resource] {
        let publication = container.publication
        var order: [(spineIndex: Int, item: ManifestItem, size: Int)] = []
        for spineItem in publication.spine {
            guard let item = publication.item(for: spineItem), let path = item.path, let entry = container.archive.entry(named: path)
            else { continue }
            order.append((spineItem.index, item, Int(entry.uncompressedSize)))
        }
        let metadata = publication.metadata
        let fixed =
            metadata.layoutDeclarations.first(where: { !$0.refines })?.value.collapsingWhitespace() == "pre-paginated"
            || metadata.fixedLayoutMeta == "true" || komgaIsDivina(container)
        return order.map { spineIndex, item, size in
            Resource(spineIndex: spineIndex, href: item.path ?? item.href, mediaType: item.mediaType, count: fixed ? 1 : positions(length: size))
        }
    }

    /// Komga `EpubExtractor.getDivinaPages` (found non-empty): every spine page is a picture, or an
    /// XHTML page with at most 15 characters of text whose `img` or SVG `image` names one, and the
    /// pictures, one per page, are all in the manifest as images and in the zip.
    static func komgaIsDivina(_ container: EPUBContainer) -> Bool {
        let publication = container.publication
        let pages = publication.spine.compactMap { publication.item(for: $0) }
        let paths = Set(pages.compactMap(\.path))
        let pageCount = paths.filter { container.archive.entry(named: $0) != nil }.count
        guard pageCount > 0, pages.count == pageCount else { return false }
        var pictures: [String] = []
        for page in pages {
            guard let path = page.path else { return false }
            if page.mediaType.lowercased().hasPrefix("image") {
                pictures.append(path)
                continue
            }
            guard container.archive.entry(named: path) != nil, let document = try? ContentDocument.read(page, from: container) else {
                continue  // an unreadable page names no picture
            }
            if document.body?.collapsedTextLength(exceeds: 15) == true { return false }
            var seen = Set<String>()
            for element in document.tree.root.map({ [$0] + $0.descendants() }) ?? [] {
                let source: String?
                if element.localName == "img" {
                    source = element.attribute("src")
                } else if element.localName == "image", element.parent?.localName == "svg" {
                    source = element.attribute("href", namespace: Namespace.xlink)
                } else {
                    source = nil
                }
                guard let source, let picture = Href.resolve(source, relativeTo: path)?.path, seen.insert(picture).inserted else { continue }
                pictures.append(picture)
            }
        }
        guard pictures.count == pageCount else { return false }
        return pictures.allSatisfy { picture in
            publication.manifest.contains { $0.path == picture && $0.mediaType.hasPrefix("image/") } && container.archive.entry(named: picture) != nil
        }
    }

    static func number(_ resources: [Resource], convention: PositionsConvention) -> [ReadiumPosition] {
        let total = resources.reduce(0) { $0 + $1.count }
        var positions: [ReadiumPosition] = []
        positions.reserveCapacity(total)
        var next = 1
        for resource in resources {
            for step in 0..<resource.count {
                let progression: Double
                let totalProgression: Double
                switch convention {
                case .readium:
                    progression = Double(step) / Double(resource.count)
                    totalProgression = Double(next - 1) / Double(total)
                case .komga:
                    progression = Double(Float(step) / Float(resource.count))
                    totalProgression = Double(Float(next) / Float(total))
                }
                positions.append(
                    ReadiumPosition(
                        position: next, spineIndex: resource.spineIndex, href: resource.href, mediaType: resource.mediaType,
                        progression: progression, totalProgression: totalProgression))
                next += 1
            }
        }
        return positions
    }
}

/// KOReader's document fingerprint (`util.partialMD5`, also Komga's `KoreaderHasher`): MD5 over
/// 1 KiB samples at offset 0 and at 1024·4^i for i = 0…10, stopping at the end of the file.
public enum PartialMD5 {
    public static func of(file path: String) throws -> String {
        guard let handle = fopen(path, "rb") else { throw QuireError.cannotOpen(path: path, reason: "cannot be read") }
        defer { fclose(handle) }
        var md5 = MD5()
        var buffer = [UInt8](repeating: 0, count: 1024)
        let offsets = [0] + (0...10).map { 1024 << (2 * $0) }
        for offset in offsets {
            guard fseeko(handle, off_t(offset), SEEK_SET) == 0 else { break }
            let count = fread(&buffer, 1, 1024, handle)
            if count == 0 { break }
            md5.update(buffer.prefix(count))
        }
        return hexString(md5.finalize())
    }
}
