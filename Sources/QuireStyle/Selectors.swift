import QuireCore
import QuireXML

// Selectors Level 3 plus the commonly used Level 4 pieces, matched right to left.

enum NamespaceConstraint: Hashable, Sendable {
    case any
    case none  // `|E`: no namespace
    case uri(String)
}

struct AttributeSelector: Hashable, Sendable {
    enum Operator: Hashable, Sendable { case exists, equals, includes, dashMatch, prefix, suffix, substring }
    let name: String  // lowercased
    let namespace: NamespaceConstraint  // .none = no namespace (the default for attributes)
    let prefix: String?  // for HTML-parsed `epub:type` attributes that kept their prefix
    var op: Operator
    var value: String
    var caseInsensitive: Bool
    /// The names an attribute may carry as written, made once here: matching compared them for
    /// every attribute of every element tried (`epub:type` for `[epub|type]`, `…:type` for `[*|type]`).
    let prefixedName: String?
    let colonName: String

    init(name: String, namespace: NamespaceConstraint, prefix: String?, op: Operator, value: String, caseInsensitive: Bool) {
        self.name = name
        self.namespace = namespace
        self.prefix = prefix
        self.op = op
        self.value = value
        self.caseInsensitive = caseInsensitive
        prefixedName = prefix.map { SelectorMatcher.lowerASCII($0) + ":" + name }
        colonName = ":" + name
    }
}

enum PseudoElement: String, Hashable, Sendable {
    case before, after, marker, firstLetter = "first-letter", firstLine = "first-line"
    /// Valid pseudo-elements we never render (`::selection`, `::placeholder`…).
    case other
}

indirect enum PseudoClass: Hashable, Sendable {
    case nth(a: Int, b: Int, ofType: Bool, fromEnd: Bool, of: [ComplexSelector]?)
    case not([ComplexSelector])
    case isMatch([ComplexSelector])  // :is() and :where() (specificity differs, matching not)
    case root, empty, link
    case lang([String])
    case dir(String)
    case never
}

/// A compound selector while it is being parsed.
struct CompoundBuilder {
    var tag: String?
    var tagCased: String?
    var namespace: NamespaceConstraint = .any
    var ids: [String] = []
    var classes: [String] = []
    var attributes: [AttributeSelector] = []
    var pseudos: [PseudoClass] = []
}

/// Immutable and shared by reference, so matching reads fields without copying arrays.
final class CompoundSelector: Hashable, Sendable {
    let tag: String?  // lowercased
    let tagCased: String?  // as written, for XML (non-HTML) elements
    let namespace: NamespaceConstraint
    let ids: [String]
    let classes: [String]
    let attributes: [AttributeSelector]
    let pseudos: [PseudoClass]

    init(_ b: CompoundBuilder) {
        tag = b.tag
        tagCased = b.tagCased
        namespace = b.namespace
        ids = b.ids
        classes = b.classes
        attributes = b.attributes
        pseudos = b.pseudos
    }

    static func == (a: CompoundSelector, b: CompoundSelector) -> Bool {
        a === b
            || (a.tag == b.tag && a.tagCased == b.tagCased && a.namespace == b.namespace && a.ids == b.ids
                && a.classes == b.classes && a.attributes == b.attributes && a.pseudos == b.pseudos)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(tag)
        hasher.combine(ids)
        hasher.combine(classes)
        hasher.combine(attributes)
    }
}

enum Combinator: Hashable, Sendable { case descendant, child, nextSibling, subsequentSibling }

struct ComplexSelector: Hashable, Sendable {
    /// Rightmost first; `combinators[i]` joins `compounds[i]` to `compounds[i + 1]` (its left).
    var compounds: [CompoundSelector]
    var combinators: [Combinator]
    var specificity: Int
    var pseudoElement: PseudoElement?
}

struct SelectorParser {
    /// Longer selectors are refused (bounded matching on hostile sheets).
    static let maxCompounds = 256
    /// :not(:is(:not(…))) nesting.
    static let maxPseudoNesting = 16

    let namespaces: [String: String]
    let defaultNamespace: String?

    /// A selector list; nil if any selector in it is invalid (the whole rule drops, as CSS says).
    func parseList(_ values: [CV], nesting: Int = 0, forgiving: Bool = false) -> [ComplexSelector]? {
        var result: [ComplexSelector] = []
        for part in values.splitCommas() {
            if let selector = parseComplex(part, nesting: nesting) {
                result.append(selector)
            } else if !forgiving {
                return nil
            }
        }
        return result
    }

