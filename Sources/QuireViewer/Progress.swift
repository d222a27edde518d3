import Dispatch
import Glibc
import Quire
import QuireCore

// Reading progress: one JSON file for every book the viewer has shown, keyed by the book's
// SHA-256 so a renamed or moved file keeps its place. A position is a semantic Locator (never a
// page number, which means nothing at another geometry), with KOReader's partial-MD5 document id
// and the XPointer beside it so a kosync client can push it as it is.

/// What is saved for one book.
public struct SavedProgress: Sendable, Equatable {
    /// Where the reader was: the start of the page, or the spot a resize kept on screen.
    public var locator: Locator
    /// KOReader's document id (`util.partialMD5`).
    public var koreaderDocument: String
    /// 0…1 over the book, as kosync's `percentage`.
    public var percentage: Double
    /// The page and total where it was saved, for people; the Locator is what is read back.
    public var page: Int
    public var pageCount: Int?
    /// Saved on the book's last page.
    public var finished: Bool
    public var title: String?
    /// The last path the book was opened from.
    public var path: String

    public init(
        locator: Locator, koreaderDocument: String, percentage: Double, page: Int, pageCount: Int?, finished: Bool, title: String?, path: String
    ) {
        self.locator = locator
        self.koreaderDocument = koreaderDocument
        self.percentage = percentage
        self.page = page
        self.pageCount = pageCount
        self.finished = finished
        self.title = title
        self.path = path
    }

    /// The entry as `quire progress --json` prints it: the book's SHA-256 first.
    public func jsonWithKey(_ sha256: String) -> JSON {
        guard case .object(let members) = json else { return json }
        return .object([("sha256", .string(sha256))] + members)
    }

    var json: JSON {
        var members: [(String, JSON)] = [("title", .optional(title)), ("path", .string(path)), ("locator", locator.json)]
        if let xpointer = locator.locations.xpointer { members.append(("xpointer", .string(xpointer))) }
        members += [
            ("koreaderDocument", .string(koreaderDocument)), ("percentage", .double(percentage)), ("page", .int(page)),
            ("pageCount", pageCount.map { .int($0) } ?? .null), ("finished", .bool(finished)),
        ]
        return .object(members)
    }

    init(json object: [String: Any]) throws {
        guard let locator = object["locator"] as? [String: Any] else { throw QuireError.usage("a progress entry has no locator") }
        self.locator = try Locator(json: locator)
        koreaderDocument = object["koreaderDocument"] as? String ?? ""
        percentage = JSONReader.double(object["percentage"]) ?? 0
        page = object["page"] as? Int ?? 0
        pageCount = object["pageCount"] as? Int
        finished = object["finished"] as? Bool ?? false
        title = object["title"] as? String
        path = object["path"] as? String ?? ""
    }
}

/// `$XDG_STATE_HOME/quire/progress.json` (else `~/.local/state/quire/progress.json`).
public struct ProgressStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public static func standard(environment: [String: String] = SystemEnvironment.all) throws -> ProgressStore {
        let state: String
        if let value = environment["XDG_STATE_HOME"], value.hasPrefix("/") {
            state = value
        } else if let home = environment["HOME"], !home.isEmpty {
            state = home + "/.local/state"
        } else {
            throw QuireError.usage("neither XDG_STATE_HOME nor HOME is set: nowhere to keep reading progress")
        }
        return ProgressStore(path: state + "/quire/progress.json")
    }

    /// Every saved book, by SHA-256. A missing file is no progress; a damaged one is an error
    /// (it is never overwritten, so nothing saved is lost).
    public func all() throws -> [String: SavedProgress] {
        guard let bytes = FileSystem.read(path) else {
            if FileSystem.exists(path) { throw QuireError.cannotOpen(path: path, reason: "cannot be read") }
            return [:]
        }
        guard let object = (try? JSONReader.parse(bytes)) as? [String: Any], object["format"] as? String == "quire-progress",
            let books = object["books"] as? [String: Any]
        else {
            throw QuireError.cannotOpen(path: path, reason: "not a Quire progress file; move it away to start afresh")
        }
        guard object["version"] as? Int == 1 else {
            throw QuireError.cannotOpen(path: path, reason: "progress format version \(object["version"] ?? "?") is not 1")
        }
        var result: [String: SavedProgress] = [:]
        for (key, value) in books {
            guard let entry = value as? [String: Any] else { continue }
            result[key] = try SavedProgress(json: entry)
        }
        return result
    }

    public func progress(of sha256: String) throws -> SavedProgress? { try all()[sha256] }

    /// Saves one book's progress: read, change, write to a temporary name, rename, under an
    /// advisory lock so two viewers never lose each other's books.
    public func save(_ progress: SavedProgress, for sha256: String) throws {
        let directory = FileSystem.parentDirectory(path)
        do { try FileSystem.createDirectory(directory) } catch { throw QuireError.cannotCreateOutput(path: directory, reason: "\(error)") }
        try FileSystem.withExclusiveLock(path + ".lock", mode: 0o600) {
            var books = try all()
            books[sha256] = progress
            let file = JSON.object([
                ("format", .string("quire-progress")), ("version", .int(1)),
                ("books", .object(books.keys.sorted().map { ($0, books[$0]!.json) })),
            ])
            try FileSystem.writeAtomically(file.serializedBytes(pretty: true) + [10], to: path)
        }
    }
}

