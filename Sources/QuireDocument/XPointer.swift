import QuireCore
import QuireXML

/// KOReader (crengine) XPointers: `/body/DocFragment[N]/body/div[2]/p[5]/text()[2].K`, written
/// as KOReader's releases write them (crengine's `toStringV2`, DOM versions 20200223…20260811).
/// - DocFragment counts spine itemrefs from 1, linear or not (crengine's epubfmt.cpp builds one
///   per itemref); the index is left out when the book has one.
/// - Element steps count same-name siblings from 1, written only where there are two or more.
/// - `text()[k]` counts the text nodes crengine keeps (`CrengineText`), `.K` the characters of
///   crengine's text of that node (Unicode scalars after its white-space processing).
/// Pointers in crengine's newer spelling (every step indexed, `/body[1]/…/text()[1].K`) and the
/// older one without `[1]` are read alike.
public enum XPointer {
    public static func make(spineIndex: Int, fragmentCount: Int, text: DocumentText, model: CrengineText?, offset: Int) -> String {
        let tree = text.document.tree
        let path = fragmentCount > 1 ? "/body/DocFragment[\(spineIndex + 1)]" : "/body/DocFragment"
        guard let body = text.document.body else { return path }
        guard let model else { return path + domPath(body: body.id, text: text, offset: offset) }
        // A position at white space just after a picture (a page that starts with it) is named by the
        // picture's element: crengine keeps no text there.
        if let (node, local) = text.node(at: offset), local == 0, isBlank(tree.text(of: node)),
            let element = previousSiblingWithoutText(node, tree)
        {
            return path + elementPath(from: body.id, to: element, tree: tree)
        }
        guard let (index, character) = model.location(at: offset) else { return path + "/body" }
        let node = model.nodes[index]
        return path + elementPath(from: body.id, to: node.parent, tree: tree)
            + (node.siblings > 1 ? "/text()[\(node.index)]" : "/text()") + ".\(character)"
    }

    static func previousSiblingWithoutText(_ node: NodeID, _ tree: XMLTree) -> NodeID? {
        guard let previous = tree.previousSibling(of: node), let element = tree.element(previous), !element.hasTextContent else { return nil }
        return element.id
    }

    /// Without crengine's text model (a document read as tag soup, or not UTF-8): libxml2's text
    /// nodes, blank ones left out, offsets in scalars.
    static func domPath(body: NodeID, text: DocumentText, offset: Int) -> String {
        let tree = text.document.tree
        guard var (node, local) = text.node(at: offset) else { return "/body" }
        if isDropped(node, tree), local == 0, let index = text.nodes.firstIndex(of: node) {
            if let element = previousSiblingWithoutText(node, tree) { return elementPath(from: body, to: element, tree: tree) }
            if index > 0, !isDropped(text.nodes[index - 1], tree) {
                node = text.nodes[index - 1]
                local = tree.text(of: node).utf16.count
            }
        }
        guard let parent = tree.parent(of: node) else { return "/body" }
        let path = elementPath(from: body, to: parent, tree: tree)
        if isDropped(node, tree) { return path }
        var textIndex = 0
        for child in tree.childIDs(of: parent) where tree.kind(of: child) == .text {
            if !isDropped(child, tree) { textIndex += 1 }
            if child == node { break }
        }
        var scalars = 0
        var units = 0
        for scalar in tree.text(of: node).unicodeScalars {
            guard units < local else { break }
            scalars += 1
            units += scalar.utf16.count
        }
        return path + (textIndex > 1 ? "/text()[\(textIndex)]" : "/text()") + ".\(scalars)"
    }

    static func isBlank(_ text: String) -> Bool { text.unicodeScalars.allSatisfy(\.isXMLWhitespace) }

    /// crengine drops blank text nodes, except inside preformatted elements where they show.
    static func isDropped(_ node: NodeID, _ tree: XMLTree) -> Bool {
        guard isBlank(tree.text(of: node)) else { return false }
        var current = tree.parent(of: node)
        while let id = current {
            if let name = tree.element(id)?.localName, name == "pre" || name == "textarea" { return false }
            current = tree.parent(of: id)
        }
        return true
    }

    /// `/body/...` from the body element down to `node`, with indexes only where siblings share a name.
    static func elementPath(from body: NodeID, to node: NodeID, tree: XMLTree) -> String {
        var steps: [String] = []
        var current = node
        while current != body, let parent = tree.parent(of: current) {
            let name = tree.element(current)?.localName ?? "?"
            let place = tree.sameNameSiblingPlace(of: current)
            steps.append(place.count > 1 ? "/\(name)[\(place.position)]" : "/\(name)")
            current = parent
        }
        return "/body" + steps.reversed().joined()
    }

