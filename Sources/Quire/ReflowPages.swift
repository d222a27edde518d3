import Dispatch
import QuireContainer
import QuireCore
import QuireDocument
import QuireImages
import QuireLayout
import QuireLayoutCache
import QuirePaint
import QuirePositions
import QuirePreparation
import QuireText

/// An EPUB's pagination: chapters settled on demand, a window of them kept with display lists.
final class ReflowPages: Sendable {
    let container: EPUBContainer
    let layout: BookLayout
    /// The settings pages are laid out with: the page box turned and halved by `spreadPlan`.
    let settings: PaginationSettings
    /// How pages are arranged on the device (nil: one page at a time, as given).
    let spreadPlan: SpreadPlan?
    /// Paginated or scrolled reflowable items (nil: paginated, as given).
    let flowPlan: FlowPlan?
    private let state = LockedValue(State())
    /// The book: its DOM-side lookups (CFI, XPointer, ids) and its hashes.
    private let book: Book
    let shaping = SharedShaping()
    /// The navigation's targets, gathered once for every chapter's positions.
    private let targets: ChapterPositions.Targets
    /// The layout settings' hash and the other settings a cached chapter depends on, for layout cache keys.
    private let layoutHash: String
    private let cacheSettings: String

    /// What is kept of a settled chapter for every later question: its pages without display
    /// items (starts, ends, warnings, settling) and its positions (CFIs, XPointers, excerpts, ids).
    struct Summary: Sendable {
        var layout: ChapterLayout
        var positions: ChapterPositions?
    }

    struct State {
        /// Settled chapters with their display lists (the window).
        var held: [Int: ChapterLayout] = [:]
        /// Chapters being laid out with display lists (counted in the window).
        var drawing: Set<Int> = []
        /// Chapters being laid out for their summary only.
        var counting: Set<Int> = []
        var summaries: [Int: Summary] = [:]
        /// The chapter the reader is on: the window keeps it and its neighbours.
        var current = 0
        var peak = 0
        var imageWarnings: [Int: [String]] = [:]
        var shapingHits = 0
        var shapingMisses = 0
        var chaptersLaidOut = 0
        var chaptersFromCache = 0

        var laidOut: Int { held.count + drawing.count }
        mutating func notePeak() { peak = max(peak, laidOut) }
    }

    init(book: Book, container: EPUBContainer, settings: PaginationSettings) throws {
        self.book = book
        self.container = container
        targets = ChapterPositions.Targets(container.publication)
        var settings = settings
        if let mode = settings.flow {
            let plan = FlowPlan(mode: mode, declared: container.publication.metadata.flow)
            settings.layout.scrolled = plan.scrolled
            flowPlan = plan
        } else {
            flowPlan = nil
        }
        if let mode = settings.spreads {
            // The book's orientation turns the device page, and with spreads each page is half of it.
            let profile = settings.layout.profile
            let metadata = container.publication.metadata
            let plan = SpreadPlan(
                mode: mode, width: profile.width, height: profile.height, orientation: metadata.orientation, spread: metadata.spread,
                scrolled: settings.layout.scrolled)
            settings.layout.profile.width = plan.pageWidth
            settings.layout.profile.height = plan.deviceHeight
            spreadPlan = plan
        } else {
            spreadPlan = nil
        }
        self.settings = settings
        layoutHash = PositionMap.profile(settings.layout, name: nil).profileHash
        cacheSettings = Self.cacheSettings(settings)
        layout = try BookLayout(
            container: container, settings: settings.layout, settleLimits: settings.settleLimits, measurer: settings.imageMeasurer,
            knownImageSizes: settings.knownImageSizes)
    }

    var publication: Publication { container.publication }
    var spineCount: Int { publication.spine.count }

    var laidOutChapters: (now: Int, peak: Int) { state.withLock { ($0.laidOut, $0.peak) } }

    var chapterCounts: (laidOut: Int, fromCache: Int) { state.withLock { ($0.chaptersLaidOut, $0.chaptersFromCache) } }

    func isDrawn(_ spineIndex: Int) -> Bool { state.withLock { $0.held[spineIndex] != nil } }

    func checked(_ spineIndex: Int) throws -> Int {
        guard spineIndex >= 0, spineIndex < spineCount else {
            throw QuireError.unresolvable("spine item \(spineIndex + 1) is outside the book's \(spineCount)")
        }
        return spineIndex
    }

