import Dispatch
import Glibc
import QuireCore
import QuireImages
import QuireLayout
import QuirePaint
import QuirePDF
import QuirePositions

/// What `Pagination.write` produces: the pages (PNG), the map, or both, into a directory.
public struct WriteRequest: Sendable {
    public var directory: String
    /// nil writes the map only (every page's `image` is null).
    public var paint: PaintSettings?
    /// The pages to paint (nil: every page). For a PDF, source pages.
    public var pages: PageRanges? = nil
    public var jobs = SystemEnvironment.processorCount
    /// Called after each chapter (EPUB, painting every page) or page: done, total and the unit.
    public var progress: (@Sendable (Int, Int, String) -> Void)? = nil
    /// Builds the output beside `directory` and swaps it in whole at the end, so a run killed at
    /// any moment leaves the previous output or the new one, never a mixture. Off only for a
    /// directory that is already this run's own (a batch item's partial directory).
    public var staged = true
    /// Files in `directory` that Quire did not write are kept beside the new output. Without it
    /// such a directory is refused: nothing of another program's or a person's is ever deleted.
    public var keepOtherFiles = false

    public init(directory: String, paint: PaintSettings?) {
        self.directory = directory
        self.paint = paint
    }
}

/// What a write did, with the statistics `--stats` reports.
public struct WriteReport: Sendable {
    public var map: PositionMap
    /// Pages in the book (for a PDF: output pages, after splitting spreads).
    public var pageCount: Int
    /// A PDF's own pages.
    public var sourcePageCount: Int?
    public var painted: Int
    public var statistics: LayoutStatistics?
}

/// Layout statistics of an EPUB's pagination.
public struct LayoutStatistics: Sendable {
    public var shapingHits: Int
    public var shapingMisses: Int
    public var spacing: SpacingStatistics
    public var missingGlyphs: Int
    public var settlePasses: Int
    public var imagesMeasured: Int
    /// Each measured image once (CSS px), sorted by path.
    public var imageSizes: [(path: String, width: Double, height: Double)]
}

extension Pagination {
    /// Writes `DIR/pages/NNNN.png` and `DIR/positions.json` (each file atomically). Painting every
    /// page of an EPUB paints each chapter on its layout worker as soon as it is laid out, so
    /// memory holds one chapter's display lists per worker.
    public func write(_ request: WriteRequest) throws -> WriteReport {
        guard request.staged else { return try writeUnstaged(request) }
        let output = try StagedDirectory(target: request.directory)
        do {
            let foreign = output.foreignEntries(isOwn: OutputFiles.isOwn)
            if let first = foreign.first, !request.keepOtherFiles {
                let more = foreign.count > 1 ? " and \(foreign.count - 1) more" : ""
                throw QuireError.cannotCreateOutput(
                    path: output.target,
                    reason: "it holds files Quire did not write (\(first)\(more)); choose another directory, or --force to render beside them")
            }
            var staged = request
            staged.directory = output.staging
            let report = try writeUnstaged(staged)
            try output.commit(keeping: foreign)
            return report
        } catch {
            output.discard()
            throw error
        }
    }

    private func writeUnstaged(_ request: WriteRequest) throws -> WriteReport {
        switch engine {
        case .reflow(let pages): return try pages.write(request)
        case .pdf(let pages): return try pages.write(request)
        }
    }
}

/// Page ranges such as `1-5,8,10-` (1-based; an open end runs to the last page).
public struct PageRanges: Sendable, Hashable {
    public var ranges: [ClosedRange<Int>]
    /// Ranges whose end is the book's last page, by their first page.
    public var openEnded: [Int]

    public init(parsing text: String) throws {
        ranges = []
        openEnded = []
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace() }
            guard bounds.count <= 2, let low = Int(bounds[0].isEmpty ? "1" : bounds[0]), low >= 1 else {
                throw QuireError.usage("--pages takes ranges such as 1-5,8,10-")
            }
            if bounds.count == 2, bounds[1].isEmpty {
                openEnded.append(low)
                continue
            }
            let high = bounds.count == 2 ? Int(bounds[1]) ?? -1 : low
            guard high >= low else { throw QuireError.usage("--pages takes ranges such as 1-5,8,10-") }
            ranges.append(low...high)
        }
        guard !ranges.isEmpty || !openEnded.isEmpty else { throw QuireError.usage("--pages takes ranges such as 1-5,8,10-") }
        self.text = text
    }

    private var text: String

    /// The selected pages of a book of `count` pages, in order. Pages past the end are left
    /// out (a range may run past it); selecting none of the book's pages is an error.
    public func pages(count: Int) throws -> [Int] {
        var pages = Set<Int>()
        for range in ranges where range.lowerBound <= count { pages.formUnion(range.lowerBound...min(range.upperBound, count)) }
        for low in openEnded where low <= count { pages.formUnion(low...count) }
        guard !pages.isEmpty || count == 0 else {
            throw QuireError.usage("--pages \(text): the book has \(count) page\(count == 1 ? "" : "s")")
        }
        return pages.sorted()
    }
}

