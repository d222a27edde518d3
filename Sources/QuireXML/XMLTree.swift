import QuireCore

/// A namespaced name. Elements from the HTML parser get the XHTML namespace.
public struct XMLName: Hashable, Sendable, CustomStringConvertible {
    public var namespace: String
    public var local: String

    public init(_ namespace: String, _ local: String) {
        self.namespace = namespace
        self.local = local
    }

    public var description: String { namespace.isEmpty ? local : "{\(namespace)}\(local)" }
}

public struct XMLAttribute: Hashable, Sendable {
    public var name: XMLName
    public var value: String
}

/// Well-known namespace URIs.
public enum Namespace {
    public static let xhtml = "http://www.w3.org/1999/xhtml"
    public static let ops = "http://www.idpf.org/2007/ops"
    public static let opf = "http://www.idpf.org/2007/opf"
    public static let dc = "http://purl.org/dc/elements/1.1/"
    public static let ncx = "http://www.daisy.org/z3986/2005/ncx/"
    public static let xml = "http://www.w3.org/XML/1998/namespace"
    public static let xlink = "http://www.w3.org/1999/xlink"
    public static let svg = "http://www.w3.org/2000/svg"
    public static let mathml = "http://www.w3.org/1998/Math/MathML"
    public static let container = "urn:oasis:names:tc:opendocument:xmlns:container"
    public static let xmlenc = "http://www.w3.org/2001/04/xmlenc#"
    public static let ocfEncryption = "urn:oasis:names:tc:opendocument:xmlns:container"
}

/// Identity of a node within its tree. Ids are assigned in document order, so comparing ids
/// compares document positions, and a node's descendants are the ids up to its subtree end.
public struct NodeID: Hashable, Comparable, Sendable {
    public let index: Int32
    public init(_ index: Int32) { self.index = index }
    public static func < (lhs: NodeID, rhs: NodeID) -> Bool { lhs.index < rhs.index }
}

/// An immutable parsed document stored as flat arrays (one entry per element or text node).
/// Cheap to share across threads and gives every node a stable identity.
public final class XMLTree: Sendable {
    public enum Kind: UInt8, Sendable { case element, text }

    /// Where the document came from (archive path), for messages.
    public let documentPath: String
    let kinds: [Kind]
    let parents: [Int32]
    let nextSiblings: [Int32]
    let subtreeEnds: [Int32]  // exclusive
    /// For elements, an index into `names`; for text nodes, an index into `texts`.
    let payloads: [Int32]
    let attributeStarts: [Int32]  // count + 1 entries per node
    let names: [XMLName]
    let texts: [String]
    let attributeStore: [XMLAttribute]
    /// Recoverable problems met while parsing (entities skipped, recovery used).
    public let warnings: [Warning]

    init(builder: XMLTreeBuilder, documentPath: String) {
        self.documentPath = documentPath
        kinds = builder.kinds
        parents = builder.parents
        nextSiblings = builder.nextSiblings
        subtreeEnds = builder.subtreeEnds
        payloads = builder.payloads
        attributeStarts = builder.attributeStarts
        names = builder.names
        texts = builder.texts
        attributeStore = builder.attributes
        warnings = builder.warnings
    }

    public var nodeCount: Int { kinds.count }

    /// Each element's place among its siblings of the same local name (1-based) and how many
    /// there are, and its place among all its element siblings, built in one pass on first use:
    /// XPointers and CFIs ask at every page's start and end, and counting siblings each time was
    /// quadratic in a long run of paragraphs.
    private let siblingPlaces = LockedValue<[SiblingPlace]?>(nil)

    private struct SiblingPlace {
        var sameName: Int32 = 1
        var sameNameCount: Int32 = 1
        var element: Int32 = 1
    }

    public func sameNameSiblingPlace(of node: NodeID) -> (position: Int, count: Int) {
        let place = siblingPlace(of: node)
        return (Int(place.sameName), Int(place.sameNameCount))
    }

    /// An element's place (1-based) among its parent's element children.
    public func elementSiblingPlace(of node: NodeID) -> Int { Int(siblingPlace(of: node).element) }

    private func siblingPlace(of node: NodeID) -> SiblingPlace {
        let table = siblingPlaces.withLock { table in
            if let table { return table }
            let built = buildSiblingPlaces()
            table = built
            return built
        }
        return table[Int(node.index)]
    }

