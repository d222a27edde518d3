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

/// Prints how long styling War and Peace takes (a probe, never an assertion on time).
final class CSSPerformanceProbe: XCTestCase {
    func testStyleWarAndPeace() throws {
        let path = try TestSupport.corpusFile("standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub").path
        let container = try EPUBContainer.open(path: path)
        var documents: [(XMLTree, String)] = []
        for spineItem in container.publication.spine {
            guard let item = container.publication.item(for: spineItem), let p = item.path else { continue }
            documents.append((try XMLParser.parse(try container.read(path: p), path: p, mode: .recover), p))
        }
        var sheets: [String: [UInt8]] = [:]
        let load: (String) -> [UInt8]? = { p in
            if let cached = sheets[p] { return cached }
            let bytes = try? container.read(path: p)
            sheets[p] = bytes
            return bytes
        }
        let engine = StyleEngine()
        let environment = StyleEnvironment()
        var elements = 0, distinct = 0
        let start = Date()
        for (tree, p) in documents {
            let styles = engine.computeStyles(document: tree, documentPath: p, environment: environment, loadResource: load)
            elements += tree.nodeCount
            distinct += styles.distinctStyleCount
        }
        let seconds = Date().timeIntervalSince(start)
        print(String(format: "War and Peace: %d documents, %d nodes, %d distinct styles summed, styled in %.3f s", documents.count, elements, distinct, seconds))
        XCTAssertEqual(documents.count, container.publication.spine.count)
    }
}