    public struct Parsed: Equatable, Sendable {
        public var fragment: Int
        public var steps: [(name: String, index: Int)]
        public var textIndex: Int?
        public var offset: Int?

        public static func == (lhs: Parsed, rhs: Parsed) -> Bool {
            lhs.fragment == rhs.fragment && lhs.steps.map(\.name) == rhs.steps.map(\.name)
                && lhs.steps.map(\.index) == rhs.steps.map(\.index) && lhs.textIndex == rhs.textIndex && lhs.offset == rhs.offset
        }
    }

    public static func parse(_ text: String) throws -> Parsed {
        var body = text.trimmingWhitespace()
        var offset: Int?
        // A trailing `.K` after text() or an element.
        if let dot = body.lastIndex(of: "."), let number = Int(body[body.index(after: dot)...]) {
            offset = number
            body = String(body[..<dot])
        }
        var parts = body.split(separator: "/").map(String.init)
        guard parts.count >= 2, parts[0] == "body" || parts[0] == "body[1]", parts[1].hasPrefix("DocFragment") else {
            throw QuireError.unresolvable("an XPointer starts with /body/DocFragment[N]")
        }
        func step(_ part: String) throws -> (String, Int) {
            guard let open = part.firstIndex(of: "[") else { return (part, 1) }
            guard part.hasSuffix("]"), let number = Int(part[part.index(after: open)..<part.index(before: part.endIndex)]), number >= 1 else {
                throw QuireError.unresolvable("bad XPointer step '\(part)'")
            }
            return (String(part[..<open]), number)
        }
        let fragment = try step(parts[1]).1
        parts.removeFirst(2)
        var steps: [(String, Int)] = []
        var textIndex: Int?
        for part in parts {
            if part.hasPrefix("text()") {
                let rest = part.dropFirst(6)
                if rest.isEmpty {
                    textIndex = 1
                } else if rest.hasPrefix("["), rest.hasSuffix("]"), let number = Int(rest.dropFirst().dropLast()) {
                    textIndex = number
                } else {
                    throw QuireError.unresolvable("bad XPointer text step '\(part)'")
                }
            } else {
                guard textIndex == nil else { throw QuireError.unresolvable("an XPointer cannot step below text()") }
                steps.append(try step(part))
            }
        }
        return Parsed(fragment: fragment, steps: steps, textIndex: textIndex, offset: offset)
    }

    /// The text offset an XPointer names in its document (fragment already chosen by the caller).
    public static func offset(of parsed: Parsed, in text: DocumentText, model: CrengineText?) throws -> Int {
        let tree = text.document.tree
        guard let body = text.document.body else { throw QuireError.unresolvable("the document has no body") }
        var steps = parsed.steps[...]
        guard let first = steps.first, first.name == "body" else { throw QuireError.unresolvable("an XPointer's fragment path starts at body") }
        steps = steps.dropFirst()
        var current = body.id
        for (name, index) in steps {
            let matches = tree.childIDs(of: current).filter { tree.element($0)?.localName == name }
            guard index - 1 < matches.count else {
                throw QuireError.unresolvable("XPointer step \(name)[\(index)] does not exist under <\(tree.element(current)?.localName ?? "?")>")
            }
            current = matches[index - 1]
        }
        guard let textIndex = parsed.textIndex else {
            return text.document.textOffset(atElement: current) + (parsed.offset ?? 0)
        }
        if let model { return try model.offset(parent: current, index: textIndex, character: parsed.offset ?? 0) }
        let texts = tree.childIDs(of: current).filter { tree.kind(of: $0) == .text && !isDropped($0, tree) }
        guard textIndex - 1 < texts.count else {
            throw QuireError.unresolvable("XPointer text()[\(textIndex)] does not exist in <\(tree.element(current)?.localName ?? "?")>")
        }
        let node = texts[textIndex - 1]
        let scalars = Array(tree.text(of: node).unicodeScalars)
        let wanted = parsed.offset ?? 0
        guard wanted <= scalars.count else {
            throw QuireError.unresolvable("XPointer offset .\(wanted) is past the end of its text (\(scalars.count) characters)")
        }
        let units = scalars.prefix(wanted).reduce(0) { $0 + $1.utf16.count }
        return Int(text.document.textStarts[Int(node.index)]) + units
    }
}