/// Keeps the first error that workers report.
private final class FirstError: Sendable {
    private let error = LockedValue<Error?>(nil)
    var failed: Bool { error.withLock { $0 != nil } }
    var value: Error? { error.withLock { $0 } }
    func record(_ value: Error) { error.withLock { if $0 == nil { $0 = value } } }
}

enum OutputFiles {
    /// Whether an entry of an output directory (a path relative to it) is one a render writes: the
    /// map, the page and spread images, and what a killed run of an earlier version left there.
    static func isOwn(_ path: String, isDirectory: Bool) -> Bool {
        let parts = path.split(separator: "/")
        if parts.count == 1 {
            return isDirectory ? ["pages", "spreads"].contains(parts[0]) : parts[0] == "positions.json" || isLeftover(parts[0])
        }
        guard parts.count == 2, !isDirectory, ["pages", "spreads"].contains(parts[0]) else { return false }
        let name = parts[1]
        if isLeftover(name) || name.hasPrefix(".chapter-") && name.hasSuffix(".png") { return true }
        guard name.hasSuffix(".png") else { return false }
        let number = name.dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        return number.count <= 2 && number.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
    }

    /// A temporary file of an atomic write (`NAME.tmp-PID`).
    private static func isLeftover(_ name: Substring) -> Bool {
        guard let range = name.firstRange(of: ".tmp-") else { return false }
        let pid = name[range.upperBound...]
        return !pid.isEmpty && pid.allSatisfy { ("0"..."9").contains($0) }
    }

    static func createDirectory(_ path: String) throws {
        do {
            try FileSystem.createDirectory(path)
        } catch {
            throw QuireError.cannotCreateOutput(path: path, reason: error.description)
        }
    }

    /// A JSON document and a final newline, streamed (a map is never whole in memory as bytes).
    static func writeAtomically(_ json: JSON, to path: String) throws {
        try FileSystem.writeAtomically(to: path) { write in
            json.serialize(emit: write)
            write([0x0A])
        }
    }

    static func provisionalName(_ spineIndex: Int, _ page: Int, tile: Int) -> String {
        ".chapter-\(spineIndex)-page-\(page)\(tile == 0 ? "" : "-\(tile + 1)").png"
    }

    /// A page's image: one PNG, or for a tall scrolled page one per tile (`Page.tiles`), named by `name(tile)`.
    static func writePage(_ page: Page, painter: Painter, paint: PaintSettings, name: (Int) -> String) throws {
        let tiles = page.tiles
        for (index, band) in tiles.enumerated() {
            try painter.writePNG(page, settings: paint, band: tiles.count == 1 ? nil : band, to: name(index))
        }
    }
}

