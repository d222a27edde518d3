@preconcurrency import Glibc
import Dispatch

import Quire
import Synchronization

enum RenderCommand {
    static let valued: Set<String> = Arguments.limitFlags.union([
        "out", "profile", "size", "stats", "open-at", "image-sizes", "dpi", "font-size", "margin", "line-height", "font", "align", "theme", "jobs", "pages", "user-css",
        "password", "rotate", "split",
    ])
    static let boolean: Set<String> = ["gray", "dither", "no-hyphenation", "map-only", "no-publisher-styles", "quiet", "crop"]

    static func settings(_ options: Arguments) throws -> (LayoutSettings, String?) {
        var profile = PageProfile.named("kobo-clara")!
        var profileName: String? = "kobo-clara"
        if let name = options.value("profile") {
            guard let named = PageProfile.named(name) else {
                throw QuireError.usage("unknown profile '\(name)' (see quire profiles)")
            }
            profile = named
            profileName = name
        }
        if let size = options.value("size") {
            let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts[0] >= 50, parts[1] >= 50, parts[0] <= 20000, parts[1] <= 20000 else {
                throw QuireError.usage("--size needs WIDTHxHEIGHT in pixels, such as 758x1024")
            }
            profile = PageProfile(name: "custom", width: parts[0], height: parts[1], dpi: profile.dpi)
            profileName = nil
        }
        if let dpi = options.value("dpi") {
            guard let value = Double(dpi), value >= 36, value <= 1200 else { throw QuireError.usage("--dpi needs a number from 36 to 1200") }
            profile.dpi = value
        }
        var settings = LayoutSettings(profile: profile)
        if let value = options.value("font-size") {
            guard let size = Double(value), size >= 4, size <= 72 else { throw QuireError.usage("--font-size needs points from 4 to 72") }
            settings.fontSizePt = size
        }
        if let value = options.value("margin") {
            guard let margin = Double(value), margin >= 0, margin <= 144 else { throw QuireError.usage("--margin needs points from 0 to 144") }
            settings.marginPt = margin
        }
        if let value = options.value("line-height") {
            guard let height = Double(value), height >= 0.8, height <= 4 else { throw QuireError.usage("--line-height needs a factor from 0.8 to 4") }
            settings.lineHeight = height
        }
        settings.fontFamily = options.value("font")
        if let value = options.value("align") {
            guard let align = TextAlign(rawValue: value) else { throw QuireError.usage("--align is one of justify, left, right, center, start") }
            settings.textAlign = align
        }
        settings.hyphenation = !options.flag("no-hyphenation")
        settings.publisherStyles = !options.flag("no-publisher-styles")
        if let path = options.value("user-css") {
            guard let data = FileSystem.read(path) else { throw QuireError.cannotOpen(path: path, reason: "cannot read user CSS") }
            settings.userCSS = String(decoding: data, as: UTF8.self)
        }
        guard settings.contentRect.width > 20, settings.contentRect.height > 20 else {
            throw QuireError.usage("the margins leave no room on a \(profile.width)x\(profile.height) page")
        }
        return (settings, profileName)
    }

    static func jobs(_ options: Arguments) throws -> Int {
        try options.integer("jobs") ?? SystemEnvironment.processorCount
    }

