@preconcurrency import Glibc

import Quire
import QuireCore

enum RenderCommand {
    static let valued: Set<String> = Arguments.limitFlags.union([
        "out", "profile", "size", "stats", "open-at", "image-sizes", "dpi", "font-size", "margin", "line-height", "font", "align", "theme", "jobs", "pages", "user-css",
        "password", "rotate", "split", "spreads", "flow", "writing-mode", Arguments.timeoutFlag,
    ])
    static let boolean: Set<String> = ["gray", "dither", "no-hyphenation", "map-only", "no-publisher-styles", "quiet", "crop", "force"]

    /// The geometry and reading settings of --profile (or `profileName`, for a batch's profiles)
    /// with --size, --dpi, --font-size, --margin, --line-height, --font, --align and the rest.
    static func settings(_ options: Arguments, profileName named: String? = nil) throws -> (LayoutSettings, String?) {
        var profile = PageProfile.named("kobo-clara")!
        var profileName: String? = "kobo-clara"
        if let name = named ?? options.value("profile") {
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
        if let value = options.value("writing-mode") {
            guard let mode = WritingModeChoice(rawValue: value) else { throw QuireError.usage("--writing-mode is one of auto, horizontal") }
            settings.writingMode = mode
        }
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

    static func run(_ arguments: ArraySlice<String>) throws {
        // Before any worker starts: a stopped render takes its unfinished output with it.
        RunGuard.cleanUpOnSignals()
        let options = try Arguments(arguments, valued: valued, boolean: boolean)
        guard options.positionals.count == 1 else { throw QuireError.usage("render takes one book: quire render BOOK --out DIR") }
        guard let out = options.value("out") else { throw QuireError.usage("render needs --out DIR") }
        let path = options.positionals[0]
        try options.startTimeout(for: path)
        let isPDF = try Book.format(ofFile: path) == .pdf
        var paint = PaintSettings()
        if !isPDF {
            for name in ["password", "rotate", "split"] where options.value(name) != nil {
                throw QuireError.usage("--\(name) is for PDF input only")
            }
            if options.flag("crop") { throw QuireError.usage("--crop is for PDF input only") }
            if let theme = options.value("theme") {
                guard let value = Theme(rawValue: theme) else { throw QuireError.usage("--theme is one of light, sepia, dark") }
                paint.theme = value
            }
        } else if options.value("spreads") != nil {
            throw QuireError.usage("--spreads is for EPUB input only (a PDF's spreads are split with --split)")
        } else if options.value("flow") != nil {
            throw QuireError.usage("--flow is for EPUB input only")
        } else if options.value("writing-mode") != nil {
            throw QuireError.usage("--writing-mode is for EPUB input only")
        }
        paint.gray = options.flag("gray") || options.flag("dither")
        paint.dither16 = options.flag("dither")
        var settings = isPDF ? try pdfSettings(options) : try paginationSettings(options)
        if !isPDF {
            // Spreads and the book's orientation, as a reading system on this page box would show it.
            let mode = options.value("spreads") ?? "auto"
            guard let spreads = SpreadMode(rawValue: mode) else { throw QuireError.usage("--spreads is one of auto, none, both") }
            settings.spreads = spreads
            let flow = options.value("flow") ?? "auto"
            guard let value = FlowMode(rawValue: flow) else { throw QuireError.usage("--flow is one of auto, paginated, scrolled") }
            settings.flow = value
        }
        let pages = try options.value("pages").map(PageRanges.init(parsing:))
        let jobs = try jobs(options)
        let mapOnly = options.flag("map-only")
        let showProgress = isatty(2) == 1 && !options.flag("quiet")

        let book = try Book.open(path, limits: try options.limits(), password: options.value("password"), preloadHyphenation: settings.layout.hyphenation)
        let pagination = try Pagination(book, settings: settings)
        if let target = options.value("open-at") {
            // Answered through the full-extent guard before the whole book is laid out.
            writeStdout("\(try OpenAt.pageNumber(target, pagination))\n")
        }
        var request = WriteRequest(directory: out, paint: mapOnly ? nil : paint)
        request.pages = pages
        request.jobs = jobs
        request.keepOtherFiles = options.flag("force")
        let progress = Progress(enabled: showProgress && !mapOnly)
        request.progress = { done, total, unit in progress.show(done, total, unit) }
        let report = try pagination.write(request)
        progress.finish()
        if let statsPath = options.value("stats"), let statistics = report.statistics {
            try FileSystem.writeAtomically(statisticsJSON(statistics, pages: report.pageCount).serializedBytes() + [0x0A], to: statsPath)
        }
        if !options.flag("quiet") {
            if let sources = report.sourcePageCount {
                fputs("quire: \(sources) PDF pages → \(report.pageCount) output pages, \(report.painted) rendered → \(out)/\n", stderr)
            } else {
                let statistics = report.statistics
                let lookups = (statistics?.shapingHits ?? 0) + (statistics?.shapingMisses ?? 0)
                let hitRate = lookups == 0 ? 0 : 100 * Double(statistics?.shapingHits ?? 0) / Double(lookups)
                fputs(
                    "quire: \(report.pageCount) pages\(mapOnly ? "" : ", \(report.painted) painted") → \(out)/ (shaping cache hit rate \(fixedDecimals(hitRate, 1))%)\n",
                    stderr)
            }
        }
        // Everything is written: end the process here rather than release the book's layout, map
        // and caches object by object on the way out (about 3 ms of a 150 ms Moby-Dick run).
        exit(0)
    }

    /// `--stats`: shaping cache, justification, settling and the measured image sizes.
    static func statisticsJSON(_ statistics: LayoutStatistics, pages: Int) -> JSON {
        let spacing = statistics.spacing
        return JSON.object([
            ("pages", .int(pages)),
            ("shapingCacheHits", .int(statistics.shapingHits)), ("shapingCacheMisses", .int(statistics.shapingMisses)),
            (
                "justifiedSpaces",
                .object([
                    ("count", .int(spacing.count)), ("mean", .double(spacing.mean)),
                    ("standardDeviation", .double(spacing.standardDeviation)),
                ])
            ),
            ("missingGlyphs", .int(statistics.missingGlyphs)),
            ("settlePasses", .int(statistics.settlePasses)),
            ("imagesMeasured", .int(statistics.imagesMeasured)),
            ("imageSizes", .object(statistics.imageSizes.map { ($0.path, JSON.array([.double($0.width), .double($0.height)])) })),
        ])
    }

    /// The reading settings of an EPUB render, with `--image-sizes` (sizes given up front, for
    /// benchmarks: the layout a book with perfect width/height attributes gets).
    static func paginationSettings(_ options: Arguments) throws -> PaginationSettings {
        let (layout, name) = try settings(options)
        var settings = PaginationSettings(layout: layout, profileName: name)
        if let file = options.value("image-sizes") {
            guard let data = FileSystem.read(file), let object = (try? JSONReader.parse(data)) as? [String: Any] else {
                throw QuireError.cannotOpen(path: file, reason: "expected a JSON object of path → [width, height]")
            }
            settings.knownImageSizes = object.compactMapValues { value in
                guard let size = (value as? [Any])?.compactMap(JSONReader.double), size.count == 2 else { return nil }
                return .measured(width: size[0], height: size[1], hasIntrinsicSize: true)
            }
        }
        return settings
    }

    /// A PDF's geometry (`--dpi`, or a box to fit from `--profile`/`--size`) and page preparation.
    static func pdfSettings(_ options: Arguments) throws -> PaginationSettings {
        let hasGeometry = options.value("profile") != nil || options.value("size") != nil
        var settings: PaginationSettings
        if let dpi = options.value("dpi"), !hasGeometry {
            guard let value = Double(dpi), value >= 36, value <= 1200 else { throw QuireError.usage("--dpi needs a number from 36 to 1200") }
            settings = PaginationSettings(layout: LayoutSettings(profile: PageProfile.named("kobo-clara")!))
            settings.pdfScale = .dpi(value)
        } else {
            let (layout, name) = try self.settings(options)
            settings = PaginationSettings(layout: layout, profileName: name)
        }
        var rotation = Rotation.none
        if let text = options.value("rotate") {
            guard let degrees = Int(text), [0, 90, 180, 270].contains(degrees), let value = Rotation(degrees: degrees) else {
                throw QuireError.usage("--rotate is one of 0, 90, 180, 270")
            }
            rotation = value
        }
        var split = SplitMode.none
        if let text = options.value("split") {
            guard let value = SplitMode(rawValue: text) else { throw QuireError.usage("--split is one of ltr, rtl, none") }
            split = value
        }
        settings.pdfPreparation = PagePreparation(rotate: rotation, crop: options.flag("crop"), split: split)
        return settings
    }
}

/// A progress bar on stderr, only when it is a terminal.
final class Progress: Sendable {
    private let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ done: Int, _ total: Int, _ unit: String) {
        guard enabled else { return }
        let filled = total == 0 ? 30 : min(30, done * 30 / total)
        fputs("\r[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: 30 - filled))] \(done)/\(total) \(unit)", stderr)
    }

    func finish() {
        if enabled { fputs("\n", stderr) }
    }
}

/// `--open-at TARGET`: a page number, `last`, or a Locator (JSON) → the 1-based page it opens at.
/// The first page of the book answers at once; anything else waits for the chapters it depends on.
enum OpenAt {
    static func pageNumber(_ target: String, _ pagination: Pagination) throws -> Int {
        if target == "last" { return try pagination.pageNumber(of: pagination.resolve(.lastPage)) }
        if let number = Int(target) {
            guard number >= 1 else { throw QuireError.usage("--open-at takes a page number from 1, last, or a locator") }
            return try pagination.pageNumber(of: pagination.resolve(.page(number)))
        }
        guard let object = (try? JSONReader.parse(target)) as? [String: Any], object["href"] is String else {
            throw QuireError.usage("--open-at takes a page number, last, or a locator JSON object with an href")
        }
        return try pagination.pageNumber(of: pagination.resolve(.locator(Locator(json: object))))
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
