import CFreeType
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

final class FontObfuscationTests: XCTestCase {
    /// The family name FreeType reads from font bytes, or nil when they are not a loadable font.
    static func familyName(_ bytes: [UInt8]) -> String? {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { return nil }
        defer { FT_Done_FreeType(library) }
        var face: FT_Face?
        let error = bytes.withUnsafeBufferPointer { buffer in
            FT_New_Memory_Face(library, buffer.baseAddress, FT_Long(buffer.count), 0, &face)
        }
        guard error == 0, let face else { return nil }
        defer { FT_Done_Face(face) }
        return face.pointee.family_name.map { String(cString: $0) }
    }

    func testWastelandFontsComeOutDeobfuscated() throws {
        let corpus = try TestSupport.requireCorpus()
        let book = try EPUBContainer.open(path: corpus.appendingPathComponent("idpf-epub3-samples/wasteland-otf-obf.epub").path)
        let fonts = book.publication.encryption.filter { $0.value == .idpfObfuscation }.map(\.key).sorted()
        XCTAssertEqual(fonts.count, 3, "three obfuscated OldStandard fonts")
        for path in fonts {
            XCTAssertNil(Self.familyName(try book.archive.read(path)), "\(path): the raw bytes must not load (still obfuscated)")
            // The fonts name their family "Old Standard TT".
            let family = Self.familyName(try book.read(path: path))
            XCTAssertTrue(family?.hasPrefix("Old Standard") ?? false, "\(path): \(family ?? "not loadable")")
        }
    }

    func testW3CObfuscationTestFont() throws {
        let corpus = try TestSupport.requireCorpus()
        let book = try EPUBContainer.open(path: corpus.appendingPathComponent("w3c-epub-tests/ocf-font_obfuscation.epub").path)
        let fonts = book.publication.encryption.keys.sorted()
        XCTAssertFalse(fonts.isEmpty)
        for path in fonts { XCTAssertNotNil(Self.familyName(try book.read(path: path)), path) }
    }

    /// A system font is mangled with the Adobe algorithm by the test, packed into a book and must
    /// come back loadable; the IDPF variant is round-tripped the same way.
    func testAdobeAndIDPFRoundTrip() throws {
        let candidates = [
            "/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
        ]
        let fontPath = try XCTUnwrap(
            candidates.first(where: { FileManager.default.fileExists(atPath: $0) }),
            "no system font found (make setup installs fonts-noto-core)")
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fontPath)))
        let expectedFamily = try XCTUnwrap(Self.familyName(original))
        let uuid = "urn:uuid:0b7e2c1a-1111-4a2b-9c3d-123456789abc"
        for (algorithm, key, length) in [
            (FontObfuscation.adobeAlgorithm, FontObfuscation.adobeKey(identifiers: [uuid])!, FontObfuscation.adobeLength),
            (FontObfuscation.idpfAlgorithm, FontObfuscation.idpfKey(uniqueIdentifier: " \(uuid)\n"), FontObfuscation.idpfLength),
        ] {
            var mangled = original
            FontObfuscation.apply(key: key, length: length, to: &mangled)
            XCTAssertNil(Self.familyName(mangled))
            var book = TestBook()
            book.identifier = uuid
            book.extraManifest = #"<item id="font" href="fonts/f.ttf" media-type="font/ttf"/>"#
            book.extraEntries = [
                .init(name: "OEBPS/fonts/f.ttf", data: mangled),
                .init(
                    name: "META-INF/encryption.xml",
                    data: Array(
                        """
                        <encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
                          <enc:EncryptedData><enc:EncryptionMethod Algorithm="\(algorithm)"/>
                            <enc:CipherData><enc:CipherReference URI="OEBPS/fonts/f.ttf"/></enc:CipherData></enc:EncryptedData>
                        </encryption>
                        """.utf8)),
            ]
            let directory = try TestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("font.epub")
            try book.write(to: url)
            let container = try EPUBContainer.open(path: url.path)
            XCTAssertEqual(Self.familyName(try container.read(path: "OEBPS/fonts/f.ttf")), expectedFamily, algorithm)
        }
    }
}
