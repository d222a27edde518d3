import Foundation
import Quire
import QuireCore
import QuireXML
import QuireContainer
import QuireDocument
import QuireStyle
import QuireText
import QuireImages
import QuirePreparation
import QuireLayout
import QuirePaint
import QuirePDF
import QuirePositions
import Testing

/// QuireCore's libc-based services, which replace Foundation in the executable: the JSON reader
/// (checked against Foundation's), files and directories, number formatting, the CPU count.
@Suite struct CoreSystemTests {
    @Test func jsonReaderReadsWhatFoundationReads() throws {
        let text = #"""
            {"a": [1, -2, 3.5, 1e3, -0.25E-2, 12345678901234], "s": "q\"\\\/\b\f\n\r\t \u00e9 \ud83d\ude00 ☃",
             "t": true, "f": false, "n": null, "o": {"nested": {"deep": [[], {}]}}, "empty": ""}
            """#
        let ours = try #require(try JSONReader.parse(text) as? [String: Any])
        let theirs = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(ours["s"] as? String == theirs["s"] as? String)
        #expect((ours["s"] as? String)?.contains("😀") == true)
        let numbers = try #require(ours["a"] as? [Any])
        #expect(numbers[0] as? Int == 1 && numbers[1] as? Int == -2 && numbers[5] as? Int == 12_345_678_901_234)
        #expect(numbers.compactMap(JSONReader.double) == [1, -2, 3.5, 1000, -0.0025, 12_345_678_901_234])
        #expect(ours["t"] as? Bool == true && ours["f"] as? Bool == false && ours["n"] is JSONNull)
        #expect(ours["empty"] as? String == "")
        // Re-serialised, both readings give the same document.
        #expect(JSON.from(ours).serialized() == JSON.from(theirs).serialized())
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"\\x\"", "\"a\nb\"", "[1] 2", "tru", "{\"a\":}", "\"\\u12\"",
    ])
    func jsonReaderRefusesBrokenText(_ text: String) {
        #expect(throws: JSONReader.SyntaxError.self) { try JSONReader.parse(text) }
    }

    @Test func jsonReaderBoundsNesting() throws {
        let deep = String(repeating: "[", count: JSONReader.maxDepth + 1) + String(repeating: "]", count: JSONReader.maxDepth + 1)
        #expect(throws: JSONReader.SyntaxError.self) { try JSONReader.parse(deep) }
        let fine = String(repeating: "[", count: JSONReader.maxDepth) + String(repeating: "]", count: JSONReader.maxDepth)
        #expect(try JSONReader.parse(fine) is [Any])
        // Invalid UTF-8 inside a string is refused, as Foundation's reader refuses it.
        #expect(throws: JSONReader.SyntaxError.self) { try JSONReader.parse([0x22, 0xFF, 0x22]) }
        // An unpaired surrogate escape becomes U+FFFD rather than failing.
        #expect(try JSONReader.parse(#""\ud800x""#) as? String == "\u{FFFD}x")
    }

    @Test func filesAndDirectories() throws {
        let base = NSTemporaryDirectory() + "quire-core-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let nested = base + "/a/b/c"
        try FileSystem.createDirectory(nested)
        try FileSystem.createDirectory(nested)  // already there: fine
        #expect(FileSystem.isDirectory(nested))
        try FileSystem.write(Array("hello".utf8), to: nested + "/f.txt")
        #expect(FileSystem.read(nested + "/f.txt") == Array("hello".utf8))
        #expect(FileSystem.read(nested + "/missing") == nil)
        #expect(FileSystem.contents(ofDirectory: base + "/a/b") == ["c"])
        #expect(throws: SystemError.self) { try FileSystem.createDirectory(nested + "/f.txt/x") }
        #expect(throws: SystemError.self) { try FileSystem.write([1], to: base + "/no/such/dir/file") }
        #expect(FileSystem.parentDirectory("/x/y/") == "/x")
        #expect(FileSystem.parentDirectory("/x") == "/")
        #expect(FileSystem.parentDirectory("x") == "")
        #expect(FileSystem.resolvingSymlinks(base + "/a/../a/b") == FileSystem.resolvingSymlinks(base) + "/a/b")
    }

    /// Numbers are written without going through String, with the same text as before: up to nine
    /// decimals, trailing zeros trimmed; integers as they are.
    @Test func jsonNumbers() {
        let doubles: [(Double, String)] = [
            (0, "0"), (1, "1"), (-1, "-1"), (0.5, "0.5"), (0.125, "0.125"), (1e-9, "0.000000001"), (4e-10, "0"),
            (123.456, "123.456"), (-0.000001, "-0.000001"), (0.005, "0.005"), (1e9, "1000000000"), (2.0 / 3.0, "0.666666667"),
            (.infinity, "null"), (1e300, "1e+300"),
        ]
        for (value, text) in doubles { #expect(JSON.double(value).serialized() == text, "\(value)") }
        let ints: [(Int64, String)] = [(0, "0"), (7, "7"), (-12, "-12"), (10, "10"), (Int64.max, "9223372036854775807"), (Int64.min, "-9223372036854775808")]
        for (value, text) in ints { #expect(JSON.int(value).serialized() == text) }
    }

    /// A generated array (a map's pages, made one at a time as they are written) is written, read
    /// and compared exactly as the array of the same elements.
    @Test func generatedArraysAreArrays() {
        let values: [JSON] = [.int(1), .object([("b", .string("x")), ("a", .null)]), .array([.bool(true)])]
        let generated = JSON.generated(count: values.count) { values[$0] }
        let document = JSON.object([("pages", generated), ("empty", .generated(count: 0) { _ in .null })])
        let plain = JSON.object([("pages", .array(values)), ("empty", .array([]))])
        #expect(document.serialized() == plain.serialized())
        #expect(document.serialized(pretty: false) == plain.serialized(pretty: false))
        #expect(document == plain && generated == JSON.array(values) && generated != JSON.array(Array(values.dropLast())))
        #expect(document.sortingKeys().serialized() == plain.sortingKeys().serialized())
        var chunks: [UInt8] = []
        document.serialize(chunkSize: 4) { chunks += $0 }
        #expect(chunks == plain.serializedBytes())
    }

    @Test func numbersAndEnvironment() {
        #expect(fixedDecimals(88.84, 1) == "88.8")
        #expect(fixedDecimals(2.95, 1) == "3.0")
        #expect(fixedDecimals(0.0005, 3) == "0.001")
        #expect(fixedDecimals(-1.5, 0) == "-2")
        #expect(fixedDecimals(12, 2) == "12.00")
        #expect(SystemEnvironment.processorCount >= 1)
        #expect(SystemEnvironment.processorCount <= ProcessInfo.processInfo.processorCount)
        #expect(SystemEnvironment.variable("PATH") == ProcessInfo.processInfo.environment["PATH"])
        #expect("ab".padded(toLength: 4) == "ab  " && "abcdef".padded(toLength: 3) == "abc")
        #expect(SystemEnvironment.all == ProcessInfo.processInfo.environment)
    }

    /// Running a program (the viewer asks tmux about the outer terminal): its standard output and
    /// exit status, its standard error dropped; a program that is not there gives nil.
    @Test func runningAProgram() {
        let result = SystemEnvironment.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(result?.status == 3 && result?.output == "out\n")
        #expect(SystemEnvironment.run(["quire-no-such-program"]) == nil)
        let long = SystemEnvironment.run(["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x"])
        #expect(long?.status == 0 && long?.output.count == 1 << 16, "output past 64 KB is read and dropped")
    }

    /// The executable links no Foundation (its static libraries, with their own ICU, made 57 MB of
    /// the 87 MB binary when they were linked): no file of the sources imports it, since one import
    /// in any file of a module makes Foundation's string methods visible in all of its files.
    @Test func sourcesImportNoFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 100)
        for file in files {
            let text = try String(contentsOfFile: sources.appendingPathComponent(file).path, encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") || $0.hasPrefix("@preconcurrency import ") || $0.hasPrefix("@_exported import ") }
            #expect(!imports.contains { $0.contains(" Foundation") }, "\(file) imports Foundation (or part of it)")
        }
    }

    /// Paths as NSString joined and cut them.
    @Test func pathComponents() {
        #expect(FileSystem.joined("/a/b", "c.json") == "/a/b/c.json" && FileSystem.joined("/a/b/", "c") == "/a/b/c")
        #expect(FileSystem.joined("out", "pages/1.png") == "out/pages/1.png" && FileSystem.joined("", "x") == "x")
        for path in ["/a/b", "/a/b/", "b", "/", "", "a//b"] {
            #expect(FileSystem.lastComponent(path) == (path as NSString).lastPathComponent, "\(path)")
        }
    }
}
