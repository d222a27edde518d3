import Dispatch
import QuireContainer
import QuireCore
import QuireDocument
import QuireStyle
import QuireText
import QuireXML

/// Lays out one spine item into pages.
public struct ChapterLayout: Sendable {
    public var spineIndex: Int
    public var href: String
    public var pages: [Page]
    public var textLength: Int
    public var imageCount: Int
    /// Characters drawn as .notdef because no font covers them.
    public var missingGlyphs: Int = 0
    public var spacing = SpacingStatistics()
    public var warnings: [Warning]
    /// The parsed document, for positions (CFI and XPointer paths, text excerpts).
    public var document: ContentDocument? = nil
    /// How crengine sees the document's elements, when the chapter's styles are the reference
    /// environment's (else the positions compute them apart).
    public var crengineStyles: [CrengineStyle]? = nil
    /// Images the chapter uses (archive paths, document order) and what settling did.
    public var imagePaths: [String] = []
    public var settle = SettleRecord()
    /// Measured image sizes (CSS px) by archive path.
    public var imageSizes: [String: (Double, Double)] = [:]
}

/// The whole book: chapters are independent, so they are laid out in parallel and gathered in
/// spine order (the result does not depend on the number of workers).
public final class BookLayout: @unchecked Sendable {
    public let container: EPUBContainer
    public let settings: LayoutSettings
    public let services: TextServices
    public let settleLimits: SettleLimits
    /// Measures images between layout passes; replaceable for tests.
    public let measurer: ImageMeasurer
    /// Sizes known before layout (as if every image had width/height attributes); benchmarks use it.
    public let knownImageSizes: ImageSizes
    let styleEngine: StyleEngine
    /// Stylesheets read from the archive, by path: every chapter links the same few, and each read
    /// finds and inflates the zip entry again (Moby-Dick read its two sheets 286 times).
    let stylesheets = StylesheetReads()
    /// A fixed-layout page's viewport clips what is positioned past it; a reflowable chapter
    /// gets pages enough to show it.
    let clipsToViewport: Bool

    public init(
        container: EPUBContainer, settings: LayoutSettings, fontsDirectory: String? = nil, settleLimits: SettleLimits = SettleLimits(),
        measurer: ImageMeasurer? = nil, knownImageSizes: ImageSizes = [:]
    ) throws {
        self.container = container
        self.knownImageSizes = knownImageSizes
        self.settings = settings
        self.settleLimits = settleLimits
        self.measurer = measurer ?? ArchiveImageMeasurer(container: container)
        styleEngine = StyleEngine(limits: container.archive.limits)
        clipsToViewport = false
        services = TextServices(fonts: try FontCollection(fontsDirectory: fontsDirectory))
        if settings.hyphenation, let language = container.publication.metadata.languages.first {
            Hyphenator.preloadInBackground(language)
        }
    }

    /// A layout of the same book at another geometry, sharing the text services (fixed-layout pages).
    init(container: EPUBContainer, settings: LayoutSettings, services: TextServices, settleLimits: SettleLimits, measurer: ImageMeasurer, clipsToViewport: Bool) throws {
        self.container = container
        styleEngine = StyleEngine(limits: container.archive.limits)
        self.clipsToViewport = clipsToViewport
        knownImageSizes = [:]
        self.settings = settings
        self.settleLimits = settleLimits
        self.measurer = measurer
        self.services = services
    }

    public var bookLanguage: String? { container.publication.metadata.languages.first }

    /// The resource an image reference in content shows (see `Publication.shownResource`).
    var shownResource: (String) -> String? {
        let publication = container.publication
        return { publication.shownResource($0) }
    }

    /// A face named by its source, as a cached display list names it: a font file, or a book's
    /// font by archive path. nil when it can no longer be loaded.
    public func face(source: FontFace.Source, bold: Bool, italic: Bool) -> FontFace? {
        switch source {
        case .file(let path, let index):
            return try? services.fonts.face(file: path, index: index, bold: bold, italic: italic)
        case .memory(let name, _, let index):
            guard index == 0 else { return nil }
            return services.fonts.bookFace(name: name) { [container] in try container.read(path: name) }
        }
    }