    private func parseComplex(_ values: [CV], nesting: Int) -> ComplexSelector? {
        var compounds: [CompoundSelector] = []
        var combinators: [Combinator] = []
        var pseudoElement: PseudoElement? = nil
        var current = CompoundBuilder()
        var currentEmpty = true
        var pendingCombinator: Combinator? = nil
        var sawWhitespace = false
        var i = 0
        var a = 0, b = 0, c = 0

        func finishCompound() -> Bool {
            if currentEmpty { return false }
            compounds.append(CompoundSelector(current))
            current = CompoundBuilder()
            currentEmpty = true
            return compounds.count <= SelectorParser.maxCompounds
        }

        while i < values.count {
            let v = values[i]
            if v.isWhitespace {
                sawWhitespace = true
                i += 1
                continue
            }
            var combinator: Combinator? = nil
            if case .token(.delim(let d)) = v {
                switch d {
                case ">": combinator = .child
                case "+": combinator = .nextSibling
                case "~": combinator = .subsequentSibling
                default: break
                }
            }
            if let combinator {
                if currentEmpty && compounds.isEmpty { return nil }  // leading combinator
                if !currentEmpty {
                    guard finishCompound() else { return nil }
                } else if pendingCombinator != nil {
                    return nil
                }
                pendingCombinator = combinator
                sawWhitespace = false
                i += 1
                continue
            }
            if sawWhitespace && !currentEmpty {
                guard finishCompound() else { return nil }
                pendingCombinator = .descendant
            }
            sawWhitespace = false
            if currentEmpty, let pending = pendingCombinator {
                if pseudoElement != nil { return nil }  // nothing may follow a pseudo-element
                combinators.append(pending)
                pendingCombinator = nil
            }
            if currentEmpty && pseudoElement != nil { return nil }
            // One simple selector.
            switch v {
            case .token(.ident), .token(.delim("*")), .token(.delim("|")):
                guard currentEmpty, let (ns, name, used) = parseTypeSelector(values, i) else { return nil }
                current.namespace = ns
                if let name {
                    current.tag = name.lowercased()
                    current.tagCased = name
                    c += 1
                }
                i += used
                currentEmpty = false
                continue
            case .token(.hash(let name, let isID)):
                guard isID, pseudoElement == nil else { return nil }
                current.ids.append(name)
                a += 1
            case .token(.delim(".")):
                guard i + 1 < values.count, let name = values[i + 1].ident, pseudoElement == nil else { return nil }
                current.classes.append(name)
                b += 1
                i += 1
            case .block("[", let contents):
                guard pseudoElement == nil, let attribute = parseAttribute(contents) else { return nil }
                current.attributes.append(attribute)
                b += 1
            case .token(.colon):
                i += 1
                guard i < values.count else { return nil }
                var isElement = false
                if case .token(.colon) = values[i] {
                    isElement = true
                    i += 1
                    guard i < values.count else { return nil }
                }
                let item = values[i]
                if let name = item.lowerIdent {
                    let legacy = ["before", "after", "first-letter", "first-line"]
                    if isElement || legacy.contains(name) {
                        guard pseudoElement == nil, let element = SelectorParser.pseudoElement(name) else { return nil }
                        pseudoElement = element
                        c += 1
                    } else {
                        guard pseudoElement == nil, let pseudos = SelectorParser.simplePseudoClass(name) else { return nil }
                        current.pseudos.append(contentsOf: pseudos)
                        b += 1
                    }
                } else if case .function(let fname, let args) = item, !isElement, pseudoElement == nil {
                    guard nesting < SelectorParser.maxPseudoNesting,
                        let (pseudo, spec) = parseFunctionalPseudo(fname.lowercased(), args, nesting: nesting)
                    else { return nil }
                    current.pseudos.append(pseudo)
                    a += spec >> 20
                    b += (spec >> 10) & 0x3FF
                    c += spec & 0x3FF
                } else {
                    return nil
                }
            default:
                return nil
            }
            currentEmpty = false
            i += 1
        }
        if pendingCombinator != nil && currentEmpty { return nil }
        if currentEmpty {
            if compounds.isEmpty { return nil }
        } else {
            guard finishCompound() else { return nil }
        }
        compounds.reverse()
        combinators.reverse()
        let specificity = (min(a, 1023) << 20) | (min(b, 1023) << 10) | min(c, 1023)
        return ComplexSelector(
            compounds: compounds, combinators: combinators, specificity: specificity, pseudoElement: pseudoElement)
    }

