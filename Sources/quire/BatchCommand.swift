@preconcurrency import Glibc
import Quire
import QuireBatch
import QuireCore

/// `quire batch INPUT... --out ROOT`: arguments, the progress bar, the JSON log and the summary;
/// the work is QuireBatch's.
enum BatchCommand {
    static let exitSomeFailed: Int32 = 75
    /// Geometry and reading settings, as `quire render` takes them, applied to every profile.
    static let readingSettings: Set<String> = ["size", "dpi", "font-size", "margin", "line-height", "font", "align", "user-css", "writing-mode"]

    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(
            arguments, valued: Arguments.limitFlags.union(["out", "profile", "profiles", "jobs", "shard", "shard-count", "json-log", "theme", "cache", "cache-size"])
                .union(readingSettings),
            boolean: ["map-only", "gray", "dither", "quiet", "no-cache", "no-hyphenation", "no-publisher-styles"])
        guard !options.positionals.isEmpty else { throw QuireError.usage("batch needs books, directories or @lists: quire batch INPUT... --out ROOT") }
        guard let root = options.value("out") else { throw QuireError.usage("batch needs --out ROOT") }
        let profiles = try self.profiles(options)
        let shard: Shard
        switch options.value("shard") {
        case nil: shard = .whole
        case "auto"?: shard = try Shard.fromEnvironment(countOverride: try options.integer("shard-count"))
        case let text?: shard = try Shard(parsing: text)
        }
        let jobs = try options.integer("jobs") ?? SystemEnvironment.processorCount
        guard jobs >= 1 else { throw QuireError.usage("--jobs needs at least 1") }
        let books = try BatchInputs.books(options.positionals)
        guard !books.isEmpty else { throw QuireError.usage("no .epub or .pdf files in \(options.positionals.joined(separator: " "))") }
        let log = try options.value("json-log").map(JSONLog.init(path:))
        let runner = try BatchRunner(root: root, jobs: jobs)
        if !options.flag("no-cache") {
            guard options.value("cache") == nil || options.value("cache") != "" else { throw QuireError.usage("--cache needs a directory") }
            let size = try options.value("cache-size").map(parseSize) ?? defaultCacheSize
            runner.cache = try LayoutCache(directory: options.value("cache") ?? root + "/.cache", maxBytes: size)
        } else if options.value("cache") != nil || options.value("cache-size") != nil {
            throw QuireError.usage("--no-cache takes neither --cache nor --cache-size")
        }
        let (items, unreadable) = BatchRunner.items(books: books, profiles: profiles, shard: shard)
        let bar = BatchProgress(enabled: isatty(2) == 1 && !options.flag("quiet"), total: items.count)
        runner.willStart = { number, total, item in
            bar.start(number, item)
            log?.write([("event", .string("start")), ("item", .int(number)), ("of", .int(total)), ("path", .string(item.path)), ("profile", .string(item.profile.name))])
        }
        runner.didFinish = { result in
            bar.finish(result)
            log?.write(logLine(result))
        }
        log?.write([("event", .string("batch")), ("books", .int(books.count)), ("profiles", .int(profiles.count)), ("items", .int(items.count)), ("shard", .string(shard.description))])
        let started = SystemEnvironment.monotonicSeconds()
        let results: [BatchResult]
        do {
            results = try runner.run(items, alreadyFailed: unreadable)
        } catch {
            bar.end()
            log?.write([("event", .string("stopped")), ("reason", .string("\(error)"))])
            throw error
        }
        bar.end()
        let seconds = SystemEnvironment.monotonicSeconds() - started
        let summary = Summary(results)
        log?.write([
            ("event", .string("summary")), ("made", .int(summary.made)), ("skipped", .int(summary.skipped)), ("failed", .int(summary.failed.count)),
            ("rendered", .int(summary.made)), ("pages", .int(summary.pages)), ("chaptersLaidOut", .int(summary.laidOut)),
            ("chaptersFromCache", .int(summary.fromCache)), ("seconds", .double((seconds * 1000).rounded() / 1000)),
        ])
        if !options.flag("quiet") { fputs(summary.table(seconds: seconds, root: root, shard: shard), stderr) }
        if !summary.failed.isEmpty { exit(exitSomeFailed) }
    }

    /// `--profile NAME` (repeated, or comma-separated) with --theme/--gray/--dither/--map-only, or
    /// `--profiles FILE`: a JSON array of {"name", "profile", "theme", "gray", "dither", "mapOnly"}.
    static func profiles(_ options: Arguments) throws -> [BatchProfile] {
        if let file = options.value("profiles") {
            guard options.values("profile").isEmpty else { throw QuireError.usage("give --profile or --profiles, not both") }
            guard let bytes = FileSystem.read(file) else { throw QuireError.cannotOpen(path: file, reason: "cannot be read") }
            guard let list = (try? JSONReader.parse(bytes)) as? [[String: Any]], !list.isEmpty else {
                throw QuireError.usage("\(file): expected a JSON array of objects such as {\"profile\": \"kobo-clara\", \"theme\": \"dark\"}")
            }
            let profiles = try list.map { entry -> BatchProfile in
                guard let name = entry["profile"] as? String else { throw QuireError.usage("\(file): every entry needs a \"profile\"") }
                return try profile(
                    named: name, label: entry["name"] as? String, options: options, theme: entry["theme"] as? String,
                    gray: entry["gray"] as? Bool ?? false, dither: entry["dither"] as? Bool ?? false, mapOnly: entry["mapOnly"] as? Bool ?? false)
            }
            return try unique(profiles)
        }
        let names = options.values("profile").flatMap { $0.split(separator: ",").map(String.init) }
        // --size makes one page geometry of its own, named by it.
        if options.value("size") != nil {
            guard names.isEmpty else { throw QuireError.usage("--size makes one custom profile; give it without --profile") }
            return [try profile(named: nil, label: nil, options: options, theme: options.value("theme"), gray: options.flag("gray"), dither: options.flag("dither"), mapOnly: options.flag("map-only"))]
        }
        return try unique(
            (names.isEmpty ? ["kobo-clara"] : names).map {
                try profile(named: $0, label: nil, options: options, theme: options.value("theme"), gray: options.flag("gray"), dither: options.flag("dither"), mapOnly: options.flag("map-only"))
            })
    }

    /// A named profile (nil: the custom geometry of --size) with the command line's reading settings.
    static func profile(named given: String?, label: String?, options: Arguments, theme: String?, gray: Bool, dither: Bool, mapOnly: Bool) throws -> BatchProfile {
        let (layout, profileName) = try RenderCommand.settings(options, profileName: given)
        let name = given ?? options.value("size") ?? "custom"
        let pagination = PaginationSettings(layout: layout, profileName: profileName)
        guard !mapOnly else { return BatchProfile(name: label ?? name + "-map", pagination: pagination, paint: nil) }
        var paint = PaintSettings()
        if let theme {
            guard let value = Theme(rawValue: theme) else { throw QuireError.usage("theme is one of light, sepia, dark; not '\(theme)'") }
            paint.theme = value
        }
        paint.gray = gray || dither
        paint.dither16 = dither
        var label = label ?? name
        if paint.theme != .light, label == name { label += "-" + paint.theme.rawValue }
        if paint.gray, label.hasPrefix(name), !label.contains("-gray") { label += dither ? "-gray16" : "-gray" }
        return BatchProfile(name: label, pagination: pagination, paint: paint)
    }

    static func unique(_ profiles: [BatchProfile]) throws -> [BatchProfile] {
        var names = Set<String>()
        for profile in profiles where !names.insert(profile.name).inserted { throw QuireError.usage("profile '\(profile.name)' is given twice") }
        return profiles
    }

    static let defaultCacheSize: Int64 = 4 << 30

    /// `500M`, `4G`, `1T` or plain bytes.
    static func parseSize(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = text.uppercased()
        var unit: Int64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits.removeLast()
        }
        guard let value = Int64(digits), value > 0, value <= Int64.max / unit else {
            throw QuireError.usage("--cache-size takes a size such as 500M or 4G, not '\(text)'")
        }
        return value * unit
    }

    static func logLine(_ result: BatchResult) -> [(String, JSON)] {
        var line: [(String, JSON)] = [("path", .string(result.item.path)), ("profile", .string(result.item.profile.name))]
        switch result.outcome {
        case .made(let pages, let painted, let seconds, let laidOut, let fromCache):
            line = [("event", .string("made"))] + line + [
                ("directory", .string(result.item.directory)), ("pages", .int(pages)), ("painted", .int(painted)),
                ("chaptersLaidOut", .int(laidOut)), ("chaptersFromCache", .int(fromCache)), ("seconds", .double((seconds * 1000).rounded() / 1000)),
            ]
        case .skipped(let pages):
            line = [("event", .string("skipped"))] + line + [("directory", .string(result.item.directory)), ("pages", .int(pages))]
        case .failed(let kind, let reason):
            line = [("event", .string("failed"))] + line + [("kind", .string(kind)), ("reason", .string(reason))]
        }
        return line
    }

    struct Summary {
        var made = 0
        var skipped = 0
        var pages = 0
        var laidOut = 0
        var fromCache = 0
        var failed: [BatchResult] = []

        init(_ results: [BatchResult]) {
            for result in results {
                switch result.outcome {
                case .made(let count, _, _, let chapters, let cached):
                    made += 1
                    pages += count
                    laidOut += chapters
                    fromCache += cached
                case .skipped: skipped += 1
                case .failed: failed.append(result)
                }
            }
        }

        func table(seconds: Double, root: String, shard: Shard) -> String {
            var text = "quire batch\(shard.count > 1 ? " (shard \(shard))" : ""): \(made) made, \(skipped) already done, \(failed.count) failed → \(root)/\n"
            let rate = seconds > 0 ? Double(pages) / seconds : 0
            text += "  \(pages) pages made in \(fixedDecimals(seconds, 1)) s (\(fixedDecimals(rate, 1)) pages/s)\n"
            if laidOut + fromCache > 0 { text += "  chapters: \(laidOut) laid out, \(fromCache) from the layout cache\n" }
            if !failed.isEmpty {
                text += "  failed:\n"
                for result in failed {
                    guard case .failed(let kind, let reason) = result.outcome else { continue }
                    text += "    \(kind.padding(11))\(result.item.profile.name.padding(20))\(result.item.path): \(reason)\n"
                }
            }
            return text
        }
    }
}