    public struct Result: Sendable {
        public var chapters: [ChapterLayout]
        public var shapingHits: Int
        public var shapingMisses: Int
        public var pageCount: Int { chapters.reduce(0) { $0 + $1.pages.count } }
        public init(chapters: [ChapterLayout], shapingHits: Int, shapingMisses: Int) {
            self.chapters = chapters
            self.shapingHits = shapingHits
            self.shapingMisses = shapingMisses
        }
        public var spacing: SpacingStatistics {
            chapters.reduce(into: SpacingStatistics()) { $0.add($1.spacing) }
        }
    }

    /// Lays out `spineIndices` (default: every spine item) with `jobs` workers.
    /// `finish` runs on the worker right after each chapter is laid out (painting it there keeps
    /// only one chapter's display lists per worker in memory); it may strip what it no longer needs.
    /// `settle` replaces `settleChapter` (a layout cache answers there).
    public func layout(
        jobs: Int, spineIndices: [Int]? = nil, buildItems: Bool = true,
        settle: (@Sendable (Int, LayoutWorker) -> ChapterLayout)? = nil, finish: (@Sendable (inout ChapterLayout) -> Void)? = nil
    ) -> Result {
        let indices = spineIndices ?? Array(container.publication.spine.indices)
        let results = LockedValue<(chapters: [ChapterLayout?], hits: Int, misses: Int)>((Array(repeating: nil, count: indices.count), 0, 0))
        let next = LockedValue(0)
        let workers = max(1, min(jobs, indices.count))
        let shaping = SharedShaping()
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            let worker = LayoutWorker(drawing: buildItems, shared: shaping)
            while true {
                let slot = next.takeNext()
                guard slot < indices.count else { break }
                var chapter = settle?(indices[slot], worker) ?? settleChapter(indices[slot], worker: worker, buildItems: buildItems)
                finish?(&chapter)
                results.withLock { $0.chapters[slot] = chapter }
            }
            results.withLock { results in
                results.hits += worker.shaper.hits
                results.misses += worker.shaper.misses
            }
        }
        return results.withLock { Result(chapters: $0.chapters.map { $0! }, shapingHits: $0.hits, shapingMisses: $0.misses) }
    }

    /// The settling pass: lay out with provisional boxes for unmeasured images, measure them
    /// (concurrently, within the time budget), lay out again, until nothing is unmeasured or the
    /// pass cap is reached. Images that cannot be measured get a fallback box and a warning.
    public func settleChapter(_ spineIndex: Int, worker: LayoutWorker, buildItems: Bool = true, fixedLayoutAsFlow: Bool = false) -> ChapterLayout {
        let spineItem = container.publication.spine[spineIndex]
        if !fixedLayoutAsFlow, let item = container.publication.item(for: spineItem), let path = item.path {
            if container.publication.isFixedPage(spineItem) {
                return fixedLayoutChapter(spineIndex, item: item, path: path, worker: worker)
            }
            // A reflowable item in a pre-paginated book is reflowable content: it is set at the
            // device's page and the reader's font size, as the W3C tests (lay-page-layout-both,
            // *-spine-overrides_*) expect, not inside the fixed pages' small frame.
        }
        // The images are found from the box tree of the provisional pass (before any line is set),
        // measured, and the chapter is laid out with their sizes; a pass repeats only if layout
        // meets an image that was not measured yet.
        var sizes: ImageSizes = [:]
        let deadline = DispatchTime.now() + settleLimits.timeBudget
        guard case .success(let prepared) = prepare(spineIndex, styles: worker.styles) else {
            return layoutChapter(spineIndex, worker: worker, buildItems: buildItems)
        }
        let discovered = imagePaths(prepared).filter { knownImageSizes[$0] == nil }
        sizes = knownImageSizes
        if !discovered.isEmpty { sizes.merge(ConcurrentMeasuring.measure(discovered, with: measurer, until: deadline)) { $1 } }
        var chapter = layoutChapter(spineIndex, worker: worker, buildItems: buildItems, imageSizes: sizes, prepared: prepared)
        var passes = 1
        while passes < settleLimits.maxPasses {
            let unmeasured = chapter.imagePaths.filter { sizes[$0] == nil }
            if unmeasured.isEmpty { break }
            sizes.merge(ConcurrentMeasuring.measure(unmeasured, with: measurer, until: deadline)) { $1 }
            chapter = layoutChapter(spineIndex, worker: worker, buildItems: buildItems, imageSizes: sizes, prepared: prepared)
            passes += 1
        }
        var record = SettleRecord(images: chapter.imagePaths.count, passes: passes)
        for path in chapter.imagePaths {
            switch sizes[path] {
            case .measured?: record.measured += 1
            case .failed(let reason)?: record.unresolved.append(.init(path: path, reason: reason))
            case nil: record.unresolved.append(.init(path: path, reason: "not measured within \(settleLimits.maxPasses) passes"))
            }
        }
        for item in record.unresolved {
            chapter.warnings.append(Warning("image", "\(chapter.href): \(item.path): \(item.reason); shown as a placeholder"))
        }
        chapter.settle = record
        for path in chapter.imagePaths {
            if case .measured(let width, let height, _)? = sizes[path] { chapter.imageSizes[path] = (width, height) }
        }
        return chapter
    }

    /// A chapter parsed and styled, ready for layout passes.
    public struct PreparedChapter: Sendable {
        public let document: ContentDocument
        public let styles: DocumentStyles
        public let warnings: [Warning]
    }

    public struct PreparationFailure: Error, Sendable {
        public let message: String
    }

    /// Parses and styles a spine item once, for every pass that follows.
    /// `styles`: the worker's styles kept from chapters it prepared before.
    public func prepare(_ spineIndex: Int, styles memo: StyleMemo? = nil) -> Swift.Result<PreparedChapter, PreparationFailure> {
        let publication = container.publication
        guard let item = publication.item(for: publication.spine[spineIndex]), let path = item.path else {
            return .failure(PreparationFailure(message: "no document"))
        }
        guard item.mediaType.contains("html") || item.mediaType.contains("xml") else {
            return .failure(PreparationFailure(message: "\(item.mediaType) is not a content document Quire can lay out, and it has no fallback that is"))
        }
        let document: ContentDocument
        do {
            document = try ContentDocument.read(item, from: container)
        } catch {
            return .failure(PreparationFailure(message: "cannot read: \(error)"))
        }
        let profile = settings.profile
        let content = settings.contentRect
        var overrides = ReaderOverrides()
        overrides.fontFamily = settings.fontFamily
        overrides.fontSizePt = settings.fontSizePt
        overrides.lineHeight = settings.lineHeight
        overrides.textAlign = settings.textAlign
        overrides.noPublisherStyles = !settings.publisherStyles
        overrides.userCSS = settings.userCSS
        let environment = StyleEnvironment(
            viewportWidth: content.width / profile.pixelsPerCSSPixel, viewportHeight: content.height / profile.pixelsPerCSSPixel,
            grayscale: false, overrides: overrides)
        let container = self.container
        let stylesheets = self.stylesheets
        let styles = styleEngine.computeStyles(
            document: document.tree, documentPath: path, environment: environment,
            loadResource: { path in stylesheets.read(path) { try? container.read(path: path) } }, memo: memo)
        return .success(PreparedChapter(document: document, styles: styles, warnings: document.warnings + styles.warnings))
    }

    /// The images a prepared chapter uses, found by building its box tree (no line layout).
    func imagePaths(_ prepared: PreparedChapter) -> [String] {
        // Most chapters have no pictures: no need to build their box tree twice.
        guard prepared.document.tree.hasElement(named: ["img", "image", "svg", "video", "object", "canvas"]) else { return [] }
        var builder = BoxTreeBuilder(document: prepared.document, styles: prepared.styles)
        builder.shownResource = shownResource
        _ = builder.build()
        return builder.imagePaths
    }

    /// One layout pass with the image sizes known so far.
    /// `buildItems: false` lays out for the position map only: same pages, no display items.
    func layoutChapter(
        _ spineIndex: Int, worker: LayoutWorker, buildItems: Bool = true, imageSizes: ImageSizes = [:], prepared: PreparedChapter? = nil
    ) -> ChapterLayout {
        let publication = container.publication
        let spineItem = publication.spine[spineIndex]
        let item = publication.item(for: spineItem)
        let href = item?.href ?? spineItem.idref
        let profile = settings.profile
        let content = settings.contentRect
        var warnings: [Warning] = []
        func blankChapter(_ reason: String?) -> ChapterLayout {
            if let reason { warnings.append(Warning("chapter", "\(href): \(reason)")) }
            let page = Page(spineIndex: spineIndex, indexInChapter: 0, width: profile.width, height: profile.height, items: [], lines: [], start: 0, end: 0)
            return ChapterLayout(spineIndex: spineIndex, href: href, pages: [page], textLength: 0, imageCount: 0, warnings: warnings)
        }
        guard let item, item.path != nil else { return blankChapter("no document") }
        let chapter: PreparedChapter
        switch prepared.map({ .success($0) }) ?? prepare(spineIndex, styles: worker.styles) {
        case .success(let value): chapter = value
        case .failure(let reason): return blankChapter(reason.message)
        }
        let document = chapter.document
        let styles = chapter.styles
        warnings += chapter.warnings
        var builder = BoxTreeBuilder(document: document, styles: styles)
        builder.shownResource = shownResource
        builder.characters = worker.characters
        builder.imageSizes = imageSizes
        let root = builder.build()
        for path in builder.unlistedImages {
            warnings.append(Warning("unlisted-resource", "\(href): \(path) is not listed in the manifest, so it is not shown"))
        }
        if builder.droppedCombiningMarks {
            warnings.append(
                Warning("combining-marks", "\(href): combining marks past \(BoxTreeBuilder.maxCombiningMarks) on one character were left out"))
        }
        if builder.flattenedDeepNesting {
            warnings.append(
                Warning("nesting-limit", "\(href): elements nested deeper than \(BoxTreeBuilder.maxNesting) are set as plain text"))
        }
        // A chapter in columns is laid out on the page turned a quarter turn (see VerticalText.swift).
        let columns = settings.writingMode == .auto && !settings.scrolled ? Self.columnMode(root, body: document.body?.id) : nil
        let frame = columns.map { VerticalFrame(content: content, leftToRight: $0 == .verticalLR) }
        let flowWidth = frame?.frameWidth ?? content.width
        let flowHeight = frame?.frameHeight ?? content.height
        let caches = InlineCaches(worker: worker)
        caches.bookFonts = bookFonts(styles.fontFaces, warnings: &warnings)
        caches.pageHeight = flowHeight
        let inline = InlineLayout(
            services: services, shaper: worker.shaper, caches: caches, buildItems: buildItems, styles: builder.styleTable, scale: profile.pixelsPerCSSPixel, bookLanguage: bookLanguage,
            hyphenate: settings.hyphenation)
        inline.vertical = frame != nil
        var blocks = BlockLayout(inline: inline, scale: profile.pixelsPerCSSPixel, pageHeight: flowHeight)
        let canvas = Self.canvasBackground(root, body: document.body?.id)
        blocks.canvasNode = canvas?.node
        blocks.documentPath = document.path
        inline.documentPath = document.path
        let flow = Flow()
        blocks.layoutRoot(root, width: flowWidth, flow: flow)
        let missing = caches.missingGlyphs.values.reduce(0, +)
        if missing > 0 {
            let sample = caches.missingGlyphs.keys.sorted().prefix(8).map { "U+" + String($0, radix: 16, uppercase: true) }
            warnings.append(Warning("missing-glyphs", "\(href): \(missing) character(s) have no glyph in any font (\(sample.joined(separator: " ")))"))
        }
        extendForLayers(flow, pageHeight: flowHeight)
        flow.resolveSpaceStarts(textLength: document.textLength)
        var ranges = Paginator.paginate(flow.slices, pageHeight: flowHeight, headers: flow.headers)
        if ranges.isEmpty { return blankChapter(nil) }
        // Scrolled flow: the whole chapter is one page (no page breaks in a scrolled document).
        if settings.scrolled, let first = ranges.first, let last = ranges.last {
            ranges = [Paginator.Cut(slices: first.slices.lowerBound...last.slices.upperBound, top: first.top, bottom: last.bottom)]
        }
        // A scrolled page is as tall as its content, with the page's margin below as above.
        let pageHeight = settings.scrolled
            ? max(profile.height, Int((content.y * 2 + (ranges[0].bottom - ranges[0].top)).rounded(.up))) : profile.height
        let layers = layerItems(flow, cuts: ranges)
        // Items go to the content box, or to the turned page's frame and from there onto the page.
        // (`dy` is the whole vertical move, origin included.)
        let origin = frame == nil ? Point(x: content.x, y: content.y) : Point(x: 0, y: 0)
        func place(_ item: DisplayItem, dy: Double) -> DisplayItem { translate(item, dx: origin.x, dy: dy) }
        func place(_ record: LineRecord, dy: Double) -> LineRecord { record.moved(dx: origin.x, dy: dy) }
        var pages: [Page] = []
        let (itemsBySlice, linesBySlice) = flow.bySlice()
        var orthogonalBySlice = [[OrthogonalBlock]](repeating: [], count: flow.slices.count)
        for block in flow.orthogonal { orthogonalBySlice[block.slice].append(block) }
        for (pageIndex, cut) in ranges.enumerated() {
            let range = cut.slices
            let (top, bottom) = (cut.top, cut.bottom)
            var items: [DisplayItem] = []
            // A table continuing from the last page repeats its header rows first (drawn only:
            // their text belongs to the page they first appear on).
            let headerHeight = Paginator.repeatedHeaderHeight(flow.slices, range.lowerBound, flow.headers)
            if headerHeight > 0 {
                let header = flow.headers[flow.slices[range.lowerBound].header]
                for slice in header.slices {
                    for item in itemsBySlice[slice] { items.append(place(item, dy: origin.y - header.top)) }
                }
            }
            let dy = origin.y + headerHeight - top
            for item in layers.below[pageIndex] { items.append(place(item, dy: dy)) }
            for span in flow.spanning where span.bottom > top && span.top < bottom {
                if let clipped = clip(span.item, top: top, bottom: bottom) { items.append(place(clipped, dy: dy)) }
            }
            var lines: [LineRecord] = []
            /// Blocks set horizontally on this page, and where their lines go among the others.
            var orthogonal: [(block: OrthogonalBlock, lineIndex: Int)] = []
            for slice in range {
                for item in itemsBySlice[slice] { items.append(place(item, dy: dy)) }
                for block in orthogonalBySlice[slice] { orthogonal.append((block, lines.count)) }
                for record in linesBySlice[slice] { lines.append(place(record, dy: dy)) }
            }
            for item in layers.above[pageIndex] { items.append(place(item, dy: dy)) }
            for record in layers.lines[pageIndex] { lines.append(place(record, dy: dy)) }
            if let frame {
                (items, lines) = frame.page(items, lines: lines)
                // Blocks set horizontally go on the turned page as they are, only moved; their
                // lines keep their place in text order.
                for (block, lineIndex) in orthogonal.reversed() {
                    let box = frame.physical(Rect(x: block.box.x + origin.x, y: block.box.y + dy, width: block.box.width, height: block.box.height))
                    items += block.items.map { translate($0, dx: box.x, dy: box.y) }
                    lines.insert(contentsOf: block.lines.map { $0.moved(dx: box.x, dy: box.y) }, at: lineIndex)
                }
            }
            let start = pageIndex == 0 ? 0 : flow.slices[range.lowerBound].start
            var page = Page(
                spineIndex: spineIndex, indexInChapter: pageIndex, width: profile.width, height: pageHeight, items: items, lines: lines, start: start,
                end: document.textLength)
            page.vertical = frame != nil
            page.columnsLeftToRight = frame?.leftToRight ?? false
            pages.append(page)
        }
        // A page holding nothing but one image (a cover, a plate) shows it centred.
        for index in pages.indices where pages[index].lines.isEmpty && pages[index].items.count == 1 && layers.above[index].isEmpty && layers.below[index].isEmpty {
            if case .image(var box, let alt) = pages[index].items[0] {
                box.rect.x = content.x + (content.width - box.rect.width) / 2
                box.rect.y = content.y + (content.height - box.rect.height) / 2
                pages[index].items[0] = .image(box, altText: alt)
            }
        }
        if let canvas {
            let page = Rect(x: 0, y: 0, width: Double(profile.width), height: Double(pageHeight))
            for index in pages.indices { pages[index].items.insert(.fill(page, canvas.color), at: 0) }
        }
        // Page starts never go backwards (a page of pictures starts where its first picture sits).
        for index in pages.indices.dropFirst() where pages[index].start < pages[index - 1].start {
            pages[index].start = pages[index - 1].start
        }
        // Pages partition the chapter's text: each ends where the next begins.
        for index in pages.indices.dropLast() {
            pages[index].end = max(pages[index].start, pages[index + 1].start)
        }
        return ChapterLayout(
            spineIndex: spineIndex, href: href, pages: pages, textLength: document.textLength, imageCount: builder.imageCount,
            missingGlyphs: missing, spacing: caches.spacing, warnings: warnings, document: document,
            crengineStyles: styles.matchesReference ? CrengineStyle.of(document.tree, styles: styles) : nil, imagePaths: builder.imagePaths)
    }

    /// The chapter's principal writing mode when it is set in columns (vertical-rl or vertical-lr),
    /// else nil: body's, as browsers take it to the viewport, else the root's.
    static func columnMode(_ root: BlockNode, body: NodeID?) -> WritingMode? {
        var mode = root.style.writingMode
        if let body {
            for case .block(let child) in root.children where child.node == body {
                mode = child.style.writingMode
                break
            }
        }
        return mode == .horizontalTB ? nil : mode
    }

    /// The background that covers the whole page: the root element's, or if that is transparent,
    /// body's (as browsers propagate it to the canvas).
    static func canvasBackground(_ root: BlockNode, body: NodeID?) -> (node: NodeID, color: Color)? {
        if let node = root.node, !root.style.backgroundColor.isTransparent { return (node, root.style.backgroundColor) }
        guard let body else { return nil }
        for case .block(let child) in root.children where child.node == body {
            return child.style.backgroundColor.isTransparent ? nil : (body, child.style.backgroundColor)
        }
        return nil
    }

    /// Faces for a chapter's @font-face rules: the first source that loads wins.
    private func bookFonts(_ rules: [FontFaceRule], warnings: inout [Warning]) -> [BookFont] {
        var fonts: [BookFont] = []
        for rule in rules {
            var loaded: FontFace?
            for source in rule.sources {
                guard case .url(let path) = source.kind else { continue }
                if let format = source.format?.lowercased(), format == "svg" || format == "embedded-opentype" {
                    continue
                }
                if let face = services.fonts.bookFace(name: path, data: { try container.read(path: path) }) {
                    loaded = face
                    break
                }
            }
            guard let face = loaded else {
                if !rule.sources.isEmpty {
                    warnings.append(Warning("font-face", "no usable source for @font-face '\(rule.family)'"))
                }
                continue
            }
            fonts.append(
                BookFont(
                    family: rule.family, bold: rule.weight.lowerBound >= 600, italic: rule.style != .normal, face: face,
                    unicodeRanges: rule.unicodeRanges))
        }
        return fonts
    }

    /// Room at the chapter's end for positioned boxes reaching past its flow, so each is on a
    /// page: in a reflowable chapter as far as they reach (at most 64 pages more), in a
    /// fixed-layout page only to the viewport's foot.
    private func extendForLayers(_ flow: Flow, pageHeight: Double) {
        guard let reach = flow.layers.map(\.bottom).max() else { return }
        flow.flushMargin()
        let end = clipsToViewport ? min(reach, pageHeight) : min(reach, flow.y + pageHeight * 64)
        guard end > flow.y + 0.5 else {
            // Nothing in the flow at all: one slice, so the layers have a page.
            if flow.slices.isEmpty { _ = flow.addSlice(height: 0, start: Flow.textAfter) }
            return
        }
        let room = end - flow.y
        flow.addSpace(room, step: max(16, room / 256))
    }

    /// The layers' display items and lines for each page: a layer slice goes to the page whose
    /// part of the flow holds its top (the first or last page when above or below them all), its
    /// backgrounds and borders to every page they cross. Drawn in `z-index` order, then document
    /// order: those below zero under the page's flow, the rest over it.
    private func layerItems(_ flow: Flow, cuts: [Paginator.Cut]) -> (below: [[DisplayItem]], above: [[DisplayItem]], lines: [[LineRecord]]) {
        var below = [[DisplayItem]](repeating: [], count: cuts.count)
        var above = below
        var lines = [[LineRecord]](repeating: [], count: cuts.count)
        func page(at y: Double) -> Int {
            var low = 0
            var high = cuts.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if cuts[middle].top <= y { low = middle } else { high = middle - 1 }
            }
            return low
        }
        let ordered = flow.layers.enumerated().sorted { ($0.element.zIndex, $0.offset) < ($1.element.zIndex, $1.offset) }.map(\.element)
        for layer in ordered {
            let (dx, dy) = (layer.dx, layer.dy)
            func add(_ item: DisplayItem, to index: Int) {
                if layer.zIndex < 0 { below[index].append(item) } else { above[index].append(item) }
            }
            for span in layer.flow.spanning {
                let (top, bottom) = (span.top + dy, span.bottom + dy)
                for (index, cut) in cuts.enumerated() where bottom > cut.top && top < cut.bottom {
                    if let clipped = clip(translate(span.item, dx: dx, dy: dy), top: cut.top, bottom: cut.bottom) { add(clipped, to: index) }
                }
            }
            for (slice, item) in layer.flow.items { add(translate(item, dx: dx, dy: dy), to: page(at: layer.flow.slices[slice].top + dy)) }
            for (slice, record) in layer.flow.lines {
                lines[page(at: layer.flow.slices[slice].top + dy)].append(record.moved(dx: dx, dy: dy))
            }
        }
        return (below, above, lines)
    }
}

/// A book's stylesheet bytes by archive path (the archive never changes while it is open), up to
/// a total size: a hostile book's huge sheets are read each time rather than kept.
final class StylesheetReads: Sendable {
    static let maxTotalBytes = 8 << 20
    private let state = LockedValue<(bytes: [String: [UInt8]?], total: Int)>(([:], 0))

    func read(_ path: String, from archive: () -> [UInt8]?) -> [UInt8]? {
        if let known = state.withLock({ $0.bytes[path] }) { return known }
        let read = archive()
        state.withLock { state in
            if state.total + (read?.count ?? 0) <= Self.maxTotalBytes {
                state.bytes[path] = read
                state.total += read?.count ?? 0
            }
        }
        return read
    }
}
