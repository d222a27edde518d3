import QuireCore
import QuireXML

/// EPUB Canonical Fragment Identifiers: even steps name elements, odd steps the text chunks between
/// them, `[id]` assertions are checked, character offsets count UTF-16 units.
public enum CFI {
    public struct Step: Equatable, Sendable {
        public var index: Int
        public var assertion: String?

        public init(index: Int, assertion: String?) {
            self.index = index
            self.assertion = assertion
        }
    }

    /// A parsed CFI path: steps before the `!` indirection, steps after, and the terminal offset.
    public struct Path: Equatable, Sendable {
        public var packageSteps: [Step]
        public var contentSteps: [Step]
        public var offset: Int?
        public var sideBias: String?
        /// The text location assertion after the offset (`:12[before,after]`): the text just
        /// before and just after the point, either possibly empty.
        public var textAssertion: TextAssertion?
    }

    public struct TextAssertion: Equatable, Sendable {
        public var before: String
        public var after: String
    }

    // MARK: Generating

    /// The full CFI for a position: `epubcfi(/6/N[itemref-id]!/4[body-id]/…/k:offset)`.
    public static func make(spineStep: Int, spineIndex: Int, itemrefID: String?, text: DocumentText, offset: Int) -> String {
        let itemStep = "/\(spineStep)/\((spineIndex + 1) * 2)" + assertion(itemrefID)
        return "epubcfi(" + itemStep + "!" + contentPath(text: text, offset: offset) + ")"
    }

    /// The in-document part (`/4/2/1:12`) for a text offset.
    public static func contentPath(text: DocumentText, offset: Int) -> String {
        let tree = text.document.tree
        guard let root = tree.root else { return "" }
        guard let (node, local) = text.node(at: offset) else {
            // No text at all: point at the body element.
            return elementPath(to: text.document.body?.id ?? root.id, tree: tree)
        }
        let parent = tree.parent(of: node) ?? root.id
        // The elements before the text node: the place of the nearest element before it.
        var elementsBefore = 0
        var previous = tree.previousSibling(of: node)
        while let sibling = previous {
            if tree.kind(of: sibling) == .element {
                elementsBefore = tree.elementSiblingPlace(of: sibling)
                break
            }
            previous = tree.previousSibling(of: sibling)
        }
        return elementPath(to: parent, tree: tree) + "/\(elementsBefore * 2 + 1):\(local)"
    }

    static func elementPath(to node: NodeID, tree: XMLTree) -> String {
        var steps: [String] = []
        var current = node
        while let parent = tree.parent(of: current) {
            steps.append("/\(tree.elementSiblingPlace(of: current) * 2)" + assertion(tree.element(current)?.attribute("id")))
            current = parent
        }
        return steps.reversed().joined()
    }

