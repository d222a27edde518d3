import Glibc
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout
import QuireXML

/// positions.json: every page tied to semantic positions (spine index + UTF-16 offset into the
/// spine item's text content), with CFIs, KOReader XPointers, Readium/Komga positions, the TOC,
/// page-list and landmarks resolved to pages. Documented in docs/position-map.md.
public struct PositionMap: Sendable, Equatable {
    public static let format = "quire-position-map"
    public static let version = 1
    /// Changes whenever the same book and settings can give different pages, so batch outputs,
    /// layout-cache entries and profile hashes made by an older engine are redone, never reused.
    public static let engineVersion = "0.8.0"

    public var version: Int
    public var engine: Engine
    public var book: BookEntry
    public var profile: Profile
    public var pageCount: Int
    /// The book's text length in UTF-16 units (EPUB).
    public var length: Int?
    /// The spine items and their pages (EPUB).
    public var spine: [SpineEntry]?
    public var pages: [Page]
    /// The TOC (EPUB) or the outline (PDF), resolved to pages.
    public var toc: [NavigationEntry]
    /// Print page labels (EPUB).
    public var pageList: [PageLabel]?
    public var landmarks: [NavigationEntry]?
    /// The Readium and Komga positions lists (EPUB).
    public var positions: [PositionsConvention: PositionsEntry]?
    public var settle: [SettleEntry]?
    /// Paginated or scrolled (EPUB, `quire render`): what was done with reflowable items, and why.
    public var flow: FlowEntry? = nil
    /// Synthetic spreads (EPUB): whether pages were paired, why, and the pairs.
    public var spreads: Spreads? = nil
    public var warnings: [Warning]

    public init(
        engine: Engine = Engine(name: "quire", version: PositionMap.engineVersion), book: BookEntry, profile: Profile, pageCount: Int,
        length: Int? = nil, spine: [SpineEntry]? = nil, pages: [Page], toc: [NavigationEntry], pageList: [PageLabel]? = nil,
        landmarks: [NavigationEntry]? = nil, positions: [PositionsConvention: PositionsEntry]? = nil, settle: [SettleEntry]? = nil,
        warnings: [Warning]
    ) {
        version = PositionMap.version
        self.engine = engine
        self.book = book
        self.profile = profile
        self.pageCount = pageCount
        self.length = length
        self.spine = spine
        self.pages = pages
        self.toc = toc
        self.pageList = pageList
        self.landmarks = landmarks
        self.positions = positions
        self.settle = settle
        self.warnings = warnings
    }

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

    /// `pages/0001.png`; a tall scrolled page's further tiles are `pages/0001-2.png` and on.
    public static func imageName(forPage number: Int, digits: Int, tile: Int = 0) -> String {
        let text = String(number)
        return "pages/" + String(repeating: "0", count: max(0, digits - text.count)) + text + (tile == 0 ? "" : "-\(tile + 1)") + ".png"
    }

    public static func digits(forPageCount count: Int) -> Int { max(4, String(count).count) }


    /// Everything that changes pagination, and a short hash of it: maps with equal hashes paginate alike.
    public static func profile(_ settings: LayoutSettings, name: String?) -> ReflowableProfile {
        var profile = ReflowableProfile(
            name: name, width: settings.profile.width, height: settings.profile.height, dpi: settings.profile.dpi,
            fontSize: settings.fontSizePt, margin: settings.marginPixels / settings.profile.pixelsPerPoint, lineHeight: settings.lineHeight,
            fontFamily: settings.fontFamily, textAlign: settings.textAlign?.rawValue, hyphenation: settings.hyphenation,
            publisherStyles: settings.publisherStyles,
            userCSS: settings.userCSS.map { String(hexString(SHA256.hash(Array($0.utf8))).prefix(16)) }, profileHash: "")
        if settings.scrolled { profile.flow = "scrolled" }
        if settings.writingMode != .auto { profile.writingMode = settings.writingMode.rawValue }
        // The hash covers every member but the name, as they are written.
        guard case .object(let members) = Profile.reflowable(profile).json else { return profile }
        let hashed = JSON.object(Array(members.dropFirst().dropLast()))
        profile.profileHash = String(hexString(SHA256.hash(hashed.serializedBytes(pretty: false) + Array(engineVersion.utf8))).prefix(16))
        return profile
    }

