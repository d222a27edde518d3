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

    /// Every file under a root, relative, with its bytes (done.json without its timing).
    static func tree(_ root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: root.path))
        while let relative = enumerator.nextObject() as? String {
            let url = root.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            var data = try Data(contentsOf: url)
            if relative.hasSuffix("done.json"), var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
                object["seconds"] = nil
                data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            }
            files[relative] = data
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
        XCTAssertEqual(tree, try Self.tree(clean))
    }
}

final class LockedStatuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: Int32] = [:]
    func set(_ key: Int, _ value: Int32) { lock.lock(); values[key] = value; lock.unlock() }
    var all: [Int32] { lock.lock(); defer { lock.unlock() }; return values.keys.sorted().map { values[$0]! } }
}