extension ReflowPages {
    func write(_ request: WriteRequest) throws -> WriteReport {
        let out = request.directory
        try OutputFiles.createDirectory(out)
        let streaming = request.paint != nil && request.pages == nil
        let failure = FirstError()
        if request.paint != nil { try DelayLoad.requireCairo() }
        if streaming { try OutputFiles.createDirectory(out + "/pages") }
        // Images that could not be drawn (a placeholder box stands in): reported in the map.
        let paintWarnings = LockedValue<Set<String>>([])
        let spineCount = self.spineCount
        let done = LockedValue(0)
        let container = self.container
        if streaming, let paint = request.paint {
            let result = layout.layout(
                jobs: request.jobs, buildItems: true,
                settle: { [self] spineIndex, worker in
                    let (chapter, summary) = settle(spineIndex, worker: worker, buildItems: true)
                    record(summary)
                    return chapter
                }
            ) { chapter in
                chapter.document = nil
                guard !failure.failed else { return }
                let painter = Painter(book: container)
                for index in chapter.pages.indices {
                    do {
                        try OutputFiles.writePage(chapter.pages[index], painter: painter, paint: paint) { tile in
                            out + "/pages/" + OutputFiles.provisionalName(chapter.spineIndex, index, tile: tile)
                        }
                    } catch {
                        failure.record(error)
                    }
                    chapter.pages[index].items = []
                }
                // Painted, the chapter is done with: the map is built from the summaries (which
                // hold no lines or styles), so memory holds no chapter once it is written.
                chapter.pages = []
                chapter.crengineStyles = nil
                paintWarnings.withLock { $0.formUnion(painter.imageWarnings) }
                let count = done.takeNext() + 1
                request.progress?(count, spineCount, "chapters")
            }
            noteShaping(hits: result.shapingHits, misses: result.shapingMisses)
            if let error = failure.value { throw error }
        }
        let chapters = summaries(jobs: request.jobs).map(\.layout)
        let pageCount = chapters.reduce(0) { $0 + $1.pages.count }
        let selection = try request.pages?.pages(count: pageCount) ?? Array(stride(from: 1, through: pageCount, by: 1))
        let digits = PositionMap.digits(forPageCount: pageCount)
        var painted = 0
        if streaming {
            // Final names follow the book's page numbers, known only now.
            var number = 1
            for chapter in chapters {
                for index in chapter.pages.indices {
                    for tile in chapter.pages[index].tiles.indices {
                        let from = out + "/pages/" + OutputFiles.provisionalName(chapter.spineIndex, index, tile: tile)
                        let to = out + "/" + PositionMap.imageName(forPage: number, digits: digits, tile: tile)
                        guard rename(from, to) == 0 else { throw QuireError.cannotCreateOutput(path: to, reason: String(cString: strerror(errno))) }
                    }
                    number += 1
                }
            }
            painted = pageCount
        } else if let paint = request.paint {
            // Selected pages (--pages): only the chapters holding them are laid out with display
            // lists, one per worker at a time, so memory holds a chapter per worker whatever the
            // book's length (the summaries above hold no display lists).
            try OutputFiles.createDirectory(out + "/pages")
            let wanted = Set(selection)
            var selected: [Int: [(index: Int, number: Int)]] = [:]
            var number = 1
            for chapter in chapters {
                for index in chapter.pages.indices {
                    if wanted.contains(number) { selected[chapter.spineIndex, default: []].append((index, number)) }
                    number += 1
                }
            }
            let work = selected.keys.sorted()
            let pagesOf = selected
            done.withLock { $0 = 0 }
            let next = LockedValue(0)
            DispatchQueue.concurrentPerform(iterations: max(1, min(request.jobs, work.count))) { _ in
                let painter = Painter(book: container)
                let worker = LayoutWorker(drawing: true, shared: shaping)
                while true {
                    let slot = next.takeNext()
                    guard slot < work.count, !failure.failed else { break }
                    let chapter = settle(work[slot], worker: worker, buildItems: true).chapter
                    for (index, number) in pagesOf[work[slot]] ?? [] {
                        do {
                            try OutputFiles.writePage(chapter.pages[index], painter: painter, paint: paint) { tile in
                                out + "/" + PositionMap.imageName(forPage: number, digits: digits, tile: tile)
                            }
                        } catch {
                            failure.record(error)
                        }
                        let count = done.takeNext() + 1
                        request.progress?(count, selection.count, "pages")
                    }
                }
                noteShaping(hits: worker.shaper.hits, misses: worker.shaper.misses)
                paintWarnings.withLock { $0.formUnion(painter.imageWarnings) }
            }
            if let error = failure.value { throw error }
            painted = selection.count
        }
        var map = try self.map(
            jobs: request.jobs, withImages: request.paint != nil,
            extraWarnings: paintWarnings.withLock { $0 }.sorted().map { Warning("image-not-drawn", $0) })
        if request.pages != nil {
            // Pages left out by --pages have no image: the map describes only what is written.
            let wanted = Set(selection)
            for index in map.pages.indices where !wanted.contains(index + 1) {
                map.pages[index].image = nil
                if case .text(var text) = map.pages[index].content, var scroll = text.scroll {
                    for tile in scroll.tiles.indices { scroll.tiles[tile].image = nil }
                    text.scroll = scroll
                    map.pages[index].content = .text(text)
                }
            }
        }
        if let paint = request.paint, let spreads = map.spreads, spreads.active {
            let written = try writeSpreads(spreads, pages: chapters.flatMap(\.pages), painted: Set(selection), digits: digits, paint: paint, into: out)
            // A spread whose pages were not all painted (--pages) has no image.
            for index in spreads.list.indices where !written.contains(index) { map.spreads?.list[index].image = nil }
        }
        try OutputFiles.writeAtomically(map.json, to: out + "/positions.json")
        return WriteReport(map: map, pageCount: pageCount, sourcePageCount: nil, painted: painted, statistics: statistics(chapters))
    }

