import Foundation
import XCTest

/// The release binary's link (`RELEASE_FLAGS` in the Makefile): the functions rendering runs placed
/// together in `scripts/code-order.txt`'s order, packed relocations, no exported symbols. A change
/// of toolchain or flags that silently undid one of these would bring back megabytes of resident
/// memory in every run; these checks say which. They need the release build (`make test` builds it
/// and gives it as QUIRE_BINARY) and binutils.
final class ReleaseLinkTests: XCTestCase {
    /// QUIRE_BINARY when `make test` gives it, else the release build beside the debug one (the
    /// debug build is not linked with the release flags).
    private func releaseBinary() throws -> URL {
        if ProcessInfo.processInfo.environment["QUIRE_BINARY"] != nil { return TestSupport.quireBinary }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let release = repository.appendingPathComponent(".build/release/quire")
        guard FileManager.default.isExecutableFile(atPath: release.path) else {
            XCTFail("no release build at \(release.path): run `make release` (or `make test`, which builds it)")
            throw CocoaError(.fileNoSuchFile)
        }
        return release
    }

    private func output(_ tool: String, _ arguments: [String]) throws -> String {
        let result = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/\(tool)"), arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdoutText
    }

    func testBusiestFunctionsArePlacedTogether() throws {
        let binary = try releaseBinary()
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let lines = try String(contentsOf: repository.appendingPathComponent("scripts/code-order.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        // Above the marker: functions in sections of their own, which the link places in order.
        let marker = try XCTUnwrap(lines.firstIndex(of: "# functions in blocks"), "scripts/code-order.txt has no block marker")
        let placedOneByOne = Array(lines[..<marker])
        XCTAssertGreaterThan(placedOneByOne.count, 2_000)
        var addresses: [String: UInt64] = [:]
        var repeated: Set<String> = []
        for line in try output("nm", ["--defined-only", binary.path]).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, "tTwW".contains(fields[1]), let address = UInt64(fields[0], radix: 16) else { continue }
            let name = String(fields[2])
            if addresses.updateValue(address, forKey: name) != nil { repeated.insert(name) }
        }
        let placed = placedOneByOne.filter { !repeated.contains($0) }.compactMap { addresses[$0] }
        XCTAssertGreaterThan(placed.count, placedOneByOne.count * 9 / 10, "the order no longer names this binary's functions: run scripts/code-order.sh")
        // A few come from C archives outside the toolchain (libgcc's, libdispatch's cold parts).
        let outOfOrder = zip(placed, placed.dropFirst()).filter { $0.1 < $0.0 }.count
        XCTAssertLessThan(outOfOrder, placed.count / 100, "\(outOfOrder) functions placed out of the file's order")
        let span = placed.max()! - placed.min()!
        XCTAssertLessThan(span, 2_000_000, "the busiest functions are spread over \(span) bytes")
    }

    func testRelocationsPackedAndNoSymbolsExported() throws {
        let binary = try releaseBinary()
        let dynamic = try output("readelf", ["-dW", binary.path])
        XCTAssertTrue(dynamic.contains("(RELR)"), "relative relocations are packed (DT_RELR)")
        XCTAssertFalse(dynamic.contains("(RELACOUNT)"), "no unpacked relative relocations left")
        let symbols = try output("readelf", ["--dyn-syms", "-W", binary.path]).split(separator: "\n")
        let exported = symbols.filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count >= 8 && fields[6] != "UND" && (fields[4] == "GLOBAL" || fields[4] == "WEAK")
        }
        XCTAssertLessThan(exported.count, 20, "the executable exports \(exported.count) of its own symbols")
    }
}
