import Glibc
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import QuireXML

/// positions.json: every page tied to semantic positions (spine index + UTF-16 offset into the
/// spine item's text content), with CFIs, KOReader XPointers, Readium/Komga positions, the TOC,
/// page-list and landmarks resolved to pages. Documented in docs/position-map.md.
public enum PositionMap {
    public static let format = "quire-position-map"
    public static let version = 1
    public static let engineVersion = "0.3.0"

    public struct BookIdentity: Sendable {
        public var sha256: String
        public var partialMD5: String
        public init(sha256: String, partialMD5: String) {
            self.sha256 = sha256
            self.partialMD5 = partialMD5
        }

        public static func of(file path: String) throws -> BookIdentity {
            BookIdentity(sha256: try PositionMap.sha256(ofFile: path), partialMD5: try PartialMD5.of(file: path))
        }
    }

    /// SHA-256 of a file, streamed through a 16 KB buffer on the stack (it runs on a thread of its
    /// own beside the layout, which then needs no heap of its own).
    public static func sha256(ofFile path: String) throws -> String {
        guard let handle = fopen(path, "rb") else { throw QuireError.cannotOpen(path: path, reason: "cannot be read") }
        defer { fclose(handle) }
        var hash = SHA256()
        let failed = withUnsafeTemporaryAllocation(byteCount: 1 << 14, alignment: 16) { buffer -> Bool in
            while true {
                let count = fread(buffer.baseAddress, 1, buffer.count, handle)
                if count > 0 { hash.update(UnsafeRawBufferPointer(rebasing: buffer.prefix(count))) }
                if count < buffer.count { return ferror(handle) != 0 }
            }
        }
        if failed { throw QuireError.io("\(path): read error") }
        return hexString(hash.finalize())
    }

    public static func imageName(forPage number: Int, digits: Int) -> String {
        let text = String(number)
        return "pages/" + String(repeating: "0", count: max(0, digits - text.count)) + text + ".png"
    }

    public static func digits(forPageCount count: Int) -> Int { max(4, String(count).count) }


    /// Everything that changes pagination, and a short hash of it: maps with equal hashes paginate alike.
    public static func profileJSON(_ settings: LayoutSettings, name: String?) -> JSON {
        let members: [(String, JSON)] = [
            ("width", .int(settings.profile.width)), ("height", .int(settings.profile.height)), ("dpi", .double(settings.profile.dpi)),
            ("fontSize", .double(settings.fontSizePt)), ("margin", .double(settings.marginPixels / settings.profile.pixelsPerPoint)),
            ("lineHeight", settings.lineHeight.map(JSON.double) ?? .null), ("fontFamily", .optional(settings.fontFamily)),
            ("textAlign", .optional(settings.textAlign?.rawValue)), ("hyphenation", .bool(settings.hyphenation)),
            ("publisherStyles", .bool(settings.publisherStyles)),
            ("userCSS", settings.userCSS.map { .string(String(hexString(SHA256.hash(Array($0.utf8))).prefix(16))) } ?? .null),
        ]
        let hash = String(hexString(SHA256.hash(JSON.object(members).serializedBytes(pretty: false) + Array(engineVersion.utf8))).prefix(16))
        return .object([("name", .optional(name))] + members + [("profileHash", .string(hash))])
    }

    /// `positions` holds what each chapter's DOM gave (computed on the layout workers); a chapter
    /// missing there is read from its `document`.
    public static func json(
        layout: BookLayout, result: BookLayout.Result, identity: BookIdentity, profileName: String?, withImages: Bool,
        extraWarnings: [Warning] = [], positions: [Int: ChapterPositions] = [:]
    ) -> JSON {
        MapBuilder(layout: layout, result: result, identity: identity, positions: positions)
            .json(profileName: profileName, withImages: withImages, extraWarnings: extraWarnings)
    }
}

/// Builds the map from a finished layout.
struct MapBuilder {
    let layout: BookLayout
    let result: BookLayout.Result
    let identity: PositionMap.BookIdentity
    let container: EPUBContainer
    let publication: Publication
    let spineStep: Int
    /// What each laid-out chapter's DOM gave, by spine index.
    let anchors: [Int: ChapterPositions]
    let chapterBySpine: [Int: ChapterLayout]
    let firstPage: [Int: Int]
    let charsBefore: [Int: Int]
    let totalChars: Int

    init(layout: BookLayout, result: BookLayout.Result, identity: PositionMap.BookIdentity, positions: [Int: ChapterPositions]) {
        self.layout = layout
        self.result = result
        self.identity = identity
        container = layout.container
        publication = layout.container.publication
        spineStep = layout.container.publication.spineStep
        var anchors = positions
        let unread = result.chapters.contains { anchors[$0.spineIndex] == nil && $0.document != nil }
        let targets = unread ? ChapterPositions.Targets(publication) : nil
        var chapters: [Int: ChapterLayout] = [:]
        var first: [Int: Int] = [:]
        var before: [Int: Int] = [:]
        var page = 1
        var chars = 0
        for chapter in result.chapters {
            if let targets, anchors[chapter.spineIndex] == nil {
                anchors[chapter.spineIndex] = ChapterPositions(chapter: chapter, publication: publication, spineStep: spineStep, targets: targets)
            }
            chapters[chapter.spineIndex] = chapter
            first[chapter.spineIndex] = page
            before[chapter.spineIndex] = chars
            page += chapter.pages.count
            chars += chapter.textLength
        }
        self.anchors = anchors
        chapterBySpine = chapters
        firstPage = first
        charsBefore = before
        totalChars = chars
    }