    /// `ns|name`, `*|*`, `|name`, `name`, `*`. Returns the namespace, name (nil = universal) and tokens used.
    private func parseTypeSelector(_ values: [CV], _ i: Int) -> (NamespaceConstraint, String?, Int)? {
        func nameAt(_ j: Int) -> (String?, Bool)? {
            guard j < values.count else { return nil }
            if let name = values[j].ident { return (name, true) }
            if case .token(.delim("*")) = values[j] { return (nil, true) }
            return nil
        }
        let isBar: (Int) -> Bool = { j in
            if j < values.count, case .token(.delim("|")) = values[j] { return true }
            return false
        }
        if isBar(i) {
            guard let (name, _) = nameAt(i + 1) else { return nil }
            return (.none, name, 2)
        }
        guard let (first, _) = nameAt(i) else { return nil }
        if isBar(i + 1), let (name, _) = nameAt(i + 2) {
            guard let prefix = first else { return (.any, name, 3) }
            guard let uri = namespaces[prefix] else { return nil }  // undeclared prefix: invalid
            return (.uri(uri), name, 3)
        }
        if let defaultNamespace { return (.uri(defaultNamespace), first, 1) }
        return (.any, first, 1)
    }

    private func parseAttribute(_ contents: [CV]) -> AttributeSelector? {
        let values = contents.significant
        var i = 0
        var namespace = NamespaceConstraint.none
        var prefix: String? = nil
        var name: String
        let bar: (Int) -> Bool = { j in
            if j < values.count, case .token(.delim("|")) = values[j] { return true }
            return false
        }
        if bar(0) {
            guard let n = values.count > 1 ? values[1].ident : nil else { return nil }
            name = n
            i = 2
        } else if values.count > 2, bar(1), let n = values[2].ident {
            if case .token(.delim("*")) = values[0] {
                namespace = .any
            } else if let p = values[0].ident {
                guard let uri = namespaces[p] else { return nil }
                namespace = .uri(uri)
                prefix = p
            } else {
                return nil
            }
            name = n
            i = 3
        } else if let n = values.first?.ident {
            name = n
            i = 1
        } else {
            return nil
        }
        var selector = AttributeSelector(
            name: name.lowercased(), namespace: namespace, prefix: prefix, op: .exists, value: "", caseInsensitive: false)
        guard i < values.count else { return selector }
        guard case .token(.delim(let d)) = values[i] else { return nil }
        if d == "=" {
            selector.op = .equals
            i += 1
        } else {
            switch d {
            case "~": selector.op = .includes
            case "|": selector.op = .dashMatch
            case "^": selector.op = .prefix
            case "$": selector.op = .suffix
            case "*": selector.op = .substring
            default: return nil
            }
            guard i + 1 < values.count, case .token(.delim("=")) = values[i + 1] else { return nil }
            i += 2
        }
        guard i < values.count else { return nil }
        switch values[i] {
        case .token(.string(let s)): selector.value = s
        case .token(.ident(let s)): selector.value = s
        default: return nil
        }
        i += 1
        if i < values.count {
            guard let flag = values[i].lowerIdent, flag == "i" || flag == "s", i + 1 == values.count else { return nil }
            selector.caseInsensitive = flag == "i"
        }
        if selector.caseInsensitive { selector.value = selector.value.lowercased() }
        return selector
    }

    static func pseudoElement(_ name: String) -> PseudoElement? {
        switch name {
        case "before": return .before
        case "after": return .after
        case "marker": return .marker
        case "first-letter": return .firstLetter
        case "first-line": return .firstLine
        case "selection", "placeholder", "backdrop", "file-selector-button", "cue", "spelling-error",
            "grammar-error", "target-text":
            return .other
        default: return nil
        }
    }

    static func simplePseudoClass(_ name: String) -> [PseudoClass]? {
        switch name {
        case "only-child":
            return [.nth(a: 0, b: 1, ofType: false, fromEnd: false, of: nil), .nth(a: 0, b: 1, ofType: false, fromEnd: true, of: nil)]
        case "only-of-type":
            return [.nth(a: 0, b: 1, ofType: true, fromEnd: false, of: nil), .nth(a: 0, b: 1, ofType: true, fromEnd: true, of: nil)]
        default: return singlePseudoClass(name).map { [$0] }
        }
    }