/// When a session records: the recording threshold.
///
/// A session that starts on an unread or finished book records nothing until the position has
/// moved `threshold` pages from where the session settled, or reaches the last page (the book
/// is then finished). Leafing through a book to look at it leaves no trace. A book already in
/// progress records every move. Opening and closing without a move never records.
public struct ProgressRecorder: Sendable {
    public let threshold: Int
    /// The page the session settled on (after resuming, or where it was asked to open).
    public private(set) var settledPage: Int
    public private(set) var recording: Bool

    public init(saved: SavedProgress?, threshold: Int, settledPage: Int) {
        self.threshold = max(0, threshold)
        self.settledPage = settledPage
        recording = saved.map { !$0.finished } ?? false
    }

    /// Whether a move to `page` is saved.
    public mutating func shouldRecord(movingTo page: Int, isLastPage: Bool) -> Bool {
        if page == settledPage && !recording { return false }
        if recording || isLastPage || abs(page - settledPage) >= threshold {
            recording = true
            return true
        }
        return false
    }

    /// A re-pagination moves page numbers: distances are counted from the same text's new page.
    public mutating func repaginated(settledPage: Int) { self.settledPage = settledPage }
}

/// One book's progress in one viewer session: the recorder's rule, and the save.
public final class ProgressSession {
    public let store: ProgressStore
    public let sha256: String
    let koreaderDocument: String
    let path: String
    let title: String?
    public private(set) var recorder: ProgressRecorder
    /// Where the session settled, kept as text so a re-pagination can find its new page.
    let settledLocator: Locator?
    /// The last save's failure, for the status line (reading goes on).
    public var lastError: QuireError? { failure.withLock { $0 } }
    private let failure = LockedValue<QuireError?>(nil)
    /// Saves run here, in order: in a live book the full Locator waits until the whole book is
    /// counted, and a page turn must not wait for that.
    private let saves = DispatchQueue(label: "quire.progress.saves")

    public init(store: ProgressStore, identity: PositionMap.BookIdentity, path: String, title: String?, saved: SavedProgress?, threshold: Int,
        settledPage: Int, settledLocator: Locator?) {
        self.store = store
        sha256 = identity.sha256
        koreaderDocument = identity.partialMD5
        self.path = path
        self.title = title
        self.settledLocator = settledLocator
        recorder = ProgressRecorder(saved: saved, threshold: threshold, settledPage: settledPage)
    }

    /// The reader moved: saves when the recorder says so. `locator` is asked for only then, on
    /// the save queue.
    func moved(to page: Int, pageCount: Int?, isLastPage: Bool, locator fullLocator: @escaping @Sendable () throws -> Locator) {
        guard recorder.shouldRecord(movingTo: page, isLastPage: isLastPage) else { return }
        let (store, sha256, koreaderDocument, title, path, failure) = (store, sha256, koreaderDocument, title, path, failure)
        saves.async {
            do {
                let locator = try fullLocator()
                let percentage = isLastPage ? 1 : locator.locations.totalProgression ?? pageCount.map { Double(page - 1) / Double(max($0, 1)) } ?? 0
                let entry = SavedProgress(
                    locator: locator, koreaderDocument: koreaderDocument, percentage: percentage, page: page, pageCount: pageCount,
                    finished: isLastPage, title: title, path: path)
                try store.save(entry, for: sha256)
                failure.withLock { $0 = nil }
            } catch {
                failure.withLock { $0 = (error as? QuireError) ?? .io("\(error)") }
            }
        }
    }

    /// Waits for every save asked for so far (at quit: nothing is lost).
    public func finish() { saves.sync {} }

    func repaginated(source: PageSource) {
        if let settledLocator, let page = try? source.resolve(.locator(settledLocator)) { recorder.repaginated(settledPage: page) }
    }
}
