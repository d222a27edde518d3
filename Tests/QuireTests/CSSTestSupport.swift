import XCTest

@testable import QuireStyle
@testable import QuireXML

/// Styles a small XHTML document with the given CSS in a <style> block.
struct StyledDocument {
    let tree: XMLTree
    let styles: DocumentStyles

    init(
        css: String = "", body: String, head: String = "", htmlAttributes: String = "",
        environment: StyleEnvironment = StyleEnvironment(), resources: [String: String] = [:]
    ) throws {
        let source = """
            <?xml version="1.0" encoding="utf-8"?>
            <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" \(htmlAttributes)><head><title>T</title>\(head)<style>\(css.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;"))</style></head><body>\(body)</body></html>
            """
        tree = try XMLParser.parse(Array(source.utf8), path: "OEBPS/text/ch1.xhtml", mode: .strict)
        styles = StyleEngine().computeStyles(
            document: tree, documentPath: "OEBPS/text/ch1.xhtml", environment: environment,
            loadResource: { resources[$0].map { Array($0.utf8) } })
    }

    /// The first element with this id.
    func element(_ id: String) -> NodeID {
        for index in 0..<Int32(tree.nodeCount) {
            if let element = tree.element(NodeID(index)), element.attribute("id") == id { return NodeID(index) }
        }
        XCTFail("no element #\(id)")
        return NodeID(0)
    }

    func style(_ id: String) -> ComputedStyle { styles.style(of: element(id)).style }
    func full(_ id: String) -> ElementStyle { styles.style(of: element(id)) }
}

func tokens(_ css: String) -> [CSSToken] { Tokenizer.tokenize(css) }