    private static func singlePseudoClass(_ name: String) -> PseudoClass? {
        switch name {
        case "first-child": return .nth(a: 0, b: 1, ofType: false, fromEnd: false, of: nil)
        case "last-child": return .nth(a: 0, b: 1, ofType: false, fromEnd: true, of: nil)
        case "first-of-type": return .nth(a: 0, b: 1, ofType: true, fromEnd: false, of: nil)
        case "last-of-type": return .nth(a: 0, b: 1, ofType: true, fromEnd: true, of: nil)
        case "root": return .root
        case "empty": return .empty
        case "link", "any-link": return .link
        case "visited", "hover", "active", "focus", "focus-within", "focus-visible", "target", "checked",
            "disabled", "enabled", "indeterminate", "default", "valid", "invalid", "required", "optional",
            "read-only", "read-write", "placeholder-shown", "in-range", "out-of-range", "fullscreen", "modal",
            "playing", "paused", "defined", "target-within", "user-invalid", "autofill", "scope", "local-link":
            return .never
        default: return nil
        }
    }

    /// Returns the pseudo-class and the specificity it adds (packed like a selector's).
    private func parseFunctionalPseudo(_ name: String, _ args: [CV], nesting: Int) -> (PseudoClass, Int)? {
        switch name {
        case "not", "is", "matches", "-webkit-any", "-moz-any", "where":
            let forgiving = name != "not"
            guard let list = parseList(args, nesting: nesting + 1, forgiving: forgiving),
                !list.contains(where: { $0.pseudoElement != nil })
            else { return nil }
            let spec = name == "where" ? 0 : (list.map(\.specificity).max() ?? 0)
            return (name == "not" ? .not(list) : .isMatch(list), spec)
        case "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type":
            var anb = args
            var of: [ComplexSelector]? = nil
            if name.hasSuffix("child"), let ofIndex = args.firstIndex(where: { $0.lowerIdent == "of" }) {
                anb = Array(args[..<ofIndex])
                guard let list = parseList(Array(args[(ofIndex + 1)...]), nesting: nesting + 1) else { return nil }
                of = list
            }
            guard let (a, b) = SelectorParser.parseAnB(anb) else { return nil }
            let spec = (1 << 10) + (of?.map(\.specificity).max() ?? 0)
            return (.nth(a: a, b: b, ofType: name.contains("of-type"), fromEnd: name.contains("last"), of: of), spec)
        case "lang":
            let ranges = args.splitCommas().compactMap { part -> String? in
                let s = part.significant
                guard s.count == 1 else { return nil }
                if let ident = s[0].ident { return ident.lowercased() }
                if case .token(.string(let str)) = s[0] { return str.lowercased() }
                return nil
            }
            guard !ranges.isEmpty else { return nil }
            return (.lang(ranges), 1 << 10)
        case "dir":
            guard let value = args.significant.first?.lowerIdent, value == "ltr" || value == "rtl" else { return nil }
            return (.dir(value), 1 << 10)
        case "has":
            return (.never, 1 << 10)  // valid, not supported: matches nothing
        case "host", "host-context", "state":
            return (.never, 1 << 10)
        default:
            return nil
        }
    }

    /// An+B microsyntax, from the tokens' text.
    static func parseAnB(_ values: [CV]) -> (Int, Int)? {
        var text = ""
        for v in values {
            switch v {
            case .token(.whitespace): continue
            case .token(.number(let n, let isInteger)):
                guard isInteger else { return nil }
                text += (n >= 0 && !text.isEmpty ? "+" : "") + String(Int(n))
            case .token(.dimension(let n, let unit)):
                guard n == n.rounded() else { return nil }
                text += (n >= 0 && !text.isEmpty ? "+" : "") + String(Int(n)) + unit
            case .token(.ident(let s)): text += s
            case .token(.delim(let d)) where d == "+" || d == "-": text += String(d)
            default: return nil
            }
        }
        text = text.lowercased()
        if text == "odd" { return (2, 1) }
        if text == "even" { return (2, 0) }
        var scalars = Substring(text)
        func takeSign() -> Int {
            if scalars.first == "+" {
                scalars.removeFirst()
                return 1
            }
            if scalars.first == "-" {
                scalars.removeFirst()
                return -1
            }
            return 1
        }
        func takeDigits() -> Int? {
            let digits = scalars.prefix { $0.isASCII && $0.isNumber }
            scalars = scalars.dropFirst(digits.count)
            return digits.isEmpty ? nil : Int(digits.prefix(9))
        }
        let sign = takeSign()
        let first = takeDigits()
        if scalars.first == "n" {
            scalars.removeFirst()
            let a = sign * (first ?? 1)
            if scalars.isEmpty { return (a, 0) }
            let bSign = takeSign()
            guard let b = takeDigits(), scalars.isEmpty else { return nil }
            return (a, bSign * b)
        }
        guard let b = first, scalars.isEmpty else { return nil }
        return (0, sign * b)
    }
}