    /// "1-5,8,10-" → page numbers (1-based) within 1...count.
    static func pageSelection(_ text: String?, count: Int) throws -> [Int] {
        guard let text else { return Array(1...max(count, 1)).filter { $0 <= count } }
        var pages = Set<Int>()
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace() }
            guard bounds.count <= 2, let low = Int(bounds[0].isEmpty ? "1" : bounds[0]) else {
                throw QuireError.usage("--pages takes ranges such as 1-5,8,10-")
            }
            let high = bounds.count == 2 ? (bounds[1].isEmpty ? count : Int(bounds[1]) ?? -1) : low
            guard low >= 1, high >= low else { throw QuireError.usage("--pages takes ranges such as 1-5,8,10-") }
            // Pages past the end are left out (a range may run past it).
            if low <= count { for page in low...min(high, count) { pages.insert(page) } }
        }
        guard !pages.isEmpty || count == 0 else {
            throw QuireError.usage("--pages \(text): the book has \(count) page\(count == 1 ? "" : "s")")
        }
        return pages.sorted()
    }

    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(arguments, valued: valued, boolean: boolean)
        guard options.positionals.count == 1 else { throw QuireError.usage("render takes one book: quire render BOOK --out DIR") }
        guard let out = options.value("out") else { throw QuireError.usage("render needs --out DIR") }
        let path = options.positionals[0]
        try InputFile.checkReadable(path)
        if try InputFile.sniff(path) == .pdf {
            try PDFRenderCommand.run(options, path: path, out: out)
            return
        }
        for name in ["password", "rotate", "split"] where options.value(name) != nil {
            throw QuireError.usage("--\(name) is for PDF input only")
        }
        if options.flag("crop") { throw QuireError.usage("--crop is for PDF input only") }
        let (settings, profileName) = try settings(options)
        var paint = PaintSettings()
        if let theme = options.value("theme") {
            guard let value = Theme(rawValue: theme) else { throw QuireError.usage("--theme is one of light, sepia, dark") }
            paint.theme = value
        }
        paint.gray = options.flag("gray") || options.flag("dither")
        paint.dither16 = options.flag("dither")
        let jobs = try jobs(options)
        let mapOnly = options.flag("map-only")
        let showProgress = isatty(2) == 1 && !options.flag("quiet")

        // The map's file hashes, read on another core while the book is opened (a serial stretch).
        let identity = Background { try PositionMap.BookIdentity.of(file: path) }
        let container = try EPUBContainer.open(path: path, limits: try options.limits()) { metadata in
            // The dictionary takes milliseconds to load, which the first workers would wait for.
            if settings.hyphenation, let language = metadata.languages.first { Hyphenator.preloadInBackground(language) }
        }
        let layout = try BookLayout(container: container, settings: settings)
        if let file = options.value("image-sizes") {
            // Sizes given up front (benchmarks: the layout a book with perfect width/height attributes gets).
            guard let data = FileSystem.read(file), let object = (try? JSONReader.parse(data)) as? [String: Any] else {
                throw QuireError.cannotOpen(path: file, reason: "expected a JSON object of path → [width, height]")
            }
            layout.knownImageSizes = object.compactMapValues { value in
                guard let size = (value as? [Any])?.compactMap(JSONReader.double), size.count == 2 else { return nil }
                return .measured(width: size[0], height: size[1], hasIntrinsicSize: true)
            }
        }
        if let target = options.value("open-at") {
            // Answered through the full-extent guard before the whole book is laid out.
            writeStdout("\(try OpenAt.resolve(target, layout: layout))\n")
        }
        try Output.createDirectory(out)
        // Without --pages every page is painted: each chapter is painted on its worker as soon as it
        // is laid out (to a provisional name), so memory holds one chapter's display lists per worker.
        let streaming = !mapOnly && options.value("pages") == nil
        let failure = FailureBox()
        let paintSettings = paint
        if !mapOnly { try DelayLoad.requireCairo() }
        if streaming { try Output.createDirectory(out + "/pages") }
        let streamProgress = Progress(total: container.publication.spine.count, enabled: showProgress && streaming, unit: "chapters")
        let spineStep = container.publication.spineStep
        let targets = ChapterPositions.Targets(container.publication)
        // Each chapter's `ChapterPositions`, collected from the layout workers.
        let chapterPositions = Mutex<[Int: ChapterPositions]>([:])
        // Images that could not be drawn (a placeholder box stands in): reported in the map.
        let paintWarnings = Mutex<Set<String>>([])
        let result = layout.layout(jobs: jobs, buildItems: !mapOnly) { chapter in
            // What the map needs from the DOM is taken on the worker; then the DOM can go.
            if let positions = ChapterPositions(chapter: chapter, publication: container.publication, spineStep: spineStep, targets: targets) {
                chapterPositions.withLock { $0[chapter.spineIndex] = positions }
            }
            chapter.document = nil
            guard streaming, !failure.failed else { return }
            let painter = Painter(resources: { try? container.read(path: $0) })
            for index in chapter.pages.indices {
                do {
                    try painter.writePNG(chapter.pages[index], settings: paintSettings, to: out + "/pages/" + Self.provisionalName(chapter.spineIndex, index))
                } catch {
                    failure.record(error)
                }
                chapter.pages[index].items = []
            }
            paintWarnings.withLock { $0.formUnion(painter.imageWarnings) }
            streamProgress.step()
        }
        streamProgress.finish()
        if let error = failure.error { throw error }
        let pages = result.chapters.flatMap(\.pages)
        let selection = try pageSelection(options.value("pages"), count: pages.count)
        let digits = PositionMap.digits(forPageCount: pages.count)
        if streaming {
            // Final names follow the book's page numbers, known only now.
            var number = 1
            for chapter in result.chapters {
                for index in chapter.pages.indices {
                    let from = out + "/pages/" + Self.provisionalName(chapter.spineIndex, index)
                    let to = out + "/" + PositionMap.imageName(forPage: number, digits: digits)
                    guard rename(from, to) == 0 else {
                        throw QuireError.cannotCreateOutput(path: to, reason: String(cString: strerror(errno)))
                    }
                    number += 1
                }
            }
        } else if !mapOnly {
            try Output.createDirectory(out + "/pages")
            let next = Counter()
            let progress = Progress(total: selection.count, enabled: showProgress)
            DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, selection.count))) { _ in
                let painter = Painter(resources: { try? container.read(path: $0) })
                while true {
                    let slot = next.take()
                    guard slot < selection.count, !failure.failed else { break }
                    let number = selection[slot]
                    do {
                        try painter.writePNG(pages[number - 1], settings: paintSettings, to: out + "/" + PositionMap.imageName(forPage: number, digits: digits))
                    } catch {
                        failure.record(error)
                    }
                    progress.step()
                }
                paintWarnings.withLock { $0.formUnion(painter.imageWarnings) }
            }
            progress.finish()
            if let error = failure.error { throw error }
        }
        let map = PositionMap.json(
            layout: layout, result: result, identity: try identity.value(), profileName: profileName, withImages: !mapOnly,
            extraWarnings: paintWarnings.withLock { $0 }.sorted().map { Warning("image-not-drawn", $0) },
            positions: chapterPositions.withLock { $0 })
        try Output.writeAtomically(map, to: out + "/positions.json")
        if let statsPath = options.value("stats") {
            let spacing = result.spacing
            let stats = JSON.object([
                ("pages", .int(pages.count)),
                ("shapingCacheHits", .int(result.shapingHits)), ("shapingCacheMisses", .int(result.shapingMisses)),
                (
                    "justifiedSpaces",
                    .object([
                        ("count", .int(spacing.count)), ("mean", .double(spacing.mean)),
                        ("standardDeviation", .double(spacing.standardDeviation)),
                    ])
                ),
                ("missingGlyphs", .int(result.chapters.reduce(0) { $0 + $1.missingGlyphs })),
                ("settlePasses", .int(result.chapters.reduce(0) { $0 + $1.settle.passes })),
                ("imagesMeasured", .int(result.chapters.reduce(0) { $0 + $1.settle.measured })),
                ("imageSizes", .object(imageSizes(result.chapters).map { ($0.path, JSON.array([.double($0.size.0), .double($0.size.1)])) })),
            ])
            try Output.writeAtomically(stats.serializedBytes() + [0x0A], to: statsPath)
        }
        if !options.flag("quiet") {
            let hitRate = result.shapingHits + result.shapingMisses == 0 ? 0 : 100 * Double(result.shapingHits) / Double(result.shapingHits + result.shapingMisses)
            fputs(
                "quire: \(pages.count) pages\(mapOnly ? "" : ", \(selection.count) painted") → \(out)/ (shaping cache hit rate \(fixedDecimals(hitRate, 1))%)\n",
                stderr)
        }
        // Everything is written: end the process here rather than release the book's layout, map
        // and caches object by object on the way out (about 3 ms of a 150 ms Moby-Dick run).
        exit(0)
    }

    /// Each measured image once (an image used by several chapters has one size), sorted by path:
    /// a JSON object must not repeat a key.
    static func imageSizes(_ chapters: [ChapterLayout]) -> [(path: String, size: (Double, Double))] {
        var sizes: [String: (Double, Double)] = [:]
        for chapter in chapters { sizes.merge(chapter.imageSizes) { first, _ in first } }
        return sizes.sorted { $0.key < $1.key }.map { (path: $0.key, size: $0.value) }
    }
}

