import Glibc
import Quire
import QuireCore

// A batch is a list of (book, profile) items. Each item's output is content-addressed,
// ROOT/<book sha256 prefix>/<profile key>/, and is built under a temporary name beside it
// (`.partial-<key>-<host>-<pid>`), finished with done.json and renamed into place in one step.
// So a directory with its final name is always complete: a re-run skips it, a kill at any
// moment leaves only a partial directory (cleared by the next run on the same host), and two
// runs that overlap on an item both finish it with the same bytes, the first rename winning.

/// What became of one item.
public enum BatchOutcome: Sendable {
    /// Made by this run: its chapters laid out, or taken from the layout cache.
    case made(pages: Int, painted: Int, seconds: Double, laidOut: Int, fromCache: Int)
    /// Finished before (by an earlier run or another shard): nothing was laid out.
    case skipped(pages: Int)
    /// The book cannot be rendered: the kind (missing, corrupt, drm, password, unsupported) and why.
    case failed(kind: String, reason: String)
}

public struct BatchResult: Sendable {
    public var item: BatchItem
    public var outcome: BatchOutcome
}

/// Runs a batch's items one after another, each laid out with `jobs` workers.
public final class BatchRunner {
    public let root: String
    public let jobs: Int
    /// Told before each item (its number, the total) and after it.
    public var willStart: ((Int, Int, BatchItem) -> Void)?
    public var didFinish: ((BatchResult) -> Void)?
    /// Pages painted so far in the item being made (for a progress bar).
    public var pageProgress: (@Sendable (Int, Int) -> Void)?
    /// Settled chapters shared by every item (and run) at the same layout.
    public var cache: LayoutCache?

    let host: String
    let pid = getpid()

    public init(root: String, jobs: Int) throws {
        self.root = root
        self.jobs = jobs
        host = SystemEnvironment.hostNameForFiles()
        do { try FileSystem.createDirectory(root) } catch { throw QuireError.cannotCreateOutput(path: root, reason: error.description) }
        guard access(root, W_OK) == 0 else { throw QuireError.cannotCreateOutput(path: root, reason: String(cString: strerror(errno))) }
    }

    /// The items for `books` at every profile, with each book's SHA-256 (a book that cannot be
    /// read fails here, once per profile, so it is reported like any other failure).
    public static func items(books: [String], profiles: [BatchProfile], shard: Shard) -> (items: [BatchItem], unreadable: [BatchResult]) {
        var items: [BatchItem] = []
        var unreadable: [BatchResult] = []
        for path in books {
            do {
                let sha256 = try PositionMap.sha256(ofFile: path)
                for profile in profiles {
                    let item = BatchItem(path: path, sha256: sha256, profile: profile)
                    if shard.owns(key: item.shardKey) { items.append(item) }
                }
            } catch {
                let failure = BookFailure(error)
                for profile in profiles {
                    let item = BatchItem(path: path, sha256: "", profile: profile)
                    if shard.owns(key: hexString(SHA256.hash(Array(path.utf8)))) {
                        unreadable.append(BatchResult(item: item, outcome: .failed(kind: Self.kind(failure), reason: failure.reason)))
                    }
                }
            }
        }
        return (items, unreadable)
    }

    /// Runs every item. Book failures are recorded and the batch goes on; a failure to write the
    /// root (disk full, unwritable) stops it with that error after recording what was done.
    public func run(_ items: [BatchItem], alreadyFailed: [BatchResult] = []) throws -> [BatchResult] {
        clearLeftovers()
        var results = alreadyFailed
        for result in alreadyFailed { didFinish?(result) }
        var stop: QuireError?
        for (number, item) in items.enumerated() {
            willStart?(number + 1, items.count, item)
            do {
                let result = BatchResult(item: item, outcome: try run(item))
                // What an item freed goes back to the system: without this, the memory the layout
                // and paint threads freed stays in glibc's per-thread arenas, and a long batch's
                // peak RSS grows item by item (892 MB over the corpus, against 215 MB for its
                // largest book alone).
                SystemEnvironment.releaseFreedMemory()
                results.append(result)
                didFinish?(result)
            } catch {
                stop = error
                break
            }
        }
        cache?.trim()
        // The error that stopped the batch is the one to report, even if the index can't be written either.
        if let stop {
            try? BatchIndex.update(root: root, with: results)
            throw stop
        }
        try BatchIndex.update(root: root, with: results)
        return results
    }