/// Per-document element facts for fast matching, computed once per tree.
final class ElementTable {
    let tree: XMLTree
    // Immutable once built: reading a `let` array of a class needs no retain of its buffer, and
    // selector matching reads these for every candidate rule of every element.
    /// Indexed by node index; -1 where there is none.
    let parent: [Int32]
    let previousSibling: [Int32]
    let nextSibling: [Int32]
    let localName: [String]  // lowercased for XHTML elements
    let isHTML: [Bool]
    let namespace: [String]
    let id: [String?]
    let classes: [[String]]
    let language: [String?]
    /// Places among siblings for :nth-*, built on first use (walking the siblings for every
    /// element was quadratic in a long run of them).
    private let nthPlaces = LockedValue<NthPlaces?>(nil)

    struct NthPlaces {
        /// 1-based, among element siblings and among those of the same type, from the start and the end.
        var child: [Int32]
        var childFromEnd: [Int32]
        var type: [Int32]
        var typeFromEnd: [Int32]
    }

    /// The 1-based place of element `e` that :nth-child and its kin count.
    func nthPlace(_ e: Int, ofType: Bool, fromEnd: Bool) -> Int {
        let places = nthPlaces.withLock { places in
            if let places { return places }
            let built = buildNthPlaces()
            places = built
            return built
        }
        switch (ofType, fromEnd) {
        case (false, false): return Int(places.child[e])
        case (false, true): return Int(places.childFromEnd[e])
        case (true, false): return Int(places.type[e])
        case (true, true): return Int(places.typeFromEnd[e])
        }
    }

    private func buildNthPlaces() -> NthPlaces {
        let n = parent.count
        var places = NthPlaces(
            child: .init(repeating: 0, count: n), childFromEnd: .init(repeating: 0, count: n), type: .init(repeating: 0, count: n),
            typeFromEnd: .init(repeating: 0, count: n))
        // Each run of element siblings, from its first (no previous sibling) along the next-sibling
        // links: places among them, and among those of each type, counted as the run goes. The types
        // of one run are few, so they are looked up in a short list (no string hashing per element).
        // (Past 16 types, a hostile document's thousands of tag names, they are found by hash.)
        struct TypeKey: Hashable {
            var localName: String
            var namespace: String
        }
        var types: [(localName: String, namespace: String, count: Int32)] = []
        var typeIndex: [TypeKey: Int] = [:]
        var typeOf: [Int] = []
        for first in 0..<n where previousSibling[first] < 0 && tree.kind(of: NodeID(Int32(first))) == .element {
            types.removeAll(keepingCapacity: true)
            typeIndex.removeAll(keepingCapacity: true)
            typeOf.removeAll(keepingCapacity: true)
            var count: Int32 = 0
            var e = first
            while e >= 0 {
                count += 1
                places.child[e] = count
                let slot: Int
                if types.count <= 16, let found = types.firstIndex(where: { $0.localName == localName[e] && $0.namespace == namespace[e] }) {
                    slot = found
                } else if types.count > 16, let found = typeIndex[TypeKey(localName: localName[e], namespace: namespace[e])] {
                    slot = found
                } else {
                    types.append((localName[e], namespace[e], 0))
                    slot = types.count - 1
                    if types.count == 17 {
                        for (index, type) in types.enumerated() { typeIndex[TypeKey(localName: type.localName, namespace: type.namespace)] = index }
                    } else if types.count > 17 {
                        typeIndex[TypeKey(localName: localName[e], namespace: namespace[e])] = slot
                    }
                }
                types[slot].count += 1
                places.type[e] = types[slot].count
                typeOf.append(slot)
                e = Int(nextSibling[e])
            }
            e = first
            var position = 0
            while e >= 0 {
                places.childFromEnd[e] = count - places.child[e] + 1
                places.typeFromEnd[e] = types[typeOf[position]].count - places.type[e] + 1
                position += 1
                e = Int(nextSibling[e])
            }
        }
        return places
    }

