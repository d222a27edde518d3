import QuireContainer
import QuireCore
import QuireXML

/// One XHTML (or tag-soup HTML) content document of the spine, with the text model positions use:
/// the spine item's text content is every text node under `<body>` in document order, and an
/// offset counts UTF-16 code units into it (the unit EPUB CFIs use for character offsets).
public struct ContentDocument: Sendable {
    public let path: String
    public let tree: XMLTree
    public let body: XMLElement?
    /// For each node index, the offset of that text node's first unit; -1 for nodes outside body and elements.
    public let textStarts: [Int32]
    /// Total text length in UTF-16 units.
    public let textLength: Int
    /// `id` attribute → element, for fragment targets.
    public let ids: [String: NodeID]
    public let warnings: [Warning]
    /// The file's bytes, for models that read the source as another reader would (crengine's text nodes).
    public let source: [UInt8]
    /// Read by the HTML parser (tag soup), not as XML.
    public let readAsHTML: Bool

    /// Parses as XML; if the document is not well-formed, falls back to the HTML parser with a warning.
    public static func parse(_ bytes: [UInt8], path: String, mediaType: String = "application/xhtml+xml", limits: Limits = .standard)
        throws -> ContentDocument
    {
        var warnings: [Warning] = []
        let tree: XMLTree
        var html = mediaType == "text/html"
        if html {
            tree = try XMLParser.parse(bytes, path: path, mode: .html, limits: limits)
        } else {
            do {
                tree = try XMLParser.parse(bytes, path: path, mode: .strict, limits: limits, externalEntities: .skip)
            } catch QuireError.invalidXML(_, let reason) {
                warnings.append(Warning("xhtml-not-well-formed", "\(path): \(reason); read with the HTML parser"))
                tree = try XMLParser.parse(bytes, path: path, mode: .html, limits: limits)
                html = true
            }
        }
        warnings += tree.warnings
        return ContentDocument(path: path, tree: tree, warnings: warnings, source: bytes, readAsHTML: html)
    }

    public init(path: String, tree: XMLTree, warnings: [Warning] = [], source: [UInt8] = [], readAsHTML: Bool = false) {
        self.path = path
        self.tree = tree
        self.warnings = warnings
        self.source = source
        self.readAsHTML = readAsHTML
        let root = tree.root
        body = root.flatMap { root in root.localName == "body" ? root : root.descendants("body").first }
            ?? (root?.localName == "svg" ? root : nil)
        var starts = [Int32](repeating: -1, count: tree.nodeCount)
        var offset: Int32 = 0
        if let body {
            for index in tree.descendantIDs(of: body.id) where tree.kind(of: NodeID(index)) == .text {
                starts[Int(index)] = offset
                offset += Int32(tree.text(of: NodeID(index)).utf16Length)
            }
        }
        textStarts = starts
        textLength = Int(offset)
        var ids: [String: NodeID] = [:]
        if let root {
            for element in [root] + root.descendants() {
                if let id = element.attribute("id") ?? element.attribute("id", namespace: Namespace.xml), ids[id] == nil {
                    ids[id] = element.id
                }
            }
        }
        self.ids = ids
    }

    /// The text offset where an element's content begins (the first text node at or after it).
    public func textOffset(atElement node: NodeID) -> Int {
        for index in node.index..<Int32(tree.nodeCount) where textStarts[Int(index)] >= 0 {
            return Int(textStarts[Int(index)])
        }
        return textLength
    }
}

extension ContentDocument {
    /// A manifest item's document, read from the book and parsed within the book's limits: the one
    /// way layout, positions and the CSS report get a content document.
    public static func read(_ item: ManifestItem, from container: EPUBContainer) throws -> ContentDocument {
        guard let path = item.path else { throw QuireError.missingResource(href: item.href, context: "manifest item \(item.id)") }
        return try parse(container.read(path: path), path: path, mediaType: item.mediaType, limits: container.archive.limits)
    }
}
