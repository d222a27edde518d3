import CZip
import Foundation
import XCTest

/// Paths and helpers shared by the tests.
enum TestSupport {
    /// The package root (two levels above this file's folder).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/corpus` beside the checkout, or `QUIRE_CORPUS`.
    static let corpus: URL? = {
        let candidates = [
            ProcessInfo.processInfo.environment["QUIRE_CORPUS"].map { URL(fileURLWithPath: $0) },
            packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus"),
        ].compactMap { $0 }
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("MANIFEST.md").path) }
    }()

    /// Skips (with the reason printed) when the corpus is absent, so a fresh clone still passes.
    static func requireCorpus(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        guard let corpus else {
            let message = "corpus not found at ../shared/corpus (set QUIRE_CORPUS); skipping corpus test"
            print("note: \(message)")
            throw XCTSkip(message, file: file, line: line)
        }
        return corpus
    }

    /// A named corpus file. Skips only when the whole corpus is absent; a missing file in a present
    /// corpus is a failure, since the test would otherwise pass without checking anything.
    static func corpusFile(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        let url = try requireCorpus(file: file, line: line).appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("\(relative) is missing from the corpus", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return url
    }

    /// The W3C reading-system suite's publications: tests of one feature each, many of them
    /// expected to be refused, judged by their own criteria (W3CSuiteTests), not as books.
    static let w3cSuite = "w3c-epub-tests-suite"

    /// The corpus's books: every EPUB outside the W3C suite.
    static func corpusEPUBs() throws -> [URL] {
        try epubs(in: requireCorpus()).filter { !$0.path.contains("/\(w3cSuite)/") }
    }

    /// Every EPUB under a folder, sorted by path.
    static func epubs(in folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)!
        return enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "epub" }.sorted { $0.path < $1.path }
    }

    /// The `quire` executable of this build: `QUIRE_BINARY` when set (`make test` sets it to the
    /// release build it has just made, which runs the corpus-wide tests much faster), else the
    /// debug build that `swift build --build-tests` made beside this test bundle. Never whichever
    /// file happens to be newest: that can be a stale build.
    static let quireBinary: URL = {
        if let path = ProcessInfo.processInfo.environment["QUIRE_BINARY"], !path.isEmpty {
            let url = URL(fileURLWithPath: path, relativeTo: packageRoot).standardizedFileURL
            precondition(FileManager.default.isExecutableFile(atPath: url.path), "QUIRE_BINARY=\(path) is not an executable")
            return url
        }
        return Bundle(for: Marker.self).bundleURL.deletingLastPathComponent().appendingPathComponent("quire")
    }()

    final class Marker {}

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs a program and waits, reading both pipes fully (no deadlock on large output).
    static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // stderr is drained on another thread so neither pipe can fill up and block the child.
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let group = DispatchGroup()
        group.enter()
        let errHandle = err.fileHandleForReading
        DispatchQueue.global().async {
            errBox.data = errHandle.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        let errData = errBox.data
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
    }

    static func quire(_ arguments: String..., in directory: URL? = nil) throws -> Result {
        try run(quireBinary, arguments, in: directory)
    }

    /// How many times more resident memory the program shows under the sanitizer `make
    /// test-sanitize` runs the suite with (QUIRE_SANITIZER): ThreadSanitizer keeps 4 to 8 bytes of
    /// shadow per byte the program touches.
    static let sanitizerMemoryFactor: Int = {
        switch ProcessInfo.processInfo.environment["QUIRE_SANITIZER"] {
        case "thread": return 4
        case "address": return 2
        default: return 1
        }
    }()

    /// `quire ARGUMENTS` under GNU time, for its peak RSS in KB (-1 when not measured), and under
    /// `timeout` when a time limit is given (a run past it is killed: status 137).
    static func quireMeasuringPeak(_ arguments: [String], in directory: URL? = nil, timeLimitSeconds: Int? = nil) throws -> (result: Result, peakKB: Int) {
        let rss = FileManager.default.temporaryDirectory.appendingPathComponent("quire-rss-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: rss) }
        let limit = timeLimitSeconds.map { ["timeout", "-s", "KILL", "\($0)"] } ?? []
        let result = try run(URL(fileURLWithPath: "/usr/bin/time"), ["-f", "%M", "-o", rss.path] + limit + [quireBinary.path] + arguments, in: directory)
        let peak = Int((try? String(contentsOf: rss, encoding: .utf8))?.split(separator: "\n").last.map(String.init) ?? "") ?? -1
        return (result, peak)
    }

    static func temporaryDirectory(_ name: String = #function) throws -> URL {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("quire-tests-\(safe)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Extracts one entry with Info-ZIP's `unzip`: an independent reader for expectations.
    static func unzipEntry(_ archive: URL, _ name: String) throws -> Data? {
        let result = try run(URL(fileURLWithPath: "/usr/bin/unzip"), ["-p", archive.path, name])
        return result.status == 0 ? result.stdout : nil
    }
}

/// Writes zip archives with libzip for hostile and synthetic test books.
final class ZipWriter {
    struct Entry {
        var name: String
        var data: [UInt8]
        var store = false
        var aesPassword: String? = nil
    }

    static func write(_ entries: [Entry], to url: URL) throws {
        var error: Int32 = 0
        try? FileManager.default.removeItem(at: url)
        guard let archive = zip_open(url.path, ZIP_CREATE | ZIP_TRUNCATE, &error) else {
            throw NSError(domain: "zip", code: Int(error))
        }
        for entry in entries {
            let buffer = malloc(max(entry.data.count, 1))!
            entry.data.withUnsafeBytes { if let base = $0.baseAddress { memcpy(buffer, base, entry.data.count) } }
            guard let source = zip_source_buffer(archive, buffer, zip_uint64_t(entry.data.count), 1) else {
                throw NSError(domain: "zip", code: 1)
            }
            let index = zip_file_add(archive, entry.name, source, zip_flags_t(ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE))
            guard index >= 0 else {
                zip_source_free(source)
                throw NSError(domain: "zip", code: 2, userInfo: [NSLocalizedDescriptionKey: "cannot add \(entry.name)"])
            }
            zip_set_file_compression(archive, zip_uint64_t(index), entry.store ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 9)
            if let password = entry.aesPassword {
                zip_file_set_encryption(archive, zip_uint64_t(index), UInt16(ZIP_EM_AES_256), password)
            }
        }
        guard zip_close(archive) == 0 else { throw NSError(domain: "zip", code: 3) }
    }
}

/// A minimal valid EPUB 3 made by the tests, varied per case.
struct TestBook {
    var container = """
        <?xml version="1.0"?>
        <container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
          <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
        </container>
        """
    var title = "Test Book"
    var identifier = "urn:uuid:0b7e2c1a-1111-4a2b-9c3d-123456789abc"
    var extraManifest = ""
    /// Itemrefs after chapter1's.
    var extraSpine = ""
    var package: String? = nil
    var chapter = """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head><body><p>Hello.</p></body></html>
        """
    var nav = """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Nav</title></head>
        <body><nav epub:type="toc"><ol><li><a href="chapter1.xhtml">One</a></li></ol></nav></body></html>
        """
    var extraEntries: [ZipWriter.Entry] = []
    var omit: Set<String> = []

    /// The book with its chapter listed as AES-encrypted in META-INF/encryption.xml: DRM.
    static var drmProtected: TestBook {
        var book = TestBook()
        book.extraEntries = [
            .init(
                name: "META-INF/encryption.xml",
                data: Array(
                    """
                    <encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
                      <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
                        <enc:CipherData><enc:CipherReference URI="OEBPS/chapter1.xhtml"/></enc:CipherData></enc:EncryptedData>
                    </encryption>
                    """.utf8))
        ]
        return book
    }

    var packageDocument: String {
        package ?? """
            <?xml version="1.0" encoding="utf-8"?>
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
              <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
                <dc:identifier id="uid">\(identifier)</dc:identifier>
                <dc:title>\(title)</dc:title>
                <dc:language>en</dc:language>
                <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
              </metadata>
              <manifest>
                <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
                <item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/>
                \(extraManifest)
              </manifest>
              <spine><itemref idref="c1"/>\(extraSpine)</spine>
            </package>
            """
    }

    func write(to url: URL) throws {
        var entries: [ZipWriter.Entry] = [
            .init(name: "mimetype", data: Array("application/epub+zip".utf8), store: true),
            .init(name: "META-INF/container.xml", data: Array(container.utf8)),
            .init(name: "OEBPS/content.opf", data: Array(packageDocument.utf8)),
            .init(name: "OEBPS/nav.xhtml", data: Array(nav.utf8)),
            .init(name: "OEBPS/chapter1.xhtml", data: Array(chapter.utf8)),
        ]
        entries = entries.filter { !omit.contains($0.name) } + extraEntries
        try ZipWriter.write(entries, to: url)
    }
}