    init(tree: XMLTree) {
        self.tree = tree
        let n = tree.nodeCount
        var parent = [Int32](repeating: -1, count: n)
        var previousSibling = [Int32](repeating: -1, count: n)
        var nextSibling = [Int32](repeating: -1, count: n)
        var localName = [String](repeating: "", count: n)
        var isHTML = [Bool](repeating: false, count: n)
        var namespace = [String](repeating: "", count: n)
        var id = [String?](repeating: nil, count: n)
        var classes = [[String]](repeating: [], count: n)
        var language = [String?](repeating: nil, count: n)
        var lastChild: [Int32: Int32] = [:]
        var lowerCache: [String: String] = [:]
        for index in 0..<n {
            let node = NodeID(Int32(index))
            guard let element = tree.element(node) else { continue }
            var p = tree.parent(of: node)
            while let candidate = p, tree.kind(of: candidate) != .element { p = tree.parent(of: candidate) }
            let parentIndex = p?.index ?? -1
            parent[index] = parentIndex
            if let previous = lastChild[parentIndex] {
                previousSibling[index] = previous
                nextSibling[Int(previous)] = Int32(index)
            }
            lastChild[parentIndex] = Int32(index)
            let name = element.name
            let html = name.namespace == Namespace.xhtml
            isHTML[index] = html
            namespace[index] = name.namespace
            if html {
                if let lowered = lowerCache[name.local] {
                    localName[index] = lowered
                } else {
                    let lowered = name.local.lowercased()
                    lowerCache[name.local] = lowered
                    localName[index] = lowered
                }
            } else {
                localName[index] = name.local
            }
            var lang: String? = parentIndex >= 0 ? language[Int(parentIndex)] : nil
            for attribute in element.attributes {
                let attrName = attribute.name
                if attrName.namespace.isEmpty {
                    switch attrName.local {
                    case "id": id[index] = attribute.value
                    case "class": classes[index] = attribute.value.whitespaceTokens()
                    case "lang": if attrName.namespace.isEmpty, element.attribute("lang", namespace: Namespace.xml) == nil { lang = attribute.value }
                    case "xml:lang": lang = attribute.value
                    default: break
                    }
                } else if attrName.namespace == Namespace.xml && attrName.local == "lang" {
                    lang = attribute.value
                } else if attrName.namespace == Namespace.xml && attrName.local == "id" && id[index] == nil {
                    id[index] = attribute.value
                }
            }
            language[index] = lang
        }
        self.parent = parent
        self.previousSibling = previousSibling
        self.nextSibling = nextSibling
        self.localName = localName
        self.isHTML = isHTML
        self.namespace = namespace
        self.id = id
        self.classes = classes
        self.language = language
    }
}

struct SelectorMatcher {
    let table: ElementTable

    func matches(_ selector: ComplexSelector, _ element: Int32) -> Bool {
        withUnsafePointer(to: selector) { matchFrom($0, 0, element) }
    }

    /// The selector in place (a rule index's candidates are tried by the thousand: passing each
    /// selector by value retained and released its arrays every time).
    func matches(_ selector: UnsafePointer<ComplexSelector>, _ element: Int32) -> Bool {
        matchFrom(selector, 0, element)
    }

    /// `matches` for an element known to match the rightmost compound: only the rest is tried.
    func matches(_ selector: UnsafePointer<ComplexSelector>, _ element: Int32, rightmostMatched: Bool) -> Bool {
        rightmostMatched ? matchRest(selector, 0, element) : matchFrom(selector, 0, element)
    }

    private func matchFrom(_ selector: UnsafePointer<ComplexSelector>, _ k: Int, _ element: Int32) -> Bool {
        // The compound is borrowed, not retained: `selector` keeps it alive for the whole call.
        let compound = selector.pointee.compounds.withUnsafeBufferPointer { Unmanaged.passUnretained($0[k]) }
        guard compound._withUnsafeGuaranteedRef({ matchesCompound($0, element) }) else { return false }
        return matchRest(selector, k, element)
    }

