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
import XCTest

/// Every image in a few corpus books measures and decodes to at most 400×400.
final class ImageCorpusTests: XCTestCase {
    struct Outcome {
        var images = 0
        var formats: [ImageFormat: Int] = [:]
        var measureSeconds = 0.0
        var decodeSeconds = 0.0
        var failures: [String] = []
    }

    func run(_ relative: String, unsupported: Set<ImageFormat> = [], minimum: Int = 1) throws -> Outcome {
        let path = try TestSupport.corpusFile(relative).path
        let container = try EPUBContainer.open(path: path)
        var outcome = Outcome()
        let items = container.publication.manifest.filter { $0.mediaType.hasPrefix("image/") && $0.path != nil }
        for item in items {
            guard let bytes = try? container.read(item) else { continue }  // listed but absent: the book's problem
            outcome.images += 1
            let start = Date()
            let info: ImageInfo
            do {
                info = try ImageInfo.measure(bytes)
            } catch {
                outcome.failures.append("\(item.href): measure: \(error)")
                continue
            }
            outcome.measureSeconds += Date().timeIntervalSince(start)
            outcome.formats[info.format, default: 0] += 1
            if items.count <= 3 {
                print("  \(item.href): \(info.format) \(info.width)×\(info.height) animated \(info.isAnimated)")
            }
            let decodeStart = Date()
            do {
                let image = try ImageDecoder.decode(bytes, info: info, maxWidth: 400, maxHeight: 400)
                if unsupported.contains(info.format) { outcome.failures.append("\(item.href): decoded an unsupported format") }
                if image.width > 400 || image.height > 400 || image.width < 1 || image.height < 1 {
                    outcome.failures.append("\(item.href): decoded at \(image.width)×\(image.height)")
                }
                let expected = info.fittedSize(maxWidth: 400, maxHeight: 400)
                if (image.width, image.height) != expected {
                    outcome.failures.append("\(item.href): \(image.width)×\(image.height), expected \(expected)")
                }
            } catch let error as QuireError {
                if !(unsupported.contains(info.format) && error.kind == "unsupported") {
                    outcome.failures.append("\(item.href) (\(info.format) \(info.width)×\(info.height)): \(error)")
                }
            }
            outcome.decodeSeconds += Date().timeIntervalSince(decodeStart)
        }
        let formats = outcome.formats.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        print(String(format: "images %@: %d (%@), measure %.1f ms total, decode to ≤400×400 %.0f ms total",
                     relative, outcome.images, formats.joined(separator: ", "), outcome.measureSeconds * 1000, outcome.decodeSeconds * 1000))
        XCTAssertGreaterThanOrEqual(outcome.images, minimum, relative)
        XCTAssertEqual(outcome.failures, [], relative)
        return outcome
    }

    func testEpubjsAliceJPEGs() throws {
        let outcome = try run("misc-epubs/epubjs-alice.epub", minimum: 28)
        XCTAssertGreaterThanOrEqual(outcome.formats[.jpeg] ?? 0, 28)
    }

    func testStandardEbooksAliceSVGs() throws {
        let outcome = try run("standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub")
        XCTAssertGreaterThan(outcome.formats[.svg] ?? 0, 0)
    }

    func testGhVAllImages() throws {
        _ = try run("idpf-epub3-samples/GhV-oeb-page.epub", minimum: 41)
    }

    /// GhV has 781 <img> elements over 41 files: layout measures each one, so all 781 must be cheap.
    func testGhVMeasureEveryImgElement() throws {
        let corpus = try TestSupport.requireCorpus()
        let container = try EPUBContainer.open(path: corpus.appendingPathComponent("idpf-epub3-samples/GhV-oeb-page.epub").path)
        var sources: [String] = []
        for spineItem in container.publication.spine {
            guard let item = container.publication.item(for: spineItem), let path = item.path else { continue }
            let text = String(decoding: try container.read(path: path), as: UTF8.self)
            for tag in text.components(separatedBy: "<img").dropFirst() {
                guard let range = tag.range(of: #"src="([^"]*)""#, options: .regularExpression) else { continue }
                let src = String(tag[range].dropFirst(5).dropLast())
                if let ref = Href.resolve(src, relativeTo: path) { sources.append(ref.path) }
            }
        }
        XCTAssertEqual(sources.count, 781)
        let readStart = Date()
        let files = try sources.map { try container.read(path: $0) }
        let readSeconds = Date().timeIntervalSince(readStart)
        let start = Date()
        var measured = 0
        for bytes in files {
            let info = try ImageInfo.measure(bytes)
            if info.width > 0 && info.height > 0 { measured += 1 }
        }
        let seconds = Date().timeIntervalSince(start)
        XCTAssertEqual(measured, 781)
        print(String(format: "GhV: measured %d <img> sources in %.2f ms (reading them from the zip: %.1f ms)", measured, seconds * 1000, readSeconds * 1000))
    }

    func testW3CFormats() throws {
        for (name, format) in [("gif", ImageFormat.gif), ("webp", .webp), ("svg", .svg), ("avif", .avif), ("jxl", .jxl)] {
            // AVIF and JPEG XL decode too (libavif, libjxl), at the drawn size.
            let outcome = try run("w3c-epub-tests/pub-cmt-\(name).epub")
            XCTAssertGreaterThan(outcome.formats[format] ?? 0, 0, "pub-cmt-\(name) has a \(format) image")
        }
    }
}