    /// `positions` holds what each chapter's DOM gave (computed on the layout workers); a chapter
    /// missing there is read from its `document`.
    public init(
        layout: BookLayout, result: BookLayout.Result, identity: BookIdentity, profileName: String?, withImages: Bool,
        extraWarnings: [Warning] = [], positions: [Int: ChapterPositions] = [:], spreads: SpreadPlan? = nil, flow: FlowPlan? = nil
    ) {
        self = MapBuilder(layout: layout, result: result, identity: identity, positions: positions)
            .map(profileName: profileName, withImages: withImages, extraWarnings: extraWarnings, spreads: spreads)
        if let flow { self.flow = FlowEntry(plan: flow) }
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
                anchors[chapter.spineIndex] = ChapterPositions(chapter: chapter, container: container, targets: targets)
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
    func view(_ position: Position, _ views: ChapterPositions.Views?) -> PositionMap.Boundary {
        let length = chapterBySpine[position.spineIndex]?.textLength ?? 0
        return PositionMap.Boundary(
            offset: position.offset, progression: length == 0 ? 0 : Double(position.offset) / Double(length),
            totalProgression: totalChars == 0 ? 0 : Double((charsBefore[position.spineIndex] ?? 0) + position.offset) / Double(totalChars),
            cfi: views?.cfi, xpointer: views?.xpointer)
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

    func navigation(_ points: [NavPoint], level: Int, kind: String, warnings: inout [Warning]) -> [PositionMap.NavigationEntry] {
        points.map { point in
            let position = position(of: point.target)
            let page = position.flatMap(page(of:))
            if page == nil, point.target != nil {
                warnings.append(Warning("unresolved-\(kind)", "\(kind) entry '\(point.title)' (\(point.href ?? "")) does not resolve to a page"))
            }
            return PositionMap.NavigationEntry(
                title: point.title, href: point.href, path: point.target?.path, fragment: point.target?.fragment, type: point.type, page: page,
                offset: position?.offset, level: level, children: navigation(point.children, level: level + 1, kind: kind, warnings: &warnings))
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

    func positions(_ convention: PositionsConvention) -> PositionMap.PositionsEntry {
        let list = PositionsList.make(container, convention: convention)
        return PositionMap.PositionsEntry(
            rule: convention.rule,
            list: list.map { position in
                let length = chapterBySpine[position.spineIndex]?.textLength ?? 0
                let offset = Int((position.progression * Double(length)).rounded(.down))
                return PositionMap.PositionsEntry.Item(
                    position: position.position, href: position.href, type: position.mediaType, progression: position.progression,
                    totalProgression: position.totalProgression, page: page(of: Position(spineIndex: position.spineIndex, offset: offset)))
            })
    }

    func map(profileName: String?, withImages: Bool, extraWarnings: [Warning], spreads plan: SpreadPlan? = nil) -> PositionMap {
        let settings = layout.settings
        let total = result.pageCount
        let digits = PositionMap.digits(forPageCount: total)
        var warnings: [Warning] = publication.warnings + extraWarnings
        for chapter in result.chapters { warnings += chapter.warnings }
        let labels = pageLabels(warnings: &warnings)
        var spine: [PositionMap.SpineEntry] = []
        var pages: [PositionMap.Page] = []
        var pageNumber = 1
        var settle: [PositionMap.SettleEntry] = []
        var spreadFacts: [SpreadPairing.PageFacts] = []
        for chapter in result.chapters {
            let spineItem = publication.spine[chapter.spineIndex]
            let item = publication.item(for: spineItem)
            spine.append(
                PositionMap.SpineEntry(
                    index: chapter.spineIndex, href: chapter.href, path: item?.path, mediaType: item?.mediaType, linear: spineItem.linear,
                    itemref: spineItem.id, layout: spineItem.layout.rawValue, firstPage: pageNumber, pageCount: chapter.pages.count,
                    length: chapter.textLength))
            settle.append(
                PositionMap.SettleEntry(
                    spineIndex: chapter.spineIndex, images: chapter.settle.images, measured: chapter.settle.measured,
                    passes: chapter.settle.passes, unresolved: chapter.settle.unresolved))
            let anchors = anchors[chapter.spineIndex]
            // Laid out as one fixed page (pre-paginated, an SVG or a picture in the spine).
            let isFixed = publication.isFixedPage(spineItem)
            for (index, page) in chapter.pages.enumerated() {
                // An item's page-spread property places its first page; the rest follow on.
                let spread = index == 0 ? spineItem.pageSpread : nil
                spreadFacts.append(.init(property: spread, startsReflowableItem: index == 0 && !isFixed))
                let start = Position(spineIndex: chapter.spineIndex, offset: page.start)
                let end = Position(spineIndex: chapter.spineIndex, offset: page.end)
                var text = PositionMap.TextPage(
                    spineIndex: chapter.spineIndex, href: chapter.href, path: item?.path, start: view(start, anchors?.starts[index]),
                    end: view(end, anchors?.ends[index]), excerpt: anchors?.excerpts[index], spread: spread)
                if settings.scrolled, !isFixed { text.scroll = PositionMap.ScrollPage(page, number: pageNumber, digits: digits, withImages: withImages) }
                pages.append(
                    PositionMap.Page(
                        page: pageNumber, image: withImages ? PositionMap.imageName(forPage: pageNumber, digits: digits) : nil,
                        label: labels[pageNumber].map { $0.joined(separator: ", ") }, content: .text(text)))
                pageNumber += 1
            }
        }
        let navigation = publication.navigation
        var pageList: [PositionMap.PageLabel] = []
        for (page, pageLabels) in labels.sorted(by: { $0.key < $1.key }) {
            for label in pageLabels { pageList.append(PositionMap.PageLabel(label: label, page: page)) }
        }
        let toc = self.navigation(navigation.toc, level: 1, kind: "toc", warnings: &warnings)
        let landmarks = self.navigation(navigation.landmarks, level: 1, kind: "landmark", warnings: &warnings)
        let metadata = publication.metadata
        // A book set in columns from the right (its first chapter with text is) turns its pages
        // right to left when its spine does not say otherwise, as a vertical-rl document's pages
        // follow; vertical-lr columns, from the left, keep left to right.
        var readingProgression = publication.readingProgression
        if publication.pageProgression == .auto, let first = result.chapters.first(where: { $0.textLength > 0 })?.pages.first,
            first.vertical, !first.columnsLeftToRight
        {
            readingProgression = .rtl
        }
        let book = PositionMap.BookEntry(
            title: metadata.title, identifier: metadata.uniqueIdentifier, language: metadata.languages.first,
            mediaType: EPUBContainer.epubMediaType, sha256: identity.sha256, partialMD5: identity.partialMD5, layout: metadata.layout.rawValue,
            pageProgression: publication.pageProgression.rawValue,
            readingProgression: readingProgression.rawValue, spineStep: spineStep)
        var map = PositionMap(
            book: book, profile: .reflowable(PositionMap.profile(settings, name: profileName)), pageCount: total, length: totalChars,
            spine: spine, pages: pages, toc: toc, pageList: pageList, landmarks: landmarks,
            positions: [.readium: positions(.readium), .komga: positions(.komga)], settle: settle, warnings: warnings)
        if let plan {
            let pairs = plan.active ? SpreadPairing.pair(spreadFacts, rightToLeft: readingProgression == .rtl) : []
            map.spreads = PositionMap.Spreads(plan: plan, spreads: pairs, withImages: withImages)
        }
        return map
    }
}