    func isSettled(_ spineIndex: Int) -> Bool { state.withLock { $0.summaries[spineIndex] != nil } }

    // MARK: Laying out

    /// A settled chapter's summary: from memory, else waiting for a layout in progress, else
    /// laid out here without display items.
    func summary(_ spineIndex: Int) -> Summary {
        let known: Summary? = state.withLock(waitingUntil: { !$0.counting.contains(spineIndex) && !$0.drawing.contains(spineIndex) }) { state in
            if let summary = state.summaries[spineIndex] { return summary }
            state.counting.insert(spineIndex)
            return nil
        }
        if let known { return known }
        let worker = LayoutWorker(drawing: false, shared: shaping)
        let summary = settle(spineIndex, worker: worker, buildItems: false).summary
        state.withLock { state in
            state.shapingHits += worker.shaper.hits
            state.shapingMisses += worker.shaper.misses
            state.counting.remove(spineIndex)
            state.summaries[spineIndex] = summary
        }
        return summary
    }

    /// Every chapter's summary, the missing ones laid out in parallel. Workers claim one chapter
    /// at a time, first in reading order: a chapter the reader asks for meanwhile is not queued
    /// behind the whole book, but laid out by whoever gets to it first.
    func summaries(jobs: Int = SystemEnvironment.processorCount) -> [Summary] {
        let workers = max(1, min(jobs, spineCount))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            let worker = LayoutWorker(drawing: false, shared: shaping)
            while let spineIndex = claimUncounted() {
                let summary = settle(spineIndex, worker: worker, buildItems: false).summary
                state.withLock { state in
                    state.counting.remove(spineIndex)
                    state.summaries[spineIndex] = summary
                }
            }
            noteShaping(hits: worker.shaper.hits, misses: worker.shaper.misses)
        }
        return (0..<spineCount).map(summary)
    }

    /// The first chapter in reading order that nobody has laid out or is laying out, now claimed.
    private func claimUncounted() -> Int? {
        state.withLock { state in
            guard let spineIndex = (0..<spineCount).first(where: { state.summaries[$0] == nil && !state.counting.contains($0) && !state.drawing.contains($0) })
            else { return nil }
            state.counting.insert(spineIndex)
            return spineIndex
        }
    }

    func noteShaping(hits: Int, misses: Int) {
        state.withLock { state in
            state.shapingHits += hits
            state.shapingMisses += misses
        }
    }

    var shapingCounts: (hits: Int, misses: Int) { state.withLock { ($0.shapingHits, $0.shapingMisses) } }

    /// Records a chapter's summary gathered by a layout worker (the streaming render).
    func record(_ summary: Summary) {
        state.withLock { state in
            if state.summaries[summary.layout.spineIndex] == nil { state.summaries[summary.layout.spineIndex] = summary }
        }
    }

    /// A chapter settled, with its summary: from the layout cache when it holds the chapter (with
    /// display lists, when `buildItems`), else laid out here and stored there.
    func settle(_ spineIndex: Int, worker: LayoutWorker, buildItems: Bool) -> (chapter: ChapterLayout, summary: Summary) {
        let key = cacheKey(spineIndex)
        if let key, let cache = settings.layoutCache,
            let cached = cache.chapter(key, needItems: buildItems, face: { [layout] in layout.face(source: $0, bold: $1, italic: $2) })
        {
            state.withLock { $0.chaptersFromCache += 1 }
            return (cached.layout, Summary(layout: Self.stripped(cached.layout, keepingLines: settings.layout.scrolled), positions: cached.positions))
        }
        let chapter = layout.settleChapter(spineIndex, worker: worker, buildItems: buildItems)
        let summary = summarize(chapter)
        state.withLock { $0.chaptersLaidOut += 1 }
        // A chapter whose images were not all measured may settle otherwise next time: not kept.
        if let key, let cache = settings.layoutCache, chapter.settle.unresolved.isEmpty {
            var kept = chapter
            kept.document = nil
            kept.crengineStyles = nil
            cache.store(key, CachedChapter(layout: kept, positions: summary.positions, hasItems: buildItems))
        }
        return (chapter, summary)
    }

    /// The chapter's key in the layout cache: the book's content, its place in the spine and the
    /// layout settings (nil without a cache, or with a custom measurer the key can't cover).
    private func cacheKey(_ spineIndex: Int) -> String? {
        guard settings.layoutCache != nil, settings.imageMeasurer == nil, !settings.layout.scrolled, let sha256 = try? book.identity().sha256 else { return nil }
        return LayoutCache.key(bookSHA256: sha256, spineIndex: spineIndex, layoutHash: layoutHash, extra: cacheSettings)
    }

    /// The settings besides the layout hash that a cached chapter depends on.
    private static func cacheSettings(_ settings: PaginationSettings) -> String {
        let known = settings.knownImageSizes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ";")
        return "quire=\(QuireVersion.string);passes=\(settings.settleLimits.maxPasses);budget=\(settings.settleLimits.timeBudget);known=\(known)"
    }

    private func summarize(_ chapter: ChapterLayout) -> Summary {
        Summary(layout: Self.stripped(chapter, keepingLines: settings.layout.scrolled), positions: ChapterPositions(chapter: chapter, container: container, targets: targets))
    }

    /// A chapter without its document and display lists: what a summary keeps (and a scrolled
    /// document's lines, whose offsets and y the map lists).
    private static func stripped(_ chapter: ChapterLayout, keepingLines: Bool) -> ChapterLayout {
        var stripped = chapter
        stripped.document = nil
        stripped.crengineStyles = nil
        for index in stripped.pages.indices {
            stripped.pages[index].items = []
            if !keepingLines { stripped.pages[index].lines = [] }
        }
        return stripped
    }


    /// A settled chapter with its display lists, kept in the window. The reader's current chapter
    /// moves to it, and the next chapter is laid out in the background.
    func drawnChapter(_ spineIndex: Int) -> ChapterLayout {
        let chapter = drawn(spineIndex, becomesCurrent: true)
        if spineIndex + 1 < spineCount, settings.window >= 2 {
            let next = spineIndex + 1
            let wanted = state.withLock { state in state.held[next] == nil && !state.drawing.contains(next) }
            if wanted { startThread { [self] in _ = drawn(next, becomesCurrent: false) } }
        }
        return chapter
    }

    private func drawn(_ spineIndex: Int, becomesCurrent: Bool) -> ChapterLayout {
        let window = max(1, settings.window)
        let held: ChapterLayout? = state.withLock(waitingUntil: { state in
            !state.drawing.contains(spineIndex) && !state.counting.contains(spineIndex)
                && (state.held[spineIndex] != nil || state.drawing.count < window)
        }) { state in
            if becomesCurrent { state.current = spineIndex }
            if let chapter = state.held[spineIndex] { return chapter }
            // Make room: drop the held chapters farthest from the reader.
            while state.laidOut >= window {
                let current = state.current
                guard let farthest = state.held.keys.max(by: { (abs($0 - current), $0) < (abs($1 - current), $1) }) else { break }
                state.held[farthest] = nil
            }
            state.drawing.insert(spineIndex)
            state.notePeak()
            return nil
        }
        if let held { return held }
        let (chapter, settled) = settle(spineIndex, worker: LayoutWorker(drawing: true, shared: shaping), buildItems: true)
        let summary = state.withLock { $0.summaries[spineIndex] } ?? settled
        var kept = chapter
        kept.document = nil
        state.withLock { state in
            state.drawing.remove(spineIndex)
            state.summaries[spineIndex] = summary
            // A background layout whose chapter the reader has moved far from is not kept.
            if becomesCurrent || abs(spineIndex - state.current) <= 1 {
                state.held[spineIndex] = kept
            }
            state.notePeak()
        }
        return kept
    }

    // MARK: Pages

    func address(after address: PageAddress) -> PageAddress? {
        guard (try? checked(address.spineIndex)) != nil else { return nil }
        if address.index + 1 < summary(address.spineIndex).layout.pages.count {
            return PageAddress(spineIndex: address.spineIndex, index: address.index + 1)
        }
        return address.spineIndex + 1 < spineCount ? PageAddress(spineIndex: address.spineIndex + 1, index: 0) : nil
    }

    func address(before address: PageAddress) -> PageAddress? {
        if address.index > 0 { return PageAddress(spineIndex: address.spineIndex, index: address.index - 1) }
        guard address.spineIndex > 0 else { return nil }
        let previous = address.spineIndex - 1
        return PageAddress(spineIndex: previous, index: summary(previous).layout.pages.count - 1)
    }

    func pageNumber(of address: PageAddress) throws -> Int {
        let count = try summary(checked(address.spineIndex)).layout.pages.count
        guard address.index >= 0, address.index < count else { throw QuireError.unresolvable("page \(address) is not in the book") }
        return (0..<address.spineIndex).reduce(1) { $0 + summary($1).layout.pages.count } + address.index
    }

    /// The page holding a text position: at once for a chapter's start, otherwise settled.
    func address(of position: Position) throws -> PageAddress {
        let spineIndex = try checked(position.spineIndex)
        if position.offset == 0 { return PageAddress(spineIndex: spineIndex, index: 0) }
        let chapter = summary(spineIndex).layout
        guard position.offset >= 0, position.offset <= chapter.textLength else {
            throw QuireError.unresolvable("offset \(position.offset) is outside spine item \(spineIndex) (length \(chapter.textLength))")
        }
        return PageAddress(spineIndex: spineIndex, index: chapter.pages.lastIndex { $0.start <= position.offset } ?? 0)
    }

    /// The page to paint: from the window, or (a chapter's first page only, when allowed) provisional.
    private func page(_ address: PageAddress, provisional: Bool) throws -> Page {
        let spineIndex = try checked(address.spineIndex)
        if provisional, address.index == 0, !isSettled(spineIndex) {
            return ChapterHandle(layout: layout, spineIndex: spineIndex).firstPage()
        }
        let chapter = drawnChapter(spineIndex)
        guard chapter.pages.indices.contains(address.index) else { throw QuireError.unresolvable("page \(address) is not in the book") }
        return chapter.pages[address.index]
    }

    func render(_ address: PageAddress, paint: PaintSettings, provisional: Bool) throws -> Bitmap {
        let page = try page(address, provisional: provisional)
        try DelayLoad.requireCairo()
        let painter = Painter(book: container)
        defer { noteImageWarnings(painter, address.spineIndex) }
        return painter.bitmap(page, settings: paint)
    }

    func png(_ address: PageAddress, paint: PaintSettings, provisional: Bool) throws -> [UInt8] {
        let page = try page(address, provisional: provisional)
        try DelayLoad.requireCairo()
        let painter = Painter(book: container)
        defer { noteImageWarnings(painter, address.spineIndex) }
        return try painter.pngBytes(page, settings: paint)
    }

    private func noteImageWarnings(_ painter: Painter, _ spineIndex: Int) {
        guard !painter.imageWarnings.isEmpty else { return }
        state.withLock { state in
            for warning in painter.imageWarnings where !(state.imageWarnings[spineIndex] ?? []).contains(warning) {
                state.imageWarnings[spineIndex, default: []].append(warning)
            }
        }
    }

    func problems(_ spineIndex: Int) -> [PageProblem] {
        let (summary, drawnWarnings) = state.withLock { ($0.summaries[spineIndex], $0.imageWarnings[spineIndex] ?? []) }
        var problems: [PageProblem] = []
        for item in summary?.layout.settle.unresolved ?? [] { problems.append(.imageNotMeasured(path: item.path, reason: item.reason)) }
        for warning in summary?.layout.warnings ?? [] where warning.code == "chapter" { problems.append(.chapterUnreadable(warning.message)) }
        problems += drawnWarnings.map(PageProblem.imageNotDrawn)
        return problems
    }

    // MARK: Positions

    /// `withTotalProgression` false leaves out the one field that needs every chapter laid out.
    func locator(_ address: PageAddress, atEnd: Bool, withTotalProgression: Bool = true) throws -> Locator {
        let spineIndex = try checked(address.spineIndex)
        let summary = summary(spineIndex)
        guard summary.layout.pages.indices.contains(address.index) else { throw QuireError.unresolvable("page \(address) is not in the book") }
        let page = summary.layout.pages[address.index]
        let offset = atEnd ? page.end : page.start
        let views = atEnd ? summary.positions?.ends[address.index] : summary.positions?.starts[address.index]
        let length = summary.layout.textLength
        var totalProgression: Double?
        if withTotalProgression {
            let lengths = summaries().map(\.layout.textLength)
            let total = lengths.reduce(0, +)
            let before = lengths.prefix(spineIndex).reduce(0, +)
            totalProgression = total == 0 ? 0 : Double(before + offset) / Double(total)
        }
        let item = publication.item(for: publication.spine[spineIndex])
        return Locator(
            href: item?.path ?? summary.layout.href, type: item?.mediaType ?? "application/xhtml+xml",
            locations: Locator.Locations(
                progression: length == 0 ? 0 : Double(offset) / Double(length), totalProgression: totalProgression,
                cfi: views?.cfi, xpointer: views?.xpointer, offset: offset),
            text: atEnd ? nil : summary.positions?.excerpts[address.index])
    }

    func resolve(_ target: Target) throws -> PageAddress {
        switch target {
        case .page(let number):
            guard number >= 1 else { throw QuireError.unresolvable("page \(number): pages are numbered from 1") }
            if number == 1 { return PageAddress(spineIndex: 0, index: 0) }
            var remaining = number - 1
            for spineIndex in 0..<spineCount {
                let count = summary(spineIndex).layout.pages.count
                if remaining < count { return PageAddress(spineIndex: spineIndex, index: remaining) }
                remaining -= count
            }
            throw QuireError.unresolvable("page \(number) is past the end of the book")
        case .lastPage:
            let last = spineCount - 1
            return PageAddress(spineIndex: last, index: summary(last).layout.pages.count - 1)
        case .locator(let locator):
            return try address(of: position(locator))
        case .cfi(let cfi):
            return try address(of: book.position(cfi: cfi))
        case .xpointer(let pointer):
            return try address(of: book.position(xpointer: pointer))
        case .progression(let href, let fraction):
            return try address(of: position(progression: fraction, in: spineIndex(href: href)))
        case .totalProgression(let fraction):
            return try address(of: position(totalProgression: fraction))
        case .position(let number, let convention):
            return try address(of: position(number, convention))
        case .label(let label):
            return try address(labelled: label)
        case .tocTitle(let title):
            return try address(tocTitle: title)
        }
    }

    /// The spine item an href names (manifest href or archive path, percent-decoded; fragment ignored).
    func spineIndex(href: String) throws -> Int {
        var path = String(href.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        path = PercentEncoding.decode(path)
        while path.hasPrefix("/") { path.removeFirst() }
        let spine = publication.spine
        if let index = spine.firstIndex(where: { item in
            let manifest = publication.item(for: item)
            return manifest?.path == path || manifest?.href == path
        }) {
            return index
        }
        // A document shown through its fallback, or the fallback of an item shown itself.
        if let index = publication.spineIndex(path: path) { return index }
        throw QuireError.unresolvable("href '\(href)' is not in the book's reading order")
    }

    private func position(progression: Double, in spineIndex: Int) throws -> Position {
        guard progression >= 0, progression <= 1 else { throw QuireError.unresolvable("progression \(progression) is outside 0…1") }
        if progression == 0 { return Position(spineIndex: spineIndex, offset: 0) }
        let length = summary(spineIndex).layout.textLength
        return Position(spineIndex: spineIndex, offset: Int((progression * Double(length)).rounded()))
    }

    private func position(totalProgression: Double) throws -> Position {
        guard totalProgression >= 0, totalProgression <= 1 else { throw QuireError.unresolvable("totalProgression \(totalProgression) is outside 0…1") }
        let lengths = summaries().map(\.layout.textLength)
        var target = Int((totalProgression * Double(lengths.reduce(0, +))).rounded())
        for (spineIndex, length) in lengths.enumerated() {
            if target < length || spineIndex == lengths.count - 1 { return Position(spineIndex: spineIndex, offset: min(target, length)) }
            target -= length
        }
        throw QuireError.unresolvable("the book has no text")
    }

    private func position(_ number: Int, _ convention: PositionsConvention, in list: [ReadiumPosition]? = nil) throws -> Position {
        let list = list ?? PositionsList.make(container, convention: convention)
        guard number >= 1, number <= list.count else {
            throw QuireError.unresolvable("position \(number) is outside 1…\(list.count) (\(convention.rawValue))")
        }
        let entry = list[number - 1]
        let length = summary(entry.spineIndex).layout.textLength
        // As the map ties positions to pages: the progression's offset, rounded down.
        return Position(spineIndex: entry.spineIndex, offset: Int((entry.progression * Double(length)).rounded(.down)))
    }

    /// A Locator's position: its fragment, CSS selector or partial CFI, else its progression, else
    /// its position in the Readium list, else the start of its href.
    func position(_ locator: Locator) throws -> Position {
        let locations = locator.locations
        guard !locator.href.isEmpty else {
            guard let total = locations.totalProgression else { throw QuireError.unresolvable("the locator has neither href nor totalProgression") }
            return try position(totalProgression: total)
        }
        let spineIndex = try self.spineIndex(href: locator.href)
        var fragment = locations.fragments.first ?? locator.href.split(separator: "#", maxSplits: 1).dropFirst().first.map(String.init)
        if let selector = locations.cssSelector {
            guard selector.hasPrefix("#"), !selector.contains(" ") else {
                throw QuireError.unresolvable("only #id CSS selectors are resolved, not '\(selector)'")
            }
            fragment = String(selector.dropFirst())
        }
        if let partial = locations.partialCfi { fragment = partial.hasPrefix("epubcfi(") ? partial : "epubcfi(\(partial))" }
        if let fragment, !fragment.isEmpty {
            return try book.position(spineIndex: spineIndex, fragment: PercentEncoding.decode(fragment))
        }
        // Quire's own full CFI, where a Locator carries one, is exact; it must name the same item.
        if let cfi = locations.cfi {
            let found = try book.position(cfi: cfi)
            guard found.spineIndex == spineIndex else { throw QuireError.unresolvable("the locator's cfi \(cfi) is not in its href \(locator.href)") }
            return found
        }
        if let progression = locations.progression { return try position(progression: progression, in: spineIndex) }
        // A position or a totalProgression counts Readium's positions list; its entry must be in the href.
        if locations.position != nil || locations.totalProgression != nil {
            let list = PositionsList.make(container, convention: .readium)
            let number = try locations.position ?? locations.totalProgression.map { total in
                guard total >= 0, total <= 1, !list.isEmpty else { throw QuireError.unresolvable("totalProgression \(total) is outside 0…1") }
                return PositionsList.readiumPosition(totalProgression: total, count: list.count)
            }!
            let found = try position(number, .readium, in: list)
            guard found.spineIndex == spineIndex else {
                throw QuireError.unresolvable("Readium position \(number) is in \(list[number - 1].href), not in the locator's href \(locator.href)")
            }
            return found
        }
        return Position(spineIndex: spineIndex, offset: 0)
    }

    private func navigationPosition(_ target: ResourceRef?) throws -> Position? {
        guard let target, let spineIndex = publication.spineIndex(path: target.path) else { return nil }
        guard let fragment = target.fragment, !fragment.isEmpty else { return Position(spineIndex: spineIndex, offset: 0) }
        return try? book.position(spineIndex: spineIndex, fragment: PercentEncoding.decode(fragment))
    }

    private func address(tocTitle title: String) throws -> PageAddress {
        func flatten(_ points: [NavPoint]) -> [NavPoint] { points.flatMap { [$0] + flatten($0.children) } }
        let points = flatten(publication.navigation.toc)
        guard let point = points.first(where: { $0.title == title }) ?? points.first(where: { $0.title.lowercased() == title.lowercased() }) else {
            throw QuireError.unresolvable("no table-of-contents entry titled '\(title)'")
        }
        guard let position = try navigationPosition(point.target) else {
            throw QuireError.unresolvable("table-of-contents entry '\(title)' points nowhere in the book")
        }
        return try address(of: position)
    }

    /// A print page label: the page-list's entry, or (without a page-list) a pagebreak marker.
    private func address(labelled label: String) throws -> PageAddress {
        func flatten(_ points: [NavPoint]) -> [NavPoint] { points.flatMap { [$0] + flatten($0.children) } }
        let pageList = publication.navigation.pageList
        if !pageList.isEmpty {
            for point in flatten(pageList) where point.title == label {
                if let position = try navigationPosition(point.target) { return try address(of: position) }
            }
            throw QuireError.unresolvable("no print page labelled '\(label)'")
        }
        for spineIndex in 0..<spineCount {
            if let marker = summary(spineIndex).positions?.pagebreaks.first(where: { $0.label == label }) {
                return try address(of: Position(spineIndex: spineIndex, offset: marker.offset))
            }
        }
        throw QuireError.unresolvable("no print page labelled '\(label)'")
    }

    // MARK: The map

    func map(jobs: Int, withImages: Bool, extraWarnings: [Warning], identity: PositionMap.BookIdentity? = nil) throws -> PositionMap {
        let all = summaries(jobs: jobs)
        var positions: [Int: ChapterPositions] = [:]
        for summary in all { positions[summary.layout.spineIndex] = summary.positions }
        let result = BookLayout.Result(chapters: all.map(\.layout), shapingHits: 0, shapingMisses: 0)
        return PositionMap(
            layout: layout, result: result, identity: try identity ?? book.identity(),
            profileName: settings.profileName, withImages: withImages, extraWarnings: extraWarnings, positions: positions,
            spreads: spreadPlan, flow: flowPlan)
    }
}