    /// The 1-based page holding a position: the last page of the chapter starting at or before it.
    func page(of position: Position) -> Int? {
        guard let chapter = chapterBySpine[position.spineIndex], let first = firstPage[position.spineIndex] else { return nil }
        guard position.offset >= 0, position.offset <= max(chapter.textLength, 0) else { return nil }
        var low = 0
        var high = chapter.pages.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if chapter.pages[middle].start <= position.offset { low = middle } else { high = middle - 1 }
        }
        return first + low
    }

    /// A page boundary's views: offsets and progressions, with its CFI and XPointer.
    func view(_ position: Position, _ views: ChapterPositions.Views?) -> JSON {
        let length = chapterBySpine[position.spineIndex]?.textLength ?? 0
        return .object([
            ("offset", .int(position.offset)),
            ("progression", .double(length == 0 ? 0 : Double(position.offset) / Double(length))),
            ("totalProgression", .double(totalChars == 0 ? 0 : Double((charsBefore[position.spineIndex] ?? 0) + position.offset) / Double(totalChars))),
            ("cfi", views.map { .string($0.cfi) } ?? .null),
            ("xpointer", views.map { .string($0.xpointer) } ?? .null),
        ])
    }

    /// A navigation target (path + fragment) as a position; nil when it cannot be resolved.
    func position(of target: ResourceRef?) -> Position? {
        guard let target else { return nil }
        // A full CFI (`package.opf#epubcfi(/6/4[id]!/4/2/1:10)`) names its spine item itself.
        if let fragment = target.fragment, fragment.hasPrefix("epubcfi("), fragment.contains("!") {
            guard let path = try? CFI.parse(fragment),
                let spineIndex = try? CFI.spineIndex(of: path, spineStep: spineStep, itemrefIDs: publication.spine.map(\.id)),
                let offset = anchors[spineIndex]?.cfiTargets[fragment]
            else { return nil }
            return Position(spineIndex: spineIndex, offset: offset)
        }
        guard let spineIndex = publication.spineIndex(path: target.path) else { return nil }
        guard let fragment = target.fragment, !fragment.isEmpty else { return Position(spineIndex: spineIndex, offset: 0) }
        guard let anchors = anchors[spineIndex] else { return nil }
        let offset = fragment.hasPrefix("epubcfi(") ? anchors.cfiTargets[fragment] : anchors.ids[fragment]
        return offset.map { Position(spineIndex: spineIndex, offset: $0) }
    }

    func navigation(_ points: [NavPoint], level: Int, kind: String, warnings: inout [Warning]) -> [JSON] {
        points.map { point in
            let position = position(of: point.target)
            let page = position.flatMap(page(of:))
            if page == nil, point.target != nil {
                warnings.append(Warning("unresolved-\(kind)", "\(kind) entry '\(point.title)' (\(point.href ?? "")) does not resolve to a page"))
            }
            return .object([
                ("title", .string(point.title)), ("href", .optional(point.href)), ("path", .optional(point.target?.path)),
                ("fragment", .optional(point.target?.fragment)), ("type", .optional(point.type)),
                ("page", page.map { .int($0) } ?? .null), ("offset", position.map { .int($0.offset) } ?? .null), ("level", .int(level)),
                ("children", .array(navigation(point.children, level: level + 1, kind: kind, warnings: &warnings))),
            ])
        }
    }

    /// Print page labels: page-list entries first, then `epub:type="pagebreak"` markers in the text.
    func pageLabels(warnings: inout [Warning]) -> [Int: [String]] {
        var labels: [Int: [String]] = [:]
        var seen = Set<Int>()
        func add(_ label: String, _ position: Position) {
            guard let page = page(of: position) else { return }
            if labels[page, default: []].contains(label) { return }
            labels[page, default: []].append(label)
            seen.insert(page)
        }
        func flatten(_ points: [NavPoint]) -> [NavPoint] { points.flatMap { [$0] + flatten($0.children) } }
        for point in flatten(publication.navigation.pageList) {
            if let position = position(of: point.target) { add(point.title, position) }
        }
        if publication.navigation.pageList.isEmpty {
            for (spineIndex, anchors) in anchors.sorted(by: { $0.key < $1.key }) {
                for marker in anchors.pagebreaks { add(marker.label, Position(spineIndex: spineIndex, offset: marker.offset)) }
            }
        }
        return labels
    }

    func positions(_ convention: PositionsConvention) -> JSON {
        let list = PositionsList.make(container, convention: convention)
        return .object([
            ("rule", .string(convention.rule)), ("count", .int(list.count)),
            (
                "list",
                .array(
                    list.map { position in
                        let length = chapterBySpine[position.spineIndex]?.textLength ?? 0
                        let offset = Int((position.progression * Double(length)).rounded(.down))
                        let page = page(of: Position(spineIndex: position.spineIndex, offset: offset))
                        return .object([
                            ("position", .int(position.position)), ("href", .string(position.href)),
                            ("progression", .double(position.progression)), ("totalProgression", .double(position.totalProgression)),
                            ("page", page.map { .int($0) } ?? .null),
                        ])
                    })
            ),
        ])
    }

    func json(profileName: String?, withImages: Bool, extraWarnings: [Warning]) -> JSON {
        let settings = layout.settings
        let total = result.pageCount
        let digits = PositionMap.digits(forPageCount: total)
        var warnings: [Warning] = publication.warnings + extraWarnings
        for chapter in result.chapters { warnings += chapter.warnings }
        let labels = pageLabels(warnings: &warnings)
        var spine: [JSON] = []
        var pages: [JSON] = []
        var pageNumber = 1
        var settle: [JSON] = []
        for chapter in result.chapters {
            let spineItem = publication.spine[chapter.spineIndex]
            let item = publication.item(for: spineItem)
            spine.append(
                .object([
                    ("index", .int(chapter.spineIndex)), ("href", .string(chapter.href)), ("path", .optional(item?.path)),
                    ("mediaType", .optional(item?.mediaType)), ("linear", .bool(spineItem.linear)),
                    ("itemref", .optional(spineItem.id)), ("layout", .string(spineItem.layout.rawValue)),
                    ("firstPage", .int(pageNumber)), ("pageCount", .int(chapter.pages.count)), ("length", .int(chapter.textLength)),
                ]))
            settle.append(
                .object([
                    ("spineIndex", .int(chapter.spineIndex)), ("images", .int(chapter.settle.images)),
                    ("measured", .int(chapter.settle.measured)), ("passes", .int(chapter.settle.passes)),
                    (
                        "unresolved",
                        .array(chapter.settle.unresolved.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })
                    ),
                ]))
            let anchors = anchors[chapter.spineIndex]
            for (index, page) in chapter.pages.enumerated() {
                let start = Position(spineIndex: chapter.spineIndex, offset: page.start)
                let end = Position(spineIndex: chapter.spineIndex, offset: page.end)
                var members: [(String, JSON)] = [
                    ("page", .int(pageNumber)),
                    ("image", withImages ? .string(PositionMap.imageName(forPage: pageNumber, digits: digits)) : .null),
                    ("spineIndex", .int(chapter.spineIndex)), ("href", .string(chapter.href)), ("path", .optional(item?.path)),
                    ("start", view(start, anchors?.starts[index])), ("end", view(end, anchors?.ends[index])),
                    ("label", labels[pageNumber].map { .string($0.joined(separator: ", ")) } ?? .null),
                ]
                if let excerpt = anchors?.excerpts[index] {
                    members.append(("text", .object([("before", .string(excerpt.before)), ("highlight", .string(excerpt.highlight)), ("after", .string(excerpt.after))])))
                }
                if let spread = spineItem.pageSpread { members.append(("spread", .string(spread))) }
                pages.append(.object(members))
                pageNumber += 1
            }
        }
        let navigation = publication.navigation
        var pageList: [JSON] = []
        for (page, pageLabels) in labels.sorted(by: { $0.key < $1.key }) {
            for label in pageLabels { pageList.append(.object([("label", .string(label)), ("page", .int(page))])) }
        }
        let toc = self.navigation(navigation.toc, level: 1, kind: "toc", warnings: &warnings)
        let landmarks = self.navigation(navigation.landmarks, level: 1, kind: "landmark", warnings: &warnings)
        let metadata = publication.metadata
        return .object([
            ("format", .string(PositionMap.format)), ("version", .int(PositionMap.version)),
            ("engine", .object([("name", .string("quire")), ("version", .string(PositionMap.engineVersion))])),
            (
                "book",
                .object([
                    ("title", .optional(metadata.title)), ("identifier", .optional(metadata.uniqueIdentifier)),
                    ("language", .optional(metadata.languages.first)), ("mediaType", .string(EPUBContainer.epubMediaType)),
                    ("sha256", .string(identity.sha256)), ("partialMD5", .string(identity.partialMD5)),
                    ("layout", .string(metadata.layout.rawValue)), ("pageProgression", .string(publication.pageProgression.rawValue)),
                    ("spineStep", .int(spineStep)),
                ])
            ),
            ("profile", PositionMap.profileJSON(settings, name: profileName)),
            ("pageCount", .int(total)),
            ("length", .int(totalChars)),
            ("spine", .array(spine)),
            ("pages", .array(pages)),
            ("toc", .array(toc)),
            ("pageList", .array(pageList)),
            ("landmarks", .array(landmarks)),
            ("positions", .object([("readium", positions(.readium)), ("komga", positions(.komga))])),
            ("settle", .array(settle)),
            ("warnings", .array(warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })),
        ])
    }
}
