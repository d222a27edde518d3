import CFuzzSupport
import CZip
import Glibc
import QuireCore

/// Helpers shared by the fuzz targets: the input as bytes or parts, and small EPUBs written to a
/// per-process temporary file for the code that only opens books by path.
public enum Fuzz {
    public typealias Argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    /// Runs libFuzzer with `body` for each input: each target's `<module>_main` calls this (SwiftPM
    /// names an executable's entry point so, and links it as `main`).
    public static func main(_ argc: CInt, _ argv: Argv, _ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt {
        var argc = argc
        var argv: Argv? = argv
        return LLVMFuzzerRunDriver(&argc, &argv, body)
    }

    /// The fuzzer's input as an array.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// The input cut at its first `count - 1` NUL bytes (the last part keeps any later NULs).
    public static func parts(_ bytes: [UInt8], count: Int) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var rest = bytes[...]
        while parts.count < count - 1, let cut = rest.firstIndex(of: 0) {
            parts.append(Array(rest[..<cut]))
            rest = rest[(cut + 1)...]
        }
        parts.append(Array(rest))
        while parts.count < count { parts.append([]) }
        return parts
    }

    /// Limits a fuzzed book stays within, well under libFuzzer's -rss_limit_mb (the defaults allow a
    /// 1 GiB entry, which a lying header can make the reader allocate before it finds out).
    public static let limits: Limits = {
        var limits = Limits()
        limits.maxEntryUncompressedSize = 64 << 20
        limits.maxTotalUncompressedSize = 256 << 20
        limits.maxXMLDocumentSize = 16 << 20
        limits.maxImagePixels = 20_000_000
        limits.maxImageBufferPixels = 5_000_000
        return limits
    }()

    /// A path for this process's scratch files (tmpfs when there is one).
    public static func scratchPath(_ name: String) -> String {
        let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        return "\(directory)/quire-fuzz-\(getpid())-\(name)"
    }

    /// Writes `bytes` to `path`, replacing it.
    public static func write(_ bytes: [UInt8], to path: String) {
        guard let file = fopen(path, "wb") else { fatalError("cannot write \(path)") }
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }

    /// Writes a zip of stored entries with libzip, in order (mimetype first, as OCF wants).
    public static func writeZip(_ entries: [(name: String, data: [UInt8])], to path: String) {
        unlink(path)
        var error: Int32 = 0
        guard let archive = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &error) else { fatalError("zip_open \(error)") }
        for entry in entries {
            // libzip frees the copy with the source; an empty entry has none (libzip would not free it).
            var buffer: UnsafeMutableRawPointer? = nil
            if !entry.data.isEmpty {
                let copy = malloc(entry.data.count)!
                entry.data.withUnsafeBytes { _ = memcpy(copy, $0.baseAddress!, $0.count) }
                buffer = copy
            }
            guard let source = zip_source_buffer(archive, buffer, zip_uint64_t(entry.data.count), 1) else { fatalError("zip_source_buffer") }
            let index = zip_file_add(archive, entry.name, source, zip_flags_t(ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE))
            guard index >= 0 else {
                zip_source_free(source)  // a name libzip refuses: the entry is left out
                continue
            }
            zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0)
        }
        guard zip_close(archive) == 0 else { fatalError("zip_close") }
    }

    public static let containerXML = Array(
        """
        <?xml version="1.0"?>
        <container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
          <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
        </container>
        """.utf8)

    public static let packageDocument = Array(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
          <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
            <dc:identifier id="uid">urn:uuid:0b7e2c1a-1111-4a2b-9c3d-123456789abc</dc:identifier>
            <dc:title>Fuzz</dc:title><dc:language>en</dc:language>
            <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
          </metadata>
          <manifest>
            <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
            <item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/>
            <item id="c2" href="chapter2.xhtml" media-type="application/xhtml+xml"/>
            <item id="css" href="style.css" media-type="text/css"/>
          </manifest>
          <spine><itemref idref="c1"/><itemref idref="c2"/></spine>
        </package>
        """.utf8)

    public static let navDocument = Array(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Nav</title></head>
        <body><nav epub:type="toc"><ol><li><a href="chapter1.xhtml">One</a></li><li><a href="chapter2.xhtml#b">Two</a></li></ol></nav></body></html>
        """.utf8)

    /// A book of two chapters and a stylesheet linked from both, written to `path`.
    public static func writeBook(chapter1: [UInt8], chapter2: [UInt8], css: [UInt8], to path: String) {
        writeZip(
            [
                ("mimetype", Array("application/epub+zip".utf8)),
                ("META-INF/container.xml", containerXML),
                ("OEBPS/content.opf", packageDocument),
                ("OEBPS/nav.xhtml", navDocument),
                ("OEBPS/chapter1.xhtml", chapter1),
                ("OEBPS/chapter2.xhtml", chapter2),
                ("OEBPS/style.css", css),
            ], to: path)
    }
}