/// JSON lines for machines: each event one line, written with one append.
final class JSONLog {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw QuireError.cannotCreateOutput(path: path, reason: String(cString: strerror(errno))) }
    }

    deinit { close(descriptor) }

    func write(_ members: [(String, JSON)]) {
        let bytes = JSON.object(members).serializedBytes(pretty: false) + [10]
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}

/// The bar on stderr: books done of total, pages/s and the time left.
final class BatchProgress {
    let enabled: Bool
    let total: Int
    let started = SystemEnvironment.monotonicSeconds()
    var done = 0
    var pages = 0

    init(enabled: Bool, total: Int) {
        self.enabled = enabled
        self.total = total
    }

    func start(_ number: Int, _ item: BatchItem) { draw(item.path) }

    func finish(_ result: BatchResult) {
        done += 1
        if case .made(let count, _, _, _, _) = result.outcome { pages += count }
        draw(result.item.path)
    }

    func draw(_ path: String) {
        guard enabled, total > 0 else { return }
        let elapsed = SystemEnvironment.monotonicSeconds() - started
        let filled = min(30, done * 30 / total)
        let rate = elapsed > 0 ? Double(pages) / elapsed : 0
        var eta = "--:--"
        if done > 0 {
            let left = Int(elapsed / Double(done) * Double(total - done))
            eta = "\(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60)"
        }
        let name = String(path.split(separator: "/").last ?? "").prefix(30)
        fputs("\r\u{1B}[K[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: 30 - filled))] \(done)/\(total) · \(fixedDecimals(rate, 0)) pages/s · ETA \(eta) · \(name)", stderr)
    }

    func end() { if enabled { fputs("\r\u{1B}[K", stderr) } }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
