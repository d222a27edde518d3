import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import QuireXML

/// What the position map needs from one chapter's DOM: each page boundary as a CFI and an
/// XPointer, a text excerpt at each page start, element ids and print page markers as offsets,
/// and the CFI targets of the book's navigation. It is computed on the chapter's layout worker,
/// so the DOM can go as soon as the chapter is laid out.
public struct ChapterPositions: Sendable {
    public struct Views: Sendable {
        public var cfi: String
        public var xpointer: String
    }

    public typealias Excerpt = PositionMap.TextContext

    public var starts: [Views] = []
    public var ends: [Views] = []
    public var excerpts: [Excerpt] = []
    /// Element id → text offset, for the ids the navigation points to.
    public var ids: [String: Int] = [:]
    /// `epub:type="pagebreak"` (or `role="doc-pagebreak"`) markers: label and text offset.
    public var pagebreaks: [(label: String, offset: Int)] = []
    /// Navigation targets given as CFIs that point into this chapter: fragment → text offset.
    public var cfiTargets: [String: Int] = [:]

    /// The navigation's targets (TOC, page-list, landmarks), gathered once per book.
    public struct Targets: Sendable {
        /// Fragments (element ids and CFIs) by the path they point into.
        var fragments: [String: Set<String>] = [:]
        /// Full CFIs, which name their spine item themselves.
        var fullCFIs: Set<String> = []
        /// Pagebreak markers are read only when the book has no page-list.
        var readsPagebreaks: Bool

        public init(_ publication: Publication) {
            let navigation = publication.navigation
            func flatten(_ points: [NavPoint]) -> [NavPoint] { points.flatMap { [$0] + flatten($0.children) } }
            for point in flatten(navigation.toc) + flatten(navigation.pageList) + flatten(navigation.landmarks) {
                guard let target = point.target, let fragment = target.fragment, !fragment.isEmpty else { continue }
                if fragment.hasPrefix("epubcfi("), fragment.contains("!") {
                    fullCFIs.insert(fragment)
                } else {
                    fragments[target.path, default: []].insert(fragment)
                }
            }
            readsPagebreaks = navigation.pageList.isEmpty
        }
    }

    /// Nil for a chapter without a DOM (a picture as a spine item).
    public init?(chapter: ChapterLayout, container: EPUBContainer, targets: Targets) {
        guard let document = chapter.document else { return nil }
        let publication = container.publication
        let spineStep = publication.spineStep
        let text = DocumentText(document)
        let model = CrengineText(text, styles: chapter.crengineStyles ?? CrengineStyle.of(document, container: container))
        let spineIndex = chapter.spineIndex
        let itemref = publication.spine[spineIndex].id
        func views(_ offset: Int) -> Views {
            Views(
                cfi: CFI.make(spineStep: spineStep, spineIndex: spineIndex, itemrefID: itemref, text: text, offset: offset),
                xpointer: XPointer.make(
                    spineIndex: spineIndex, fragmentCount: publication.spine.count, text: text, model: model, offset: offset))
        }
        for page in chapter.pages {
            starts.append(views(page.start))
            ends.append(views(page.end))
            let excerpt = text.excerpt(at: page.start)
            excerpts.append(Excerpt(before: excerpt.before, highlight: excerpt.highlight, after: excerpt.after))
        }
        let path = publication.item(for: publication.spine[spineIndex])?.path ?? ""
        for fragment in targets.fragments[path] ?? [] {
            if fragment.hasPrefix("epubcfi(") {
                if let cfi = try? CFI.parse(fragment), let offset = try? CFI.offset(of: cfi, in: text) { cfiTargets[fragment] = offset }
            } else if let node = document.ids[fragment] {
                ids[fragment] = document.textOffset(atElement: node)
            }
        }
        for fragment in targets.fullCFIs {
            guard let cfi = try? CFI.parse(fragment),
                (try? CFI.spineIndex(of: cfi, spineStep: spineStep, itemrefIDs: publication.spine.map(\.id))) == spineIndex,
                let offset = try? CFI.offset(of: cfi, in: text)
            else { continue }
            cfiTargets[fragment] = offset
        }
        if targets.readsPagebreaks, let body = document.body {
            for element in body.descendants() {
                let type = element.attribute("type", namespace: Namespace.ops) ?? ""
                guard type.containsWhitespaceToken("pagebreak") || element.attribute("role") == "doc-pagebreak" else { continue }
                let label = element.attribute("title") ?? element.attribute("aria-label") ?? element.textContent.collapsingWhitespace()
                guard !label.isEmpty else { continue }
                pagebreaks.append((label, document.textOffset(atElement: element.id)))
            }
        }
    }
}

// The layout cache keeps a chapter's positions beside its pages (QuireCore's ByteWriter), so a
// cached chapter needs neither layout nor its document parsed again.
extension ChapterPositions {
    public func encode(into writer: inout ByteWriter) {
        for list in [starts, ends] {
            writer.count(list.count)
            for views in list {
                writer.string(views.cfi)
                writer.string(views.xpointer)
            }
        }
        writer.count(excerpts.count)
        for excerpt in excerpts {
            writer.string(excerpt.before)
            writer.string(excerpt.highlight)
            writer.string(excerpt.after)
        }
        writer.count(pagebreaks.count)
        for marker in pagebreaks {
            writer.string(marker.label)
            writer.int(marker.offset)
        }
        for offsets in [ids, cfiTargets] {
            writer.count(offsets.count)
            for (name, offset) in offsets.sorted(by: { $0.key < $1.key }) {
                writer.string(name)
                writer.int(offset)
            }
        }
    }

    public init(decoding reader: inout ByteReader) throws(ByteReader.Damaged) {
        func views() throws(ByteReader.Damaged) -> [Views] {
            try (0..<reader.count(itemSize: 2)).map { _ throws(ByteReader.Damaged) in Views(cfi: try reader.string(), xpointer: try reader.string()) }
        }
        func offsets() throws(ByteReader.Damaged) -> [String: Int] {
            var offsets: [String: Int] = [:]
            for _ in 0..<(try reader.count(itemSize: 2)) { offsets[try reader.string()] = try reader.int() }
            return offsets
        }
        starts = try views()
        ends = try views()
        for _ in 0..<(try reader.count(itemSize: 3)) {
            excerpts.append(Excerpt(before: try reader.string(), highlight: try reader.string(), after: try reader.string()))
        }
        for _ in 0..<(try reader.count(itemSize: 2)) { pagebreaks.append((label: try reader.string(), offset: try reader.int())) }
        ids = try offsets()
        cfiTargets = try offsets()
    }
}
