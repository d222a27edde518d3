import QuireCore
import QuireXML

/// KOReader (crengine) XPointers: `/body/DocFragment[N]/body/div[2]/p[5]/text().K`.
/// DocFragment counts spine items from 1; element steps count same-name siblings from 1 (`[1]` may
/// be left out); `text()[k]` counts the element's non-blank text children; `.K` counts characters
/// (Unicode scalars, as crengine's UTF-32 strings do).
public enum XPointer {
    public static func make(spineIndex: Int, text: DocumentText, offset: Int) -> String {
        let tree = text.document.tree
        var path = "/body/DocFragment[\(spineIndex + 1)]"
        guard let body = text.document.body else { return path }
        guard var (node, local) = text.node(at: offset) else { return path + "/body" }
        // crengine drops blank text nodes. A position at the start of one is named by the element
        // just before it when that element holds no text (an image: resolving it lands right here),
        // else by the drawn text that ends here.
        if isDropped(node, tree), local == 0, let index = text.nodes.firstIndex(of: node) {
            let siblings = Array(tree.childIDs(of: tree.parent(of: node) ?? node))
            if let position = siblings.firstIndex(of: node), position > 0, let element = tree.element(siblings[position - 1]),
                element.textContent.isEmpty
            {
                return path + elementPath(from: body.id, to: element.id, tree: tree)
            }
            if index > 0, !isDropped(text.nodes[index - 1], tree) {
                node = text.nodes[index - 1]
                local = tree.text(of: node).utf16.count
            }
        }
        guard let parent = tree.parent(of: node) else { return path + "/body" }
        path += elementPath(from: body.id, to: parent, tree: tree)
        // crengine drops blank text nodes: a position in one is named by its element.
        if isDropped(node, tree) { return path }
        // Which non-blank text child, and the offset in scalars.
        var textIndex = 0
        for child in tree.childIDs(of: parent) where tree.kind(of: child) == .text {
            if !isDropped(child, tree) { textIndex += 1 }
            if child == node { break }
        }
        // Scalars that start within the first `local` UTF-16 units (half a pair counts as one).
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
            let siblings = tree.childIDs(of: parent).filter { tree.element($0)?.localName == name }
            let position = (siblings.firstIndex(of: current) ?? 0) + 1
            steps.append(siblings.count > 1 ? "/\(name)[\(position)]" : "/\(name)")
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
        guard parts.count >= 2, parts[0] == "body", parts[1].hasPrefix("DocFragment") else {
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
    public static func offset(of parsed: Parsed, in text: DocumentText) throws -> Int {
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