    /// The compounds left of `k`, through their combinators, from an element that matched compound `k`.
    private func matchRest(_ selector: UnsafePointer<ComplexSelector>, _ k: Int, _ element: Int32) -> Bool {
        if k + 1 == selector.pointee.compounds.count { return true }
        switch selector.pointee.combinators[k] {
        case .child:
            let p = table.parent[Int(element)]
            return p >= 0 && matchFrom(selector, k + 1, p)
        case .descendant:
            var p = table.parent[Int(element)]
            while p >= 0 {
                if matchFrom(selector, k + 1, p) { return true }
                p = table.parent[Int(p)]
            }
            return false
        case .nextSibling:
            let s = table.previousSibling[Int(element)]
            return s >= 0 && matchFrom(selector, k + 1, s)
        case .subsequentSibling:
            var s = table.previousSibling[Int(element)]
            while s >= 0 {
                if matchFrom(selector, k + 1, s) { return true }
                s = table.previousSibling[Int(s)]
            }
            return false
        }
    }

    func matchesCompound(_ compound: CompoundSelector, _ element: Int32) -> Bool {
        let e = Int(element)
        if let tag = compound.tag {
            if table.isHTML[e] {
                if table.localName[e] != tag { return false }
            } else if table.localName[e] != compound.tagCased {
                return false
            }
        }
        switch compound.namespace {
        case .any: break
        case .none: if !table.namespace[e].isEmpty { return false }
        case .uri(let uri): if table.namespace[e] != uri { return false }
        }
        for id in compound.ids where table.id[e] != id { return false }
        if !compound.classes.isEmpty {
            let classes = table.classes[e]
            for name in compound.classes where !classes.contains(name) { return false }
        }
        // In place: iterating copied each selector out, retaining its strings (and a pseudo-class's box).
        let attributesMatch = compound.attributes.withUnsafeBufferPointer { selectors in
            selectors.indices.allSatisfy { matchesAttribute(selectors.baseAddress! + $0, e) }
        }
        guard attributesMatch else { return false }
        return compound.pseudos.withUnsafeBufferPointer { pseudos in
            pseudos.indices.allSatisfy { matchesPseudo(pseudos[$0], element) }
        }
    }

    /// ASCII-lowercases only when needed (attribute names are almost always lowercase already).
    @inline(__always)
    static func lowerASCII(_ text: String) -> String {
        for byte in text.utf8 where byte >= 65 && byte <= 90 { return text.lowercased() }
        return text
    }

    private func matchesAttribute(_ selector: UnsafePointer<AttributeSelector>, _ e: Int) -> Bool {
        if selector.pointee.name == "class" && selector.pointee.namespace == .none && selector.pointee.op == .includes
            && !selector.pointee.caseInsensitive
        {
            return table.classes[e].contains(selector.pointee.value)
        }
        guard let element = table.tree.element(NodeID(Int32(e))) else { return false }
        let html = table.isHTML[e]
        // Read through the pointer: a copy of the selector retained its six strings.
        let target = selector.pointee.name
        return element.attributes.withUnsafeBufferPointer { attributes in
            for index in attributes.indices {
                let name = attributes.baseAddress! + index
                let local = html ? SelectorMatcher.lowerASCII(name.pointee.name.local) : name.pointee.name.local
                let nameMatches: Bool
                switch selector.pointee.namespace {
                case .any:
                    nameMatches = local == target || (local.utf8.count > target.utf8.count && local.hasSuffix(selector.pointee.colonName))
                case .none:
                    nameMatches = name.pointee.name.namespace.isEmpty && local == target
                case .uri(let uri):
                    if name.pointee.name.namespace == uri {
                        nameMatches = local == target
                    } else if name.pointee.name.namespace.isEmpty, let prefixed = selector.pointee.prefixedName {
                        nameMatches = local == prefixed  // HTML parser kept `epub:type`
                    } else {
                        nameMatches = false
                    }
                }
                if nameMatches && valueMatches(selector, name.pointee.value) { return true }
            }
            return false
        }
    }

