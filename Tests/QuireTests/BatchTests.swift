import Dispatch
import Foundation
import Quire
import QuireBatch
import XCTest

/// `quire batch`: content-addressed outputs, skipping what is done, per-book failures, shards
/// that add up to one run, and kills that leave nothing half-done.
final class BatchTests: XCTestCase {
    func testShardsFromSchedulerEnvironments() throws {
        XCTAssertEqual(try Shard(parsing: "1/4"), Shard(index: 1, count: 4))
        XCTAssertThrowsError(try Shard(parsing: "4/4"))
        XCTAssertThrowsError(try Shard(parsing: "a/b"))
        // Slurm: a plain array, a stepped one (--array=0-6:2), and a list (--array=1,4,5) refused.
        let plain = ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3", "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "4"]
        XCTAssertEqual(try Shard.fromScheduler(plain), Shard(index: 2, count: 4))
        let stepped = ["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"]
        XCTAssertEqual(try Shard.fromScheduler(stepped), Shard(index: 2, count: 4))
        let list = ["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "5", "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "3"]
        XCTAssertThrowsError(try Shard.fromScheduler(list)) { XCTAssertTrue("\($0)".contains("--shard K/N"), "\($0)") }
        // Kubernetes has no count of its own.
        XCTAssertThrowsError(try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "3"])) { XCTAssertTrue("\($0)".contains("--shard-count"), "\($0)") }
        XCTAssertEqual(try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "3"], countOverride: 5), Shard(index: 3, count: 5))
        XCTAssertEqual(try Shard.fromScheduler(["JOB_COMPLETION_INDEX": "3", "QUIRE_SHARD_COUNT": "8"]), Shard(index: 3, count: 8))
        XCTAssertEqual(try Shard.fromScheduler(["AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "2"]), Shard(index: 0, count: 2))
        XCTAssertEqual(try Shard.fromScheduler(["BATCH_TASK_INDEX": "6", "BATCH_TASK_COUNT": "7"]), Shard(index: 6, count: 7))
        XCTAssertThrowsError(try Shard.fromScheduler(["BATCH_TASK_INDEX": "7", "BATCH_TASK_COUNT": "7"]))
        XCTAssertThrowsError(try Shard.fromScheduler([:])) { XCTAssertTrue("\($0)".contains("no scheduler"), "\($0)") }
    }

    /// Books made here: three small EPUBs, a damaged file and a DRM book.
    static func library(_ directory: URL) throws -> URL {
        let books = directory.appendingPathComponent("books")
        try FileManager.default.createDirectory(at: books.appendingPathComponent("more"), withIntermediateDirectories: true)
        for index in 0..<3 {
            var book = TestBook()
            book.title = "Batch Book \(index)"
            book.identifier = "urn:uuid:0b7e2c1a-2222-4a2b-9c3d-00000000000\(index)"
            let paragraphs = String(repeating: "<p>Book \(index) has words enough to fill a few small pages with text that wraps and wraps again.</p>", count: 20 + 15 * index)
            book.chapter = """
                <?xml version="1.0" encoding="utf-8"?>
                <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head><body><h1>Book \(index)</h1>\(paragraphs)</body></html>
                """
            try book.write(to: (index == 2 ? books.appendingPathComponent("more") : books).appendingPathComponent("book\(index).epub"))
        }
        try Data("not a zip at all".utf8).write(to: books.appendingPathComponent("damaged.epub"))
        try TestBook.drmProtected.write(to: books.appendingPathComponent("more/locked.epub"))
        try Data("ignored".utf8).write(to: books.appendingPathComponent("notes.txt"))
        return books
    }

    /// Every file under a root, relative, with its bytes (done.json included: it holds no timing).
    static func tree(_ root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: root.path))
        while let relative = enumerator.nextObject() as? String {
            // The layout cache is the run's working memory, not its output.
            if relative == ".cache" || relative.hasPrefix(".cache/") { continue }
            let url = root.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[relative] = try Data(contentsOf: url)
        }
        return files
    }

    func batch(_ arguments: [String]) throws -> TestSupport.Result { try Self.batch(arguments) }

    static func batch(_ arguments: [String]) throws -> TestSupport.Result {
        try TestSupport.run(TestSupport.quireBinary, ["batch"] + arguments + ["--quiet"])
    }

    func testBatchIsContentAddressedResumableAndReportsFailures() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = try Self.library(directory)
        let root = directory.appendingPathComponent("root")
        let log = directory.appendingPathComponent("log.jsonl")
        let first = try batch([books.path, "--out", root.path, "--profile", "eink-6,phone", "--map-only", "--json-log", log.path])
        XCTAssertEqual(first.status, 75, "two books cannot be rendered: " + first.stderr)
        let index = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("index.json"))) as? [String: Any])
        let items = try XCTUnwrap(index["items"] as? [[String: Any]])
        XCTAssertEqual(items.count, 10, "5 books × 2 profiles; notes.txt is no book")
        XCTAssertEqual(items.filter { $0["status"] as? String == "done" }.count, 6)
        XCTAssertEqual(Set(items.filter { $0["status"] as? String == "failed" }.compactMap { $0["kind"] as? String }), ["corrupt", "drm"])
        for item in items where item["status"] as? String == "done" {
            let itemDirectory = root.appendingPathComponent(try XCTUnwrap(item["directory"] as? String))
            let sha = try XCTUnwrap(item["sha256"] as? String)
            XCTAssertTrue(itemDirectory.path.contains("/" + sha.prefix(16) + "/"))
            let map = try PositionMap(path: itemDirectory.appendingPathComponent("positions.json").path)
            XCTAssertEqual(map.book.sha256, sha)
            XCTAssertEqual(map.pageCount, item["pageCount"] as? Int)
            XCTAssertTrue(FileManager.default.fileExists(atPath: itemDirectory.appendingPathComponent("done.json").path))
        }
        // A re-run lays nothing out: every done item is skipped, the failures are tried again.
        try? FileManager.default.removeItem(at: log)
        let again = try batch([books.path, "--out", root.path, "--profile", "eink-6,phone", "--map-only", "--json-log", log.path])
        XCTAssertEqual(again.status, 75)
        let summary = try XCTUnwrap(try String(contentsOf: log, encoding: .utf8).split(separator: "\n").last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        XCTAssertEqual(summary["made"] as? Int, 0, "\(summary)")
        XCTAssertEqual(summary["chaptersLaidOut"] as? Int, 0, "\(summary)")
        XCTAssertEqual(summary["skipped"] as? Int, 6)
        XCTAssertEqual(summary["failed"] as? Int, 4)
        // Another setting (painted, dark) is other work in other directories; a changed book is done again.
        let dark = try batch([books.appendingPathComponent("book0.epub").path, "--out", root.path, "--profile", "eink-6", "--theme", "dark"])
        XCTAssertEqual(dark.status, 0, dark.stderr)
        var changed = TestBook()
        changed.title = "Batch Book 0, second edition"
        try changed.write(to: books.appendingPathComponent("book0.epub"))
        try? FileManager.default.removeItem(at: log)
        let edition = try batch([books.appendingPathComponent("book0.epub").path, "--out", root.path, "--profile", "eink-6", "--map-only", "--json-log", log.path])
        XCTAssertEqual(edition.status, 0, edition.stderr)
        XCTAssertTrue(try String(contentsOf: log, encoding: .utf8).contains("\"event\":\"made\""))
        // An unwritable root is one clear error, and no books are touched.
        let file = directory.appendingPathComponent("file")
        try Data().write(to: file)
        let unwritable = try batch([books.path, "--out", file.appendingPathComponent("root").path, "--map-only"])
        XCTAssertEqual(unwritable.status, 73, unwritable.stderr)
        XCTAssertTrue(unwritable.stderr.contains("cannot create"), unwritable.stderr)
    }

    /// Two shards at once into one root give exactly one unsharded run's tree.
    func testTwoShardsAtOnceMakeTheTreeOfOneRun() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = try Self.library(directory)
        let whole = directory.appendingPathComponent("whole")
        let sharded = directory.appendingPathComponent("sharded")
        let one = try batch([books.path, "--out", whole.path, "--profile", "eink-6,phone", "--gray"])
        XCTAssertEqual(one.status, 75, one.stderr)
        let statuses = LockedStatuses()
        DispatchQueue.concurrentPerform(iterations: 2) { shard in
            let result = try? Self.batch([books.path, "--out", sharded.path, "--profile", "eink-6,phone", "--gray", "--shard", "\(shard)/2"])
            statuses.set(shard, result?.status ?? -1)
        }
        XCTAssertTrue(statuses.all.allSatisfy { $0 == 0 || $0 == 75 }, "\(statuses.all)")
        let expected = try Self.tree(whole)
        XCTAssertGreaterThan(expected.keys.filter { $0.hasSuffix(".png") }.count, 6)
        XCTAssertEqual(try Self.tree(sharded), expected)
    }

    /// kill -9 at several moments, then a re-run: the tree of a clean run, nothing left over.
    func testKilledBatchesFinishAsACleanRun() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = try Self.library(directory)
        let clean = directory.appendingPathComponent("clean")
        let killed = directory.appendingPathComponent("killed")
        let arguments = [books.path, "--profile", "eink-6,phone,kobo-clara", "--quiet"]
        XCTAssertEqual(try batch([books.path, "--out", clean.path, "--profile", "eink-6,phone,kobo-clara"]).status, 75)
        for delay in [150_000, 400_000, 800_000, 1_500_000] as [useconds_t] {
            let process = Process()
            process.executableURL = TestSupport.quireBinary
            process.arguments = ["batch"] + arguments + ["--out", killed.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if delay == 150_000 {
                XCTAssertFalse(FileManager.default.fileExists(atPath: killed.appendingPathComponent("index.json").path), "the first kill came before the batch was done")
            }
        }
        XCTAssertEqual(try batch(arguments.dropLast() + ["--out", killed.path]).status, 75)
        let tree = try Self.tree(killed)
        XCTAssertEqual(tree.keys.filter { $0.contains(".partial-") || $0.contains(".tmp-") }, [], "no leftovers")
        let cacheFiles = FileManager.default.enumerator(atPath: killed.appendingPathComponent(".cache").path)?.allObjects as? [String] ?? []
        XCTAssertEqual(cacheFiles.filter { $0.contains(".tmp-") }, [], "the killed runs' half-written cache entries are cleared")
        XCTAssertEqual(tree, try Self.tree(clean))
    }

    /// The summary line of a JSON log.
    static func summary(_ log: URL) throws -> [String: Any] {
        let last = try XCTUnwrap(try String(contentsOf: log, encoding: .utf8).split(separator: "\n").last)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    }

    /// A second profile at the same geometry, only painted otherwise, lays out nothing: its pages
    /// are painted from the cached display lists, byte for byte as without the cache. A damaged
    /// entry is a miss, and the cache keeps to its bound.
    func testLayoutCacheSkipsLayoutForAProfileThatOnlyPaintsOtherwise() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = try Self.library(directory)
        let root = directory.appendingPathComponent("root")
        let log = directory.appendingPathComponent("log.jsonl")
        func run(_ root: URL, _ settings: [String]) throws -> [String: Any] {
            try? FileManager.default.removeItem(at: log)
            let result = try batch([books.path, "--out", root.path, "--json-log", log.path] + settings)
            XCTAssertEqual(result.status, 75, result.stderr)
            return try Self.summary(log)
        }
        let gray = try run(root, ["--profile", "eink-6", "--gray"])
        let chapters = try XCTUnwrap(gray["chaptersLaidOut"] as? Int)
        XCTAssertGreaterThanOrEqual(chapters, 3, "\(gray)")
        XCTAssertEqual(gray["chaptersFromCache"] as? Int, 0)

        let dark = try run(root, ["--profile", "eink-6", "--theme", "dark"])
        XCTAssertEqual(dark["made"] as? Int, 3, "\(dark)")
        XCTAssertEqual(dark["chaptersLaidOut"] as? Int, 0, "a theme and colour apart: no layout, \(dark)")
        XCTAssertEqual(dark["chaptersFromCache"] as? Int, chapters)
        let mapOnly = try run(root, ["--profile", "eink-6", "--map-only"])
        XCTAssertEqual(mapOnly["chaptersLaidOut"] as? Int, 0, "\(mapOnly)")

        let uncached = directory.appendingPathComponent("uncached")
        let fresh = try run(uncached, ["--profile", "eink-6", "--theme", "dark", "--no-cache"])
        XCTAssertEqual(fresh["chaptersLaidOut"] as? Int, chapters)
        let key = try Self.itemKey(root, profile: "eink-6-dark")
        let freshTree = try Self.tree(uncached)
        XCTAssertGreaterThan(freshTree.keys.filter { $0.hasSuffix(".png") }.count, 3)
        XCTAssertEqual(
            try Self.tree(root).filter { $0.key.contains("/" + key + "/") }, freshTree.filter { $0.key.contains("/" + key + "/") },
            "pages painted from the cache are the pages of a fresh layout")

        // A damaged entry is laid out again, and the output is the same.
        let cache = root.appendingPathComponent(".cache")
        let entries = (FileManager.default.enumerator(atPath: cache.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".qlc") }.sorted()
        XCTAssertEqual(entries.count, chapters)
        let damaged = cache.appendingPathComponent(entries[0])
        var bytes = try Data(contentsOf: damaged)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: damaged)
        let again = directory.appendingPathComponent("again")
        let repaired = try run(again, ["--profile", "eink-6", "--theme", "dark", "--cache", cache.path])
        XCTAssertEqual(repaired["chaptersLaidOut"] as? Int, 1, "\(repaired)")
        XCTAssertEqual(try Self.tree(again), freshTree)

        // Bounded: with a small --cache-size the least recently used entries go.
        let small = directory.appendingPathComponent("small")
        _ = try run(small, ["--profile", "phone", "--map-only", "--cache-size", "6K"])
        let kept = (FileManager.default.enumerator(atPath: small.appendingPathComponent(".cache").path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".qlc") }
            .map { (try? FileManager.default.attributesOfItem(atPath: small.appendingPathComponent(".cache/" + $0).path)[.size] as? Int) ?? 0 }
        XCTAssertLessThanOrEqual(kept.reduce(0, +), 6 * 1024, "\(kept)")
        XCTAssertEqual(try batch([books.path, "--out", small.path, "--cache-size", "lots"]).status, 64)
    }

    /// A run killed in the middle of a book leaves its settled chapters in the layout cache: the
    /// next run lays out only the rest.
    func testARunAfterAKillLaysOutOnlyTheChaptersNotDone() throws {
        let book = try TestSupport.corpusFile("standardebooks/jane-austen_pride-and-prejudice.epub")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appendingPathComponent("root")
        let cache = root.appendingPathComponent(".cache")
        func entries() -> Int {
            (FileManager.default.enumerator(atPath: cache.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".qlc") }.count
        }
        let process = Process()
        process.executableURL = TestSupport.quireBinary
        process.arguments = ["batch", book.path, "--out", root.path, "--profile", "eink-6", "--map-only", "--jobs", "1", "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed once a few chapters are kept, long before the book's 65 are.
        while process.isRunning, entries() < 5 { usleep(2_000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let kept = entries()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "killed before the book was done")
        XCTAssertGreaterThanOrEqual(kept, 5)
        XCTAssertLessThan(kept, 65)

        let log = directory.appendingPathComponent("log.jsonl")
        let again = try batch([book.path, "--out", root.path, "--profile", "eink-6", "--map-only", "--json-log", log.path])
        XCTAssertEqual(again.status, 0, again.stderr)
        let summary = try Self.summary(log)
        XCTAssertEqual(summary["chaptersFromCache"] as? Int, kept, "\(summary)")
        XCTAssertEqual(summary["chaptersLaidOut"] as? Int, 65 - kept, "\(summary)")
    }

    /// A full disk stops the batch with one clear error (73) and nothing that looks finished; with
    /// room again, the next run completes. A small tmpfs is the full disk (mounting needs root).
    func testFullDiskStopsCleanlyAndTheNextRunCompletes() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let book = try TestSupport.corpusFile("standardebooks/jane-austen_pride-and-prejudice.epub")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = directory.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let mounted = ViewerTests.shell("mount -t tmpfs -o size=1m tmpfs '\(disk.path)' 2>&1")
        guard mounted.status == 0 else { return XCTFail("cannot mount a tmpfs: \(mounted.output)") }
        defer { _ = ViewerTests.shell("umount '\(disk.path)' 2>&1") }
        let root = disk.appendingPathComponent("root")
        let arguments = [book.path, "--out", root.path, "--profile", "phone,eink-6"]

        let full = try batch(arguments)
        XCTAssertEqual(full.status, 73, full.stderr)
        XCTAssertTrue(full.stderr.contains("No space left on device"), full.stderr)
        XCTAssertEqual(full.stderr.split(separator: "\n").count, 1, "one error line: \(full.stderr)")
        var looksFinished: [String] = []
        var leftovers: [String] = []
        for case let relative as String in FileManager.default.enumerator(atPath: root.path)?.allObjects ?? [] {
            if relative.contains(".partial-") || relative.hasSuffix(".tmp") || relative.contains(".tmp-") { leftovers.append(relative) }
            let parts = relative.split(separator: "/")
            if parts.count == 2, !parts[0].hasPrefix("."), !parts[1].hasPrefix("."), !FileManager.default.fileExists(atPath: root.path + "/" + relative + "/done.json") {
                looksFinished.append(relative)
            }
        }
        XCTAssertEqual(looksFinished, [], "an item directory without done.json")
        XCTAssertEqual(leftovers.filter { !$0.hasPrefix(".cache/") }, [], "half-written output")

        let grown = ViewerTests.shell("mount -o remount,size=256m '\(disk.path)' 2>&1")
        XCTAssertEqual(grown.status, 0, grown.output)
        let again = try batch(arguments)
        XCTAssertEqual(again.status, 0, again.stderr)
        let index = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("index.json"))) as? [String: Any])
        let items = try XCTUnwrap(index["items"] as? [[String: Any]])
        XCTAssertEqual(items.map { $0["status"] as? String }, ["done", "done"], "\(items)")
    }

    /// The directory name of a profile's items (the same for every book).
    static func itemKey(_ root: URL, profile: String) throws -> String {
        let index = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("index.json"))) as? [String: Any])
        let items = try XCTUnwrap(index["items"] as? [[String: Any]])
        let item = try XCTUnwrap(items.first { $0["profile"] as? String == profile && $0["status"] as? String == "done" }, "\(items)")
        return String(try XCTUnwrap(item["directory"] as? String).split(separator: "/").last!)
    }
}