final class FailureBox: @unchecked Sendable {
    private let lock = Lock()
    private(set) var error: Error?
    var failed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return error != nil
    }
    func record(_ error: Error) {
        lock.lock()
        if self.error == nil { self.error = error }
        lock.unlock()
    }
}

/// A progress bar on stderr, only when it is a terminal.
final class Progress: @unchecked Sendable {
    private let lock = Lock()
    private let total: Int
    private let enabled: Bool
    private let unit: String
    private var done = 0

    init(total: Int, enabled: Bool, unit: String = "pages") {
        self.total = total
        self.enabled = enabled
        self.unit = unit
    }

    func step() {
        guard enabled else { return }
        lock.lock()
        done += 1
        let filled = total == 0 ? 30 : done * 30 / total
        fputs("\r[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: 30 - filled))] \(done)/\(total) \(unit)", stderr)
        lock.unlock()
    }

    func finish() {
        if enabled { fputs("\n", stderr) }
    }
}

enum Output {
    static func createDirectory(_ path: String) throws {
        do {
            try FileSystem.createDirectory(path)
        } catch {
            throw QuireError.cannotCreateOutput(path: path, reason: error.description)
        }
    }

    /// Writes to a temporary name beside the target, then renames: never a half-written file.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        try writeAtomically(to: path) { write in write(bytes) }
    }

    /// A JSON document and a final newline, streamed (a map is never whole in memory as bytes).
    static func writeAtomically(_ json: JSON, to path: String) throws {
        try writeAtomically(to: path) { write in
            json.serialize(emit: write)
            write([0x0A])
        }
    }

    static func writeAtomically(to path: String, _ produce: ((([UInt8]) -> Void)) -> Void) throws {
        let temporary = path + ".tmp-\(getpid())"
        do {
            try FileSystem.write(to: temporary, produce)
        } catch {
            unlink(temporary)
            throw QuireError.cannotCreateOutput(path: path, reason: error.description)
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw QuireError.cannotCreateOutput(path: path, reason: String(cString: strerror(errno)))
        }
    }
}