    private func buildSiblingPlaces() -> [SiblingPlace] {
        // Names are compared by local name: an index for each distinct one.
        var localNames: [String: Int32] = [:]
        let localOfName = names.map { name in
            if let index = localNames[name.local] { return index }
            let index = Int32(localNames.count)
            localNames[name.local] = index
            return index
        }
        var table = [SiblingPlace](repeating: SiblingPlace(), count: kinds.count)
        // Running counts by local name for the children of one parent at a time.
        var counts = [Int32](repeating: 0, count: localNames.count)
        for parent in kinds.indices where kinds[parent] == .element {
            var child = parent + 1 < Int(subtreeEnds[parent]) ? parent + 1 : -1
            var elements: Int32 = 0
            var first = child
            while child >= 0 {
                if kinds[child] == .element {
                    let name = Int(localOfName[Int(payloads[child])])
                    counts[name] += 1
                    elements += 1
                    table[child].sameName = counts[name]
                    table[child].element = elements
                }
                child = Int(nextSiblings[child])
            }
            guard elements > 0 else { continue }
            // The totals go to every child of the name; the counts are cleared for the next parent.
            child = first
            while child >= 0 {
                if kinds[child] == .element { table[child].sameNameCount = counts[Int(localOfName[Int(payloads[child])])] }
                child = Int(nextSiblings[child])
            }
            while first >= 0 {
                if kinds[first] == .element { counts[Int(localOfName[Int(payloads[first])])] = 0 }
                first = Int(nextSiblings[first])
            }
        }
        return table
    }

    /// Whether any element has one of these local names (checks the interned name table only).
    public func hasElement(named locals: Set<String>) -> Bool {
        names.contains { locals.contains($0.local) }
    }

    /// The document element.
    public var root: XMLElement? {
        guard !kinds.isEmpty, kinds[0] == .element else { return nil }
        return XMLElement(tree: self, id: NodeID(0))
    }

    public func kind(of node: NodeID) -> Kind { kinds[Int(node.index)] }

    /// Text of a text node (empty for elements).
    public func text(of node: NodeID) -> String {
        kinds[Int(node.index)] == .text ? texts[Int(payloads[Int(node.index)])] : ""
    }

    public func element(_ node: NodeID) -> XMLElement? {
        kinds[Int(node.index)] == .element ? XMLElement(tree: self, id: node) : nil
    }

    public func parent(of node: NodeID) -> NodeID? {
        let parent = parents[Int(node.index)]
        return parent < 0 ? nil : NodeID(parent)
    }

    /// All nodes in the subtree below `node`, in document order (excluding `node`).
    public func descendantIDs(of node: NodeID) -> Range<Int32> {
        (node.index + 1)..<subtreeEnds[Int(node.index)]
    }

    /// Direct children in order.
    /// The sibling just before a node: node `i - 1` is its parent (no such sibling) or the last
    /// descendant of that sibling, whose ancestors lead to it.
    public func previousSibling(of node: NodeID) -> NodeID? {
        let index = Int(node.index)
        guard index > 0 else { return nil }
        let parent = parents[index]
        var candidate = Int32(index - 1)
        while candidate >= 0, candidate != parent {
            if parents[Int(candidate)] == parent { return NodeID(candidate) }
            candidate = parents[Int(candidate)]
        }
        return nil
    }

    public func childIDs(of node: NodeID) -> ChildSequence {
        let first = node.index + 1
        let hasChildren = first < subtreeEnds[Int(node.index)]
        return ChildSequence(tree: self, first: hasChildren ? first : -1)
    }

    public struct ChildSequence: Sequence, IteratorProtocol {
        let tree: XMLTree
        var next_: Int32
        init(tree: XMLTree, first: Int32) {
            self.tree = tree
            self.next_ = first
        }
        public mutating func next() -> NodeID? {
            guard next_ >= 0 else { return nil }
            let current = next_
            next_ = tree.nextSiblings[Int(current)]
            return NodeID(current)
        }
    }
}

/// A view of one element in a tree: the navigation API everything above the parser uses.
public struct XMLElement: Sendable, Hashable {
    public let tree: XMLTree
    public let id: NodeID