final class LockedStatuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: Int32] = [:]
    func set(_ key: Int, _ value: Int32) { lock.lock(); values[key] = value; lock.unlock() }
    var all: [Int32] { lock.lock(); defer { lock.unlock() }; return values.keys.sorted().map { values[$0]! } }
}

/// A real scheduler: a one-node Slurm cluster (scripts/slurm-cluster.sh) runs a job array of
/// `quire batch --shard auto`, and the four tasks together make exactly one unsharded run's tree.
final class SlurmBatchTests: XCTestCase {
    func testSlurmArrayMakesTheTreeOfOneRun() throws {
        guard getuid() == 0 else {
            throw XCTSkip("the one-node Slurm cluster runs its daemons as root (SlurmUser=root); run the suite as root")
        }
        let corpusBooks = [
            try TestSupport.corpusFile("misc-epubs/epubjs-alice.epub"),
            try TestSupport.corpusFile("misc-epubs/thorium-large-tables.epub"),
            try TestSupport.corpusFile("standardebooks/jane-austen_pride-and-prejudice.epub"),
        ]
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = try BatchTests.library(directory)
        for book in corpusBooks {
            try FileManager.default.copyItem(at: book, to: books.appendingPathComponent(book.lastPathComponent))
        }
        // Short: slurmstepd's socket paths under the spool directory must fit in 108 bytes.
        var template = Array("/tmp/quire-slurm-XXXXXX".utf8CString)
        let made = try XCTUnwrap(mkdtemp(&template), "mkdtemp: \(String(cString: strerror(errno)))")
        let cluster = URL(fileURLWithPath: String(cString: made))
        defer { try? FileManager.default.removeItem(at: cluster) }
        let script = TestSupport.packageRoot.appendingPathComponent("scripts/slurm-cluster.sh").path
        let started = ViewerTests.shell("/bin/bash '\(script)' start '\(cluster.path)' 2>&1")
        defer { _ = ViewerTests.shell("/bin/bash '\(script)' stop '\(cluster.path)' 2>&1") }
        guard started.status == 0 else {
            XCTFail("Slurm did not start (status \(started.status)): \(started.output)")
            return
        }

        let whole = directory.appendingPathComponent("whole")
        let sharded = directory.appendingPathComponent("sharded")
        let settings = ["--profile", "eink-6,phone", "--map-only"]
        let one = try BatchTests.batch([books.path, "--out", whole.path] + settings)
        XCTAssertEqual(one.status, 75, "the damaged and the DRM book fail: " + one.stderr)

        // Each task runs one shard; exit 75 (some books failed) is the expected result, so the
        // job script reports it as success and anything else as the task's failure.
        let job = cluster.appendingPathComponent("job.sh")
        let command = ([TestSupport.quireBinary.path, "batch", books.path, "--out", sharded.path] + settings + ["--shard", "auto", "--quiet", "--jobs", "1"])
            .map { "'\($0)'" }.joined(separator: " ")
        try """
            #!/bin/bash
            echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT"
            \(command)
            status=$?
            echo "quire batch exit $status"
            [ $status = 0 ] || [ $status = 75 ]

            """.write(to: job, atomically: true, encoding: .utf8)
        chmod(job.path, 0o755)
        let submit = "cd '\(cluster.path)' && SLURM_CONF='\(cluster.path)/slurm.conf' timeout 300 sbatch --wait --array=0-3 --cpus-per-task=1 --mem=500M -o '\(cluster.path)/task-%a.out' '\(job.path)' 2>&1 </dev/null"
        let submitted = ViewerTests.shell(submit)
        let outputs = (0..<4).map { (try? String(contentsOf: cluster.appendingPathComponent("task-\($0).out"), encoding: .utf8)) ?? "(no output)" }
        XCTAssertEqual(submitted.status, 0, "sbatch --wait: \(submitted.output)\n" + outputs.joined(separator: "\n")
            + ViewerTests.shell("SLURM_CONF='\(cluster.path)/slurm.conf' squeue 2>&1; tail -20 '\(cluster.path)/log/slurmctld.log' '\(cluster.path)/log/slurmd.log'").output)
        for (task, output) in outputs.enumerated() {
            XCTAssertTrue(output.contains("task \(task) of 4"), output)
            XCTAssertTrue(output.contains("quire batch exit 75") || output.contains("quire batch exit 0"), output)
        }
        let expected = try BatchTests.tree(whole)
        XCTAssertGreaterThan(expected.keys.filter { $0.hasSuffix("positions.json") }.count, 8)
        XCTAssertEqual(try BatchTests.tree(sharded), expected)
    }
}