    /// Whether whitespace-separated `list` contains `token`, without allocating.
    static func containsToken(_ list: String, _ token: String) -> Bool {
        var list = list
        var token = token
        return list.withUTF8 { l in
            token.withUTF8 { t in
                let n = t.count
                guard n > 0, l.count >= n else { return false }
                var i = 0
                while i + n <= l.count {
                    let atStart = i == 0 || l[i - 1] == 32 || l[i - 1] == 9 || l[i - 1] == 10 || l[i - 1] == 13
                    if atStart, memcmpEqual(l, i, t) {
                        let end = i + n
                        if end == l.count || l[end] == 32 || l[end] == 9 || l[end] == 10 || l[end] == 13 { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    @inline(__always)
    static func memcmpEqual(_ l: UnsafeBufferPointer<UInt8>, _ offset: Int, _ t: UnsafeBufferPointer<UInt8>) -> Bool {
        for k in 0..<t.count where l[offset + k] != t[k] { return false }
        return true
    }

    private func valueMatches(_ selector: UnsafePointer<AttributeSelector>, _ raw: String) -> Bool {
        let value = selector.pointee.caseInsensitive ? raw.lowercased() : raw
        let wanted = selector.pointee.value
        switch selector.pointee.op {
        case .exists: return true
        case .equals: return value == wanted
        case .includes:
            if wanted.isEmpty { return false }
            if value == wanted { return true }
            return SelectorMatcher.containsToken(value, wanted)
        case .dashMatch: return value == wanted || value.hasPrefix(wanted + "-")
        case .prefix: return !wanted.isEmpty && value.hasPrefix(wanted)
        case .suffix: return !wanted.isEmpty && value.hasSuffix(wanted)
        case .substring: return !wanted.isEmpty && value.contains(wanted)
        }
    }

    /// Whether one of the selectors matches, each tried in place (iterating copied each one out,
    /// retaining its compounds: `:not()` is in most of a book's rules).
    private func matchesAny(_ list: [ComplexSelector], _ element: Int32) -> Bool {
        list.withUnsafeBufferPointer { selectors in selectors.indices.contains { matches(selectors.baseAddress! + $0, element) } }
    }

    private func matchesPseudo(_ pseudo: PseudoClass, _ element: Int32) -> Bool {
        let e = Int(element)
        switch pseudo {
        case .never: return false
        case .root: return table.parent[e] < 0
        case .empty:
            for child in table.tree.childIDs(of: NodeID(element)) {
                if table.tree.kind(of: child) == .element || !table.tree.text(of: child).isEmpty { return false }
            }
            return true
        case .link:
            return table.isHTML[e] && (table.localName[e] == "a" || table.localName[e] == "area")
                && table.tree.element(NodeID(element))?.attribute("href") != nil
        case .lang(let ranges):
            // Only the content's own language counts: the package's dc:language does not flow
            // into content documents (EPUB RS: pkg-lang_but_not_content).
            guard let lang = table.language[e]?.lowercased() else { return false }
            return ranges.contains { range in range == "*" || lang == range || lang.hasPrefix(range + "-") }
        case .dir(let dir):
            var p = element
            while p >= 0 {
                if let value = table.tree.element(NodeID(p))?.attribute("dir")?.lowercased(), value == "ltr" || value == "rtl" {
                    return value == dir
                }
                p = table.parent[Int(p)]
            }
            return dir == "ltr"
        case .not(let list):
            return !matchesAny(list, element)
        case .isMatch(let list):
            return matchesAny(list, element)
        case .nth(0, 1, false, let fromEnd, nil):
            // :first-child and :last-child (a book's stylesheet has them, seldom any other :nth-*):
            // no element sibling before (after) it, without building every sibling's place.
            return (fromEnd ? table.nextSibling[e] : table.previousSibling[e]) < 0
        case .nth(let a, let b, let ofType, let fromEnd, let of):
            var position = 1
            var s = fromEnd ? table.nextSibling[e] : table.previousSibling[e]
            if let of, !of.contains(where: { matches($0, element) }) { return false }
            if of == nil {
                position = table.nthPlace(e, ofType: ofType, fromEnd: fromEnd)
                s = -1
            }
            while s >= 0 {
                if ofType {
                    if table.localName[Int(s)] == table.localName[e] && table.namespace[Int(s)] == table.namespace[e] {
                        position += 1
                    }
                } else if let of {
                    if of.contains(where: { matches($0, s) }) { position += 1 }
                } else {
                    position += 1
                }
                s = fromEnd ? table.nextSibling[Int(s)] : table.previousSibling[Int(s)]
            }
            if a == 0 { return position == b }
            let n = (position - b) / a
            return (position - b) % a == 0 && n >= 0
        }
    }
}