    /// One item: skipped when its directory is there, else built and renamed into place.
    /// Throws only for errors that stop the batch (the root cannot be written).
    func run(_ item: BatchItem) throws(QuireError) -> BatchOutcome {
        let final = root + "/" + item.directory
        if let pages = Self.finishedPages(final) { return .skipped(pages: pages) }
        let parent = root + "/" + String(item.sha256.prefix(16))
        do { try FileSystem.createDirectory(parent) } catch { throw QuireError.cannotCreateOutput(path: parent, reason: error.description) }
        let partial = parent + "/.partial-\(item.profile.key)-\(host)-\(pid)"
        FileSystem.removeTree(partial)
        let started = SystemEnvironment.monotonicSeconds()
        let report: WriteReport
        var pagination: Pagination?
        do {
            let book = try Book.open(item.path, preloadHyphenation: item.profile.pagination.layout.hyphenation)
            // The file may have changed since it was hashed: the directory must hold what its name says.
            guard try book.identity().sha256 == item.sha256 else { throw QuireError.io("\(item.path) changed while the batch ran") }
            var settings = item.profile.pagination
            settings.layoutCache = cache
            let laidOut = try Pagination(book, settings: settings)
            pagination = laidOut
            var request = WriteRequest(directory: partial, paint: item.profile.paint)
            // The partial directory is this run's own and is renamed into place whole.
            request.staged = false
            request.jobs = jobs
            let progress = pageProgress
            request.progress = { done, total, _ in progress?(done, total) }
            report = try laidOut.write(request)
        } catch let error as QuireError where Self.stopsTheBatch(error) {
            FileSystem.removeTree(partial)
            throw error
        } catch {
            FileSystem.removeTree(partial)
            let failure = BookFailure(error)
            return .failed(kind: Self.kind(failure), reason: failure.reason)
        }
        let seconds = SystemEnvironment.monotonicSeconds() - started
        let done = JSON.object([
            ("format", .string("quire-batch-item")), ("version", .int(1)),
            ("engine", .string(PositionMap.engineVersion)), ("quire", .string(QuireVersion.string)),
            ("book", .object([("sha256", .string(item.sha256)), ("title", .optional(report.map.book.title))])),
            ("profile", .string(item.profile.name)), ("settings", item.profile.settingsJSON),
            // No timing: two runs that make the same item write the same bytes (the log has the time).
            ("pageCount", .int(report.pageCount)), ("painted", .int(report.painted)),
        ])
        do {
            try FileSystem.writeAtomically(done.serializedBytes(pretty: true) + [10], to: partial + "/done.json")
        } catch {
            FileSystem.removeTree(partial)
            throw error
        }
        if rename(partial, final) != 0 {
            let code = errno
            FileSystem.removeTree(partial)
            // Another run finished the same item first: its bytes are the same.
            guard code == EEXIST || code == ENOTEMPTY, let pages = Self.finishedPages(final) else {
                throw QuireError.cannotCreateOutput(path: final, reason: String(cString: strerror(code)))
            }
            return .skipped(pages: pages)
        }
        let chapters = pagination?.chapterCounts ?? (laidOut: 0, fromCache: 0)
        return .made(pages: report.pageCount, painted: report.painted, seconds: seconds, laidOut: chapters.laidOut, fromCache: chapters.fromCache)
    }

    /// The page count of a finished item directory; nil when there is none.
    static func finishedPages(_ directory: String) -> Int? {
        guard let bytes = FileSystem.read(directory + "/done.json"), let object = (try? JSONReader.parse(bytes)) as? [String: Any] else { return nil }
        return object["pageCount"] as? Int
    }

    /// Partial directories this host left behind in runs that are gone (killed, crashed).
    /// Another host's are left alone: its run may still be going.
    func clearLeftovers() {
        for book in FileSystem.contents(ofDirectory: root) ?? [] where !book.hasPrefix(".") {
            let directory = root + "/" + book
            for name in FileSystem.contents(ofDirectory: directory) ?? [] where name.hasPrefix(".partial-") {
                let parts = name.split(separator: "-")
                guard parts.count >= 4, let owner = Int32(parts[parts.count - 1]) else { continue }
                let ownerHost = parts[2..<(parts.count - 1)].joined(separator: "-")
                guard ownerHost == host, owner != pid, kill(owner, 0) != 0, errno == ESRCH else { continue }
                FileSystem.removeTree(directory + "/" + name)
            }
        }
    }

    static func stopsTheBatch(_ error: QuireError) -> Bool {
        switch error {
        case .cannotCreateOutput, .io: return true
        default: return false
        }
    }

    public static func kind(_ failure: BookFailure) -> String {
        switch failure {
        case .missing: return "missing"
        case .corrupt: return "corrupt"
        case .drm: return "drm"
        case .passwordRequired: return "password"
        case .unsupported: return "unsupported"
        }
    }
}