    public static func == (lhs: XMLElement, rhs: XMLElement) -> Bool { lhs.tree === rhs.tree && lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    public var name: XMLName { tree.names[Int(tree.payloads[Int(id.index)])] }
    public var localName: String { name.local }
    public var namespace: String { name.namespace }

    public func `is`(_ local: String, _ namespace: String) -> Bool {
        let n = name
        return n.local == local && n.namespace == namespace
    }

    public var attributes: ArraySlice<XMLAttribute> {
        let i = Int(id.index)
        return tree.attributeStore[Int(tree.attributeStarts[i])..<Int(tree.attributeStarts[i + 1])]
    }

    /// The value of an attribute; `namespace` empty means an unprefixed attribute.
    public func attribute(_ local: String, namespace: String = "") -> String? {
        for attribute in attributes where attribute.name.local == local && attribute.name.namespace == namespace {
            return attribute.value
        }
        return nil
    }

    public var parent: XMLElement? { tree.parent(of: id).flatMap(tree.element) }

    public var elementChildren: [XMLElement] {
        tree.childIDs(of: id).compactMap { tree.element($0) }
    }

    public func children(_ local: String, _ namespace: String) -> [XMLElement] {
        elementChildren.filter { $0.is(local, namespace) }
    }

    public func firstChild(_ local: String, _ namespace: String) -> XMLElement? {
        for child in tree.childIDs(of: id) {
            if let element = tree.element(child), element.is(local, namespace) { return element }
        }
        return nil
    }

    /// Descendant elements in document order, optionally filtered by name.
    public func descendants(_ local: String? = nil, _ namespace: String? = nil) -> [XMLElement] {
        var result: [XMLElement] = []
        for index in tree.descendantIDs(of: id) {
            guard let element = tree.element(NodeID(index)) else { continue }
            if let local, element.localName != local { continue }
            if let namespace, element.namespace != namespace { continue }
            result.append(element)
        }
        return result
    }

    /// Concatenated text of all descendant text nodes.
    public var textContent: String {
        var text = ""
        for index in tree.descendantIDs(of: id) where tree.kinds[Int(index)] == .text {
            text += tree.texts[Int(tree.payloads[Int(index)])]
        }
        return text
    }

    /// Whether some text node lies inside the element (`textContent` is not empty), without
    /// joining the text.
    public var hasTextContent: Bool {
        tree.descendantIDs(of: id).contains { tree.kinds[Int($0)] == .text && !tree.texts[Int(tree.payloads[Int($0)])].isEmpty }
    }

    /// `textContent.utf16.count`, without joining the text.
    public var textContentUTF16Length: Int {
        var length = 0
        for index in tree.descendantIDs(of: id) where tree.kinds[Int(index)] == .text {
            length += tree.texts[Int(tree.payloads[Int(index)])].utf16Length
        }
        return length
    }

    /// Whether `textContent.collapsingWhitespace()` is longer than `limit` UTF-16 units; reads
    /// only as far as it needs to (a test on a chapter's first words, not a copy of the chapter).
    public func collapsedTextLength(exceeds limit: Int) -> Bool {
        var length = 0
        var pendingSpace = false
        for index in tree.descendantIDs(of: id) where tree.kinds[Int(index)] == .text {
            for scalar in tree.texts[Int(tree.payloads[Int(index)])].unicodeScalars {
                if scalar.isXMLWhitespace || scalar.properties.isWhitespace {
                    pendingSpace = length > 0
                    continue
                }
                length += (pendingSpace ? 1 : 0) + scalar.utf16.count
                pendingSpace = false
                if length > limit { return true }
            }
        }
        return false
    }

    /// `xml:lang`, else `lang`, looked up through ancestors.
    public var language: String? {
        var current: XMLElement? = self
        while let element = current {
            if let lang = element.attribute("lang", namespace: Namespace.xml) ?? element.attribute("lang") {
                return lang
            }
            current = element.parent
        }
        return nil
    }
}

/// Accumulates the flat arrays while walking libxml2's tree.
struct XMLTreeBuilder {
    var kinds: [XMLTree.Kind] = []
    var parents: [Int32] = []
    var nextSiblings: [Int32] = []
    var subtreeEnds: [Int32] = []
    var payloads: [Int32] = []
    var attributeStarts: [Int32] = [0]
    var names: [XMLName] = []
    var nameIndex: [XMLName: Int32] = [:]
    var texts: [String] = []
    var attributes: [XMLAttribute] = []
    var warnings: [Warning] = []
    /// The previous sibling still open for linking, per depth.
    var lastChildStack: [Int32] = [-1]
    var openStack: [Int32] = []

    mutating func intern(_ name: XMLName) -> Int32 {
        if let index = nameIndex[name] { return index }
        let index = Int32(names.count)
        names.append(name)
        nameIndex[name] = index
        return index
    }

    private mutating func appendNode(kind: XMLTree.Kind, payload: Int32) -> Int32 {
        let index = Int32(kinds.count)
        kinds.append(kind)
        parents.append(openStack.last ?? -1)
        nextSiblings.append(-1)
        subtreeEnds.append(index + 1)
        payloads.append(payload)
        let previous = lastChildStack[lastChildStack.count - 1]
        if previous >= 0 { nextSiblings[Int(previous)] = index }
        lastChildStack[lastChildStack.count - 1] = index
        return index
    }

    /// Opens an element whose name `intern` numbered `name`.
    mutating func openElement(interned name: Int32, attributes newAttributes: [XMLAttribute]) {
        let index = appendNode(kind: .element, payload: name)
        attributes.append(contentsOf: newAttributes)
        attributeStarts.append(Int32(attributes.count))
        openStack.append(index)
        lastChildStack.append(-1)
    }

    mutating func closeElement() {
        let index = openStack.removeLast()
        lastChildStack.removeLast()
        subtreeEnds[Int(index)] = Int32(kinds.count)
    }

    /// Adjacent text (from entity references or CDATA) merges into one node.
    mutating func appendText(_ text: String) {
        guard !text.isEmpty else { return }
        let previous = lastChildStack[lastChildStack.count - 1]
        if previous >= 0, kinds[Int(previous)] == .text {
            texts[Int(payloads[Int(previous)])] += text
            return
        }
        texts.append(text)
        _ = appendNode(kind: .text, payload: Int32(texts.count - 1))
        attributeStarts.append(Int32(attributes.count))
    }
}