    static func assertion(_ id: String?) -> String {
        guard let id, !id.isEmpty else { return "" }
        // The characters escaped are ASCII: scalars, not grapheme clusters, are enough to find them.
        func special(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "[", "]", "^", ",", "(", ")", ";": return true
            default: return false
            }
        }
        guard id.unicodeScalars.contains(where: special) else { return "[" + id + "]" }
        var escaped = String.UnicodeScalarView()
        for scalar in id.unicodeScalars {
            if special(scalar) { escaped.append("^") }
            escaped.append(scalar)
        }
        return "[" + String(escaped) + "]"
    }

    // MARK: Parsing

    /// Parses `epubcfi(...)` (or a bare path). Ranges `epubcfi(P,S,E)` resolve to their start.
    public static func parse(_ text: String) throws -> Path {
        var body = text.trimmingWhitespace()
        if body.hasPrefix("#") { body.removeFirst() }
        if body.hasPrefix("epubcfi(") && body.hasSuffix(")") {
            body = String(body.dropFirst(8).dropLast())
        }
        // Range: parent path, start, end.
        let parts = splitUnescaped(body, on: ",")
        if parts.count == 3 { body = parts[0] + parts[1] }
        let halves = splitUnescaped(body, on: "!")
        guard halves.count <= 2 else { throw QuireError.unresolvable("a CFI has at most one indirection (!)") }
        var packageSteps = try parseSteps(halves[0]).steps
        let content: Terminal
        if halves.count == 2 {
            content = try parseSteps(halves[1])
        } else {
            // A document-relative CFI (as in page-list hrefs `doc.xhtml#epubcfi(/4/2/3:10)`).
            content = try parseSteps(halves[0])
            packageSteps = []
        }
        return Path(
            packageSteps: packageSteps, contentSteps: content.steps, offset: content.offset, sideBias: content.side,
            textAssertion: content.assertion)
    }

    private static func splitUnescaped(_ text: String, on separator: Character) -> [String] {
        var parts: [String] = [""]
        var escaped = false
        var depth = 0
        for character in text {
            if escaped {
                parts[parts.count - 1].append(character)
                escaped = false
                continue
            }
            if character == "^" {
                escaped = true
                parts[parts.count - 1].append(character)
                continue
            }
            if character == "[" { depth += 1 }
            if character == "]" { depth -= 1 }
            if character == separator && depth == 0 {
                parts.append("")
            } else {
                parts[parts.count - 1].append(character)
            }
        }
        return parts
    }

    private struct Terminal {
        var steps: [Step] = []
        var offset: Int?
        var side: String?
        var assertion: TextAssertion?
    }

    private static func parseSteps(_ text: String) throws -> Terminal {
        var steps: [Step] = []
        var offset: Int?
        var side: String?
        var textAssertion: TextAssertion?
        let characters = Array(text)
        var index = 0
        func readNumber() -> Int? {
            var digits = ""
            while index < characters.count, characters[index].isASCII, characters[index].isNumber {
                digits.append(characters[index])
                index += 1
            }
            return Int(digits)
        }
        /// `[a,b;s=x]`: the values split at unescaped commas, and the parameters after `;`.
        func readBracketParts() throws -> (values: [String], parameters: String) {
            // characters[index] == "["
            index += 1
            var values = [""]
            var parameters: String?
            var escaped = false
            while index < characters.count {
                let character = characters[index]
                index += 1
                if escaped {
                    if parameters != nil { parameters!.append(character) } else { values[values.count - 1].append(character) }
                    escaped = false
                } else if character == "^" {
                    escaped = true
                } else if character == "]" {
                    return (values, parameters ?? "")
                } else if character == ";", parameters == nil {
                    parameters = ""
                } else if character == ",", parameters == nil {
                    values.append("")
                } else if parameters != nil {
                    parameters!.append(character)
                } else {
                    values[values.count - 1].append(character)
                }
            }
            throw QuireError.unresolvable("unclosed [ in CFI")
        }
        func readBracket() throws -> String { try readBracketParts().values.joined(separator: ",") }
        while index < characters.count {
            let character = characters[index]
            if character == "/" {
                index += 1
                guard let number = readNumber() else { throw QuireError.unresolvable("a CFI step needs a number") }
                var assertion: String?
                if index < characters.count && characters[index] == "[" {
                    // The parameters (`;s=…`) are apart already; splitting the unescaped value at ";"
                    // again cut an id holding an escaped `^;`.
                    assertion = try readBracket()
                }
                steps.append(Step(index: number, assertion: assertion))
            } else if character == ":" {
                index += 1
                guard let number = readNumber() else { throw QuireError.unresolvable("a CFI offset needs a number") }
                offset = number
                if index < characters.count && characters[index] == "[" {
                    let (values, parameters) = try readBracketParts()
                    if let range = parameters.firstRange(of: "s=") { side = String(parameters[range.upperBound...].prefix(1)) }
                    if values.count > 2 { throw QuireError.unresolvable("a CFI text assertion has at most two parts, [before,after]") }
                    if values != [""] { textAssertion = TextAssertion(before: values[0], after: values.count > 1 ? values[1] : "") }
                }
                guard index == characters.count else {
                    throw QuireError.unresolvable("a CFI's character offset (:\(number)) ends it; '\(String(characters[index...]))' follows")
                }
            } else if character == "~" {
                throw QuireError.unresolvable("a CFI temporal offset (~) names a time in audio or video, not a text position")
            } else if character == "@" {
                throw QuireError.unresolvable("a CFI spatial offset (@x:y) names a point in an image, not a text position")
            } else if character == "[" {
                _ = try readBracket()
            } else {
                throw QuireError.unresolvable("unexpected '\(character)' in CFI")
            }
        }
        return Terminal(steps: steps, offset: offset, side: side, assertion: textAssertion)
    }

    // MARK: Resolving

    /// The spine index named by the package part of a CFI, checking the itemref's id assertion.
    public static func spineIndex(of path: Path, spineStep: Int, itemrefIDs: [String?]) throws -> Int {
        guard path.packageSteps.count == 2 else {
            throw QuireError.unresolvable("the CFI does not go through the spine (/\(spineStep)/N!)")
        }
        guard path.packageSteps[0].index == spineStep else {
            throw QuireError.unresolvable("the CFI's first step /\(path.packageSteps[0].index) is not the spine (/\(spineStep))")
        }
        let step = path.packageSteps[1]
        guard step.index % 2 == 0, step.index >= 2, step.index / 2 - 1 < itemrefIDs.count else {
            throw QuireError.unresolvable("the CFI names spine item /\(step.index), which does not exist")
        }
        let index = step.index / 2 - 1
        if let assertion = step.assertion, !assertion.isEmpty, assertion != (itemrefIDs[index] ?? "") {
            throw QuireError.unresolvable("the CFI asserts itemref [\(assertion)] but spine item \(index + 1) is [\(itemrefIDs[index] ?? "")]")
        }
        return index
    }

    /// The text offset named by the in-document steps.
    public static func offset(of path: Path, in text: DocumentText) throws -> Int {
        let tree = text.document.tree
        guard let root = tree.root else { throw QuireError.unresolvable("the document is empty") }
        var current = root.id
        var steps = path.contentSteps[...]
        // The first step selects the document element's children (`/4` = body in XHTML).
        while let step = steps.first {
            steps = steps.dropFirst()
            let children = Array(tree.childIDs(of: current))
            if step.index % 2 == 0 {
                let elements = children.filter { tree.kind(of: $0) == .element }
                guard step.index >= 2, step.index / 2 - 1 < elements.count else {
                    throw QuireError.unresolvable("CFI step /\(step.index) goes past the children of <\(tree.element(current)?.localName ?? "?")>")
                }
                let element = elements[step.index / 2 - 1]
                if let assertion = step.assertion, !assertion.isEmpty, tree.element(element)?.attribute("id") != assertion {
                    throw QuireError.unresolvable("CFI id assertion [\(assertion)] does not match <\(tree.element(element)?.localName ?? "?")>")
                }
                current = element
            } else {
                // A text chunk: the text between element child k and k+1.
                let elementsBefore = (step.index - 1) / 2
                var seen = 0
                var chunkStart: Int?
                var chunkLength = 0
                for child in children {
                    if tree.kind(of: child) == .element {
                        if seen == elementsBefore { break }
                        seen += 1
                        continue
                    }
                    if seen == elementsBefore {
                        let start = text.document.textStarts[Int(child.index)]
                        guard start >= 0 else { continue }
                        if chunkStart == nil { chunkStart = Int(start) }
                        chunkLength += tree.text(of: child).utf16.count
                    }
                }
                guard seen == elementsBefore || elementsBefore == 0 else {
                    throw QuireError.unresolvable("CFI step /\(step.index) names a text chunk that does not exist")
                }
                let local = path.offset ?? 0
                guard steps.isEmpty else { throw QuireError.unresolvable("a CFI cannot step into text") }
                if let chunkStart {
                    guard local <= chunkLength else {
                        throw QuireError.unresolvable("CFI offset :\(local) is past the end of its text (\(chunkLength) characters)")
                    }
                    return try checked(chunkStart + local, path.textAssertion, in: text, offset: local)
                }
                // An empty chunk: the position between the elements (before the next one, or at the
                // end of the parent's text when the chunk is the last).
                let elements = children.filter { tree.kind(of: $0) == .element }
                if elementsBefore < elements.count { return text.document.textOffset(atElement: elements[elementsBefore]) }
                return text.document.textOffset(atElement: current) + (tree.element(current)?.textContentUTF16Length ?? 0)
            }
        }
        if let offset = path.offset {
            throw QuireError.unresolvable(
                "a CFI character offset (:\(offset)) must follow a text step (odd index); /\(path.contentSteps.last?.index ?? 0) is an element")
        }
        if path.textAssertion != nil { throw QuireError.unresolvable("a CFI text assertion needs a character offset") }
        return text.document.textOffset(atElement: current)
    }

    /// Checks a text location assertion at a resolved point. EPUB CFI (§3.5, "text location
    /// assertions") lets a reading system use it to correct a point whose text has moved: when the
    /// text there differs, the point moves to the nearest place where the asserted text is, and
    /// where the asserted text is nowhere in the document, the CFI is refused.
    static func checked(_ position: Int, _ assertion: TextAssertion?, in text: DocumentText, offset: Int) throws -> Int {
        guard let assertion else { return position }
        let before = Array(assertion.before.utf16)
        let after = Array(assertion.after.utf16)
        let units = text.units
        func matches(at point: Int) -> Bool {
            guard point - before.count >= 0, point + after.count <= units.count else { return false }
            return units[(point - before.count)..<point].elementsEqual(before) && units[point..<(point + after.count)].elementsEqual(after)
        }
        if matches(at: position) { return position }
        let needle = before + after
        var best: Int?
        if !needle.isEmpty, needle.count <= units.count {
            var start = 0
            while start + needle.count <= units.count {
                if units[start] == needle[0], units[start..<(start + needle.count)].elementsEqual(needle) {
                    let point = start + before.count
                    if best == nil || abs(point - position) < abs(best! - position) { best = point }
                }
                start += 1
            }
        }
        guard let best else {
            let actual = String.collapsingWhitespace(utf16: units[max(0, position - 12)..<min(units.count, position + 12)])
            throw QuireError.unresolvable(
                "the CFI's text assertion [\(assertion.before),\(assertion.after)] does not match the text at :\(offset) ('\(actual)') nor anywhere in the document")
        }
        return best
    }
}
