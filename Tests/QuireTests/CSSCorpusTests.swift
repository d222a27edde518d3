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

/// Every stylesheet in the corpus goes through the engine without crashing, and the report shows
/// how much of the corpus CSS is honoured.
final class CSSCorpusTests: XCTestCase {
    func testCorpusStylesheets() throws {
        let books = try TestSupport.corpusEPUBs()
        var total = CSSReport()
        var styledElements = 0
        var opened = 0
        let engine = StyleEngine()
        for book in books {
            guard let container = try? EPUBContainer.open(path: book.path) else { continue }
            opened += 1
            let publication = container.publication
            var documents: [(tree: XMLTree, path: String)] = []
            for spineItem in publication.spine {
                guard let item = publication.item(for: spineItem), let path = item.path,
                    item.mediaType.contains("html"), let bytes = try? container.read(path: path)
                else { continue }
                let tree: XMLTree
                do {
                    tree = try XMLParser.parse(bytes, path: path, mode: .recover)
                } catch QuireError.invalidXML {
                    guard let html = try? XMLParser.parse(bytes, path: path, mode: .html) else { continue }
                    tree = html
                } catch {
                    continue
                }
                documents.append((tree, path))
            }
            let load: (String) -> [UInt8]? = { try? container.read(path: $0) }
            let environment = StyleEnvironment(
                viewportWidth: 600, viewportHeight: 900, bookLanguage: publication.metadata.languages.first)
            for (tree, path) in documents {
                let styles = engine.computeStyles(document: tree, documentPath: path, environment: environment, loadResource: load)
                if let root = tree.root {
                    _ = styles.style(of: root.id)
                    styledElements += tree.nodeCount
                }
            }
            let report = CSSReport.build(documents: documents, loadResource: load)
            total.add(report)
        }
        XCTAssertGreaterThan(opened, 0)
        print(String(format: "CSS corpus: %d books, %d declarations, %.2f%% applied (%d unsupported, %d invalid)",
            opened, total.total, total.appliedPercentage, total.unsupported, total.invalid))
        for (name, counts) in total.topNotApplied.prefix(25) {
            print("  \(name): applied \(counts.applied), unsupported \(counts.unsupported), invalid \(counts.invalid)")
        }
        XCTAssertGreaterThan(styledElements, 0)
        // Of the valid CSS (applied + unsupported), how much is honoured; invalid CSS is the book's fault.
        let ofValid = Double(total.applied) * 100 / Double(max(1, total.applied + total.unsupported))
        print(String(format: "CSS corpus: %.2f%% of valid declarations applied", ofValid))
        XCTAssertGreaterThanOrEqual(ofValid, 95)
        // Each distinct piece of CSS counts once per book (CSSReport): one textbook's invalid
        // `style="text-align:axis"`, repeated on 2,542 MathML tables, is one declaration.
        XCTAssertGreaterThanOrEqual(total.appliedPercentage, 95)
    }
}
