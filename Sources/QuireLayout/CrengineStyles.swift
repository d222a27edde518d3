import QuireContainer
import QuireDocument
import QuireStyle
import QuireXML

extension CrengineStyle {
    /// One cascade for every geometry: what crengine's DOM builder decides must not change with the
    /// page size or the reader's settings, or the same spot would get two XPointers.
    static let engine = StyleEngine()

    /// crengine's view of each node of a content document (by node index), from the book's CSS at
    /// the reference page (`StyleEnvironment.reference`) with no reader overrides.
    public static func of(_ document: ContentDocument, container: EPUBContainer) -> [CrengineStyle] {
        of(document) { path in try? container.read(path: path) }
    }

    /// The same for a document outside a book: `loadResource(archivePath)` gives its stylesheets.
    public static func of(_ document: ContentDocument, loadResource: (String) -> [UInt8]?) -> [CrengineStyle] {
        let styles = engine.computeStyles(document: document.tree, documentPath: document.path, environment: .reference, loadResource: loadResource)
        return of(document.tree, styles: styles)
    }

    static func of(_ tree: XMLTree, styles: DocumentStyles) -> [CrengineStyle] {
        (0..<Int32(tree.nodeCount)).map { index in
            let node = NodeID(index)
            guard tree.kind(of: node) == .element else { return [] }
            let style = styles.computedStyle(of: node)
            let generated = styles.generatedContent(of: node)
            var result: CrengineStyle = []
            switch style.display {
            case .none: break
            case .inline, .ruby, .rubyText, .contents: result.insert(.inline)
            // Inline among its siblings, a block for its own content.
            case .inlineBlock, .inlineTable, .inlineFlex, .inlineGrid: result.formUnion([.inline, .block])
            default: result.insert(.block)
            }
            switch style.whiteSpace {
            case .pre, .preWrap, .breakSpaces: result.formUnion([.pre, .preserved])
            case .preLine: result.insert(.pre)
            case .normal, .nowrap: break
            }
            if style.float != .none { result.insert(.floating) }
            if generated.before { result.insert(.before) }
            if generated.after { result.insert(.after) }
            return result
        }
    }
}