/// `--open-at TARGET`: a page number, `last`, or a Locator (JSON) → the 1-based page it opens at.
/// The first page of the book answers at once; anything else waits for the chapters it depends on.
extension RenderCommand {
    static func provisionalName(_ spineIndex: Int, _ page: Int) -> String {
        ".chapter-\(spineIndex)-page-\(page).png"
    }
}

enum OpenAt {
    static func resolve(_ target: String, layout: BookLayout) throws -> Int {
        let spine = layout.container.publication.spine
        func handle(_ index: Int) -> ChapterHandle { ChapterHandle(layout: layout, spineIndex: index) }
        func pagesBefore(_ index: Int) -> Int { (0..<index).reduce(0) { $0 + handle($1).pageCount } }
        if target == "last" {
            return pagesBefore(spine.count - 1) + handle(spine.count - 1).pageCount
        }
        if let number = Int(target) {
            guard number >= 1 else { throw QuireError.usage("--open-at takes a page number from 1, last, or a locator") }
            if number == 1 {
                _ = handle(0).firstPage()
                return 1
            }
            var remaining = number
            for index in spine.indices {
                let count = handle(index).pageCount
                if remaining <= count { return number }
                remaining -= count
            }
            throw QuireError.unresolvable("page \(number) is past the end of the book")
        }
        guard let locator = (try? JSONReader.parse(target)) as? [String: Any],
            let href = locator["href"] as? String
        else { throw QuireError.usage("--open-at takes a page number, last, or a locator JSON object with an href") }
        let path = PercentEncoding.decode(String(href.split(separator: "#").first ?? ""))
        guard let index = spine.firstIndex(where: { item in
            let manifest = layout.container.publication.item(for: item)
            return manifest?.path == path || manifest?.href == path
        }) else { throw QuireError.unresolvable("href '\(href)' is not in the book") }
        let progression = JSONReader.double((locator["locations"] as? [String: Any])?["progression"]) ?? 0
        let chapter = handle(index)
        if progression == 0 {
            // The chapter's first page: its offset cannot depend on what follows; only the pages
            // before it must be known.
            return pagesBefore(index) + 1
        }
        let settled = chapter.settled()
        let offset = Int((progression * Double(settled.textLength)).rounded())
        guard let page = chapter.pageIndex(containing: offset) else { throw QuireError.unresolvable("progression \(progression) is outside the chapter") }
        return pagesBefore(index) + page + 1
    }
}

enum ProfilesCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        _ = try Arguments(arguments, valued: [], boolean: [])
        for profile in PageProfile.all {
            writeStdout("\(profile.name.padded(toLength: 18)) \(profile.width)x\(profile.height) px, \(Int(profile.dpi)) dpi  \(profile.description)\n")
        }
    }
}