    /// `DIR/spreads/NNNN.png`: each spread whose pages were painted, composed from their images.
    /// Returns the indices of the spreads written.
    private func writeSpreads(
        _ spreads: PositionMap.Spreads, pages: [Page], painted: Set<Int>, digits: Int, paint: PaintSettings, into out: String
    ) throws -> Set<Int> {
        try OutputFiles.createDirectory(out + "/spreads")
        let pageWidth = spreadPlan?.pageWidth ?? spreads.width / 2
        var written = Set<Int>()
        for (index, entry) in spreads.list.enumerated() {
            guard let image = entry.image else { continue }
            let members: [(Int?, SpreadImage.Side)] = [(entry.left, .left), (entry.right, .right), (entry.center, .center)]
            guard members.allSatisfy({ $0.0.map(painted.contains) ?? true }) else { continue }
            written.insert(index)
            let placements = members.compactMap { number, side in
                number.map { number in
                    SpreadImage.placement(
                        page: out + "/" + PositionMap.imageName(forPage: number, digits: digits), side: side, pageWidth: pageWidth,
                        content: pages[number - 1].clip)
                }
            }
            try SpreadImage.write(placements, width: spreads.width, height: spreads.height, paint: paint, to: out + "/" + image)
        }
        return written
    }

    private func statistics(_ chapters: [ChapterLayout]) -> LayoutStatistics {
        var sizes: [String: (Double, Double)] = [:]
        for chapter in chapters { sizes.merge(chapter.imageSizes) { first, _ in first } }
        let (hits, misses) = shapingCounts
        return LayoutStatistics(
            shapingHits: hits, shapingMisses: misses, spacing: chapters.reduce(into: SpacingStatistics()) { $0.add($1.spacing) },
            missingGlyphs: chapters.reduce(0) { $0 + $1.missingGlyphs }, settlePasses: chapters.reduce(0) { $0 + $1.settle.passes },
            imagesMeasured: chapters.reduce(0) { $0 + $1.settle.measured },
            imageSizes: sizes.sorted { $0.key < $1.key }.map { (path: $0.key, width: $0.value.0, height: $0.value.1) })
    }
}

extension PDFPages {
    func write(_ request: WriteRequest) throws -> WriteReport {
        let out = request.directory
        let paint = request.paint ?? PaintSettings()
        var render = options
        render.gray = paint.gray
        render.dither16 = paint.dither16
        let sourcePages = try request.pages?.pages(count: info.pageCount) ?? Array(stride(from: 1, through: info.pageCount, by: 1))
        let digits = PositionMap.digits(forPageCount: plan.count)
        try OutputFiles.createDirectory(out)
        try OutputFiles.createDirectory(out + "/pages")
        // Without painting: the map without images (every image member null).
        let rendering = request.paint == nil ? [] : sourcePages
        let done = LockedValue(0)
        let progress = request.progress
        try PDFRenderer.render(
            path: path, info: info, sourcePages: rendering, options: render, jobs: request.jobs,
            imagePath: { out + "/" + PositionMap.imageName(forPage: $0.index, digits: digits) },
            progress: {
                let count = done.takeNext() + 1
                progress?(count, rendering.count, "pages")
            })
        let selected = Set(rendering)
        let rendered = Set(plan.filter { selected.contains($0.sourcePage) }.map(\.index))
        let map = try self.map(rendered: rendered.count == plan.count ? nil : rendered, paint: paint)
        try OutputFiles.writeAtomically(map.json, to: out + "/positions.json")
        return WriteReport(map: map, pageCount: plan.count, sourcePageCount: info.pageCount, painted: rendered.count, statistics: nil)
    }
}
