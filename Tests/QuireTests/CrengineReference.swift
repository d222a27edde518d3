import Foundation

// MARK: - Design note
//
// An independent test-side model of how KOReader's crengine turns one EPUB XHTML file into DOM text
// nodes, and how it writes and reads XPointers. It was written from crengine's source
// (github.com/koreader/crengine, HEAD 05b2098f, 2026-08-21), not from Quire's code. Sources:
//
// Parser: crengine/src/lvxml.cpp
//   - `LVXMLParser::Parse` is ported as a character-level state machine (ps_bof / ps_lt / ps_attr / ps_text).
//     It covers comments, `<![CDATA[`, `<?pi?>` (becomes an element named "?pi"), `<!DOCTYPE>` and other bad
//     tags (skipped up to `>`). `ReadIdent` accepts only ASCII letters first, then [A-Za-z0-9-_.:]; a name
//     must end at ' ', '/', '>', '?', '=', CR or LF (not TAB). The ps_attr error path is ported too
//     (`SkipTillChar('<')` then `PeekNextCharFromBuffer(1)`, which also eats the next tag's first char).
//     Unquoted and quoted attribute values stop at '>'. Tag names are lowercased (LVHTMLParser's m_citags)
//     except inside <svg> (TXTFLG_CASE_SENSITIVE_TAGS_ATTRS). <style> and <script> content is raw text up
//     to `</style` / `</script`.
//   - `LVXMLParser::ReadText`: every `<` ends a text node (so do `]]>` for CDATA and `</style`/`</script`).
//     TEXT_SPLIT_SIZE 8192 is counted in raw source characters (after UTF-8 decoding and the BOM, before
//     entity decoding). The cut falls after the last ASCII space, or after a lone CR/LF (a CR+LF or LF+CR
//     pair is passed over), else at exactly 8192; the tail stays in the buffer. Trailing whitespace-only
//     text at EOF is dropped.
//   - `PreProcessXmlString` (the template pair) is ported literally. That covers CR/LF/TAB to space and
//     space runs collapsed to one outside PRE (no trim; TXTFLG_TRIM is never set for EPUB); a decoded
//     entity resets the space run (nsp = 0); PRE CR handling (CRLF -> LF, lone CR -> LF unless after LF);
//     numeric references (decimal, lowercase `x` hex, windows-1252 remap via `codeconvert`); named entities
//     from crengine's full `def_entity_table` (2124 names, terminated by ';' or ' ', the ' ' being eaten);
//     and error recovery (`&` plus a bad character drops both; an unknown name keeps "&" + its first letter).
//     The entity-name look-ahead may read past the chunk end into the split tail, as in crengine.
//   - `ExpandTabs`: PRE only, per text chunk, 8-column tab stops counted from the chunk start; after CR/LF
//     the column is 1 (crengine's quirk), so a tab right after a newline gives 7 spaces.
//     (The ports of `PreProcessXmlString` and `ExpandTabs` gave the same output as crengine's own C++
//     functions, compiled standalone, on 200,000 random inputs.)
//
// DOM writer: crengine/src/lvtinydom.cpp
//   - `ldomDocumentFragmentWriter` (`OnTagOpen`/`OnTagClose`/`OnText`): only the content of the first
//     <body> is kept. `</body>` closes it whatever is open; a missing `</body>` is closed at EOF (`OnStop`).
//   - `ldomDocumentWriter::OnTagOpen`/`OnTagClose`/`pop`: no HTML auto-closing. A close tag pops up to the
//     nearest open element of that name and is ignored if there is none. `OnText` keeps text only where
//     `_allowText` (fb2def.h XS_TAG1 / XS_TAG2 / XS_TAG1OBJ and the XS_TAG1D(..., false, ...) entries: table,
//     thead, tbody, tfoot, tr, colgroup, col, img, image, svg, object, embed, audio, source, input, meta,
//     link, html, head, ...). Unknown elements allow text. Inside <svg> text is allowed only in style, text,
//     tspan, textPath, title, desc and metadata, which are parsed as PRE.
//   - `ldomElementWriter` constructor + `onBodyEnter`: PRE (white-space >= pre-line) and `_isBlock`
//     (`isBlockNode`: display not inline and not none, so inline-block counts as block here) come from the
//     style closure. ::before/::after create pseudoElem children when the style is set (Before at 0, After
//     moved last in `onBodyExit`). `_stripLeadingNewlineChar` is set for <pre>/<textarea> and cleared by the
//     first child element.
//   - `ldomElementWriter::onText`: whitespace-only text (only ' ', CR, LF, TAB) is dropped only as the very
//     first child of a non-PRE block. A ::before *or* ::after pseudoElem counts as a child: both are created
//     when the style is set, before any text. Then one leading '\n' is dropped from the first text of
//     <pre>/<textarea> if it has no child yet. That happens after `ReadText` has expanded the tabs, so a tab
//     on the first line of `<pre>\n\t...` gives 7 spaces, not 8. Text nodes are never merged.
//   - `ldomNode::initNodeRendMethod`, run in `onBodyExit` for each element, children before parents:
//       * invisible (self or ancestor display:none): nothing removed;
//       * display:inline (BOX_INLINE_BLOCKS): if it has block children and inline or non-blank text children,
//         each block child is wrapped in inlineBox "EmbeddedBlock" and the one whitespace text just after and
//         the one just before are removed. With only blocks and blank text it becomes erm_block;
//       * otherwise `detectChildTypes`. Inline-only with floats: `cleanIfOnlyEmptyTextInline`. Mixed block +
//         inline: `removeStandaloneWhitespaceTextChildrenInMixedContent` (whitespace-only runs are kept only
//         between inline-ish siblings, at least one of them really inline), then the reverse autobox loop
//         with `autoboxChildren`. Its quirks are kept: all leading blank text of an inline run is dropped but
//         only ONE trailing blank text (the `lastNonEmpty>=endIndex` loop), and runs of floats and blank text
//         only keep the floats;
//       * floats are then wrapped in floatBox and inline-block elements in inlineBox (`WRAP_FLOATS`,
//         `BOX_INLINE_BLOCKS`). KOReader's non-legacy block-rendering modes give the same DOM, so "web" is
//         assumed.
//   - `ldomXPointer::toStringV2` + `getElementIndex`: classic spelling (DOM 20200223...20260811), `[k]` only
//     when the unboxed parent has >=2 same-name elements (>=2 text nodes for text()). autoBoxing, floatBox,
//     inlineBox and pseudoElem are transparent. Offsets count UTF-32 characters of the stored text.
//   - `ldomDocument::createXPointerV2` + `ParseXPathStep` + `getNodeByIndex`: both spellings (`[1]` is the
//     same as no index), `/N` node-index steps, `.N` on text (N <= length) and on elements (N <= raw child
//     count, boxing nodes included, as crengine).
//
// NOT modelled (rare, or needing CSS this model doesn't get):
//   - ::first-letter / ::first-line pseudoElems and cloneNode; MathML (mathBox, text adjustments); ruby
//     (rubyBox wrapping, inserted U+200B text nodes); display:run-in autoboxing; table fix-up
//     (`initTableRendMethods` tabularBox wrapping, `boxWrapChildren` trimming; display:table content is
//     treated as block). Text is still dropped inside table/tr/tbody/... by `_allowText`.
//   - ::before/::after are assumed display:inline (a display:block pseudo would count as a block child).
//   - `cleanIfOnlyEmptyTextInline` is skipped for every isPre style (crengine skips it only for >= pre, not
//     for pre-line).
//   - Text after a second <body> in the same file (crengine would open another DocFragment).
//   - DOM versions below 20210904 (no <pre> newline strip) and other old-DOM quirks; non-UTF-8 files;
//     crengine's own handling of invalid UTF-8 (here: U+FFFD) and of reads past EOF (here: plain EOF).
//   - Inside <svg> every element is taken as inline and invisible (<svg> is an image in ENHANCED mode); the
//     style closure is not asked about svg descendants.
//   - An <object> with children is taken as not an image (crengine also checks type="image/...").
//   - Ordinals count the start tags crengine reports (`OnTagOpen`, PIs excluded). A start tag crengine can't
//     read (a TAB right after the name, as in `<i\t>`, or a name that isn't ASCII) is dropped, as crengine
//     drops it, but it still takes an ordinal, to stay in step with an XML parser. Markup inside
//     <script>/<style> raw text, and tags lost in the ps_attr error path, can still put the ordinals out of step.
//   - Render-time removals are modelled as of crengine HEAD (after 878870df, 2026-08-12, which added
//     `removeStandaloneWhitespaceTextChildrenInMixedContent`). `Options.legacyMixedContentCleanup` gives
//     the earlier behaviour (autobox loop only). The two differ only when two or more whitespace-only text
//     nodes end an inline run before a block.
//   - "DOM text" counts text in display:none subtrees too (<style>/<script> in body, hidden spans), as
//     crengine's DOM keeps it. `Options.countInvisibleText = false` skips text under erm_invisible nodes.

/// How crengine's CSS sees one element (the caller computes it from the real cascade).
struct CrengineElementStyle {
    enum Display { case none, inline, block }  // inline: inline, inline-block, inline-table...; block: everything else visible
    var display: Display
    var isPre: Bool  // computed white-space is pre-line, pre, pre-wrap or break-spaces
    var isFloating: Bool  // float is not none
    var hasBefore: Bool  // a ::before pseudo-element with content (crengine inserts a pseudoElem child first)
    var hasAfter: Bool
    /// Optional refinement of `.inline`: display is inline-block / inline-table / inline-flex. crengine's
    /// writer then treats the element as a block for its own content (`isBlockNode`), and wraps it in an
    /// inlineBox that its parent sees as inline. Defaults to false, i.e. plain inline.
    var isInlineBlock: Bool = false
}

struct CrengineReferenceError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct CrengineDocument: Sendable {
    struct Options: Sendable {
        /// Count text under display:none (erm_invisible) nodes, as crengine's DOM keeps it.
        var countInvisibleText: Bool
        /// Model crengine before 878870df (2026-08-12): no `removeStandaloneWhitespaceTextChildrenInMixedContent`.
        var legacyMixedContentCleanup: Bool
        init(countInvisibleText: Bool = true, legacyMixedContentCleanup: Bool = false) {
            self.countInvisibleText = countInvisibleText
            self.legacyMixedContentCleanup = legacyMixedContentCleanup
        }
    }

    fileprivate let body: Node
    fileprivate let counted: [Node]  // text nodes with counted non-space characters, in document order
    /// Non-whitespace characters in the body's DOM text.
    let nonSpaceCount: Int

    /// `source`: the raw XHTML file bytes (UTF-8; strip a BOM). `style(ordinal, localName)`: the style of the
    /// element whose start tag is the `ordinal`-th element start tag in the file (0 = the root <html>),
    /// counting every element including those in <head>. Build crengine's DOM for the content of <body>.
    init(source: [UInt8], style: (Int, String) -> CrengineElementStyle) throws {
        try self.init(source: source, style: style, options: Options())
    }

    init(source: [UInt8], style: (Int, String) -> CrengineElementStyle, options: Options) throws {
        var bytes = source[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var chars = String(decoding: bytes, as: UTF8.self).unicodeScalars.map { $0.value }
        if chars.first == 0xFEFF { chars.removeFirst() }
        let built: Node? = withoutActuallyEscaping(style) { style in
            let builder = Builder(style: style, options: options)
            var parser = Parser(chars: chars, builder: builder)
            parser.parse()
            builder.finish()
            return builder.body
        }
        guard let body = built else { throw CrengineReferenceError("no <body> in the document") }
        self.body = body
        var counted: [Node] = []
        var running = 0
        CrengineDocument.index(body, invisible: false, options: options, running: &running, counted: &counted)
        self.counted = counted
        self.nonSpaceCount = running
    }

    /// Resolve a KOReader XPointer (classic `/body/DocFragment[3]/body/div/p[2]/text().5` or DOM>=20260812
    /// `/body[1]/DocFragment[3]/body[1]/div[1]/p[2]/text()[1].5`, or a pointer to an element). Returns the
    /// DocFragment number and the number of non-whitespace characters of the body's DOM text before the point.
    func resolve(_ xpointer: String) throws -> (fragment: Int, nonSpaceBefore: Int) {
        let s = Array(xpointer.unicodeScalars.map { $0.value })
        var pos = 0
        func next() throws -> Step {
            guard let step = CrengineDocument.parseStep(s, &pos) else {
                throw CrengineReferenceError("bad XPointer step at \(pos) in \(xpointer)")
            }
            return step
        }
        // Root > body > DocFragment[k] > body: the part of crengine's DOM built around this file.
        guard pos < s.count, case .element("body", let i0) = try next(), i0 == -1 || i0 == 1 else {
            throw CrengineReferenceError("XPointer must start with /body: \(xpointer)")
        }
        guard pos < s.count, case .element("DocFragment", let k) = try next(), k == -1 || k >= 1 else {
            throw CrengineReferenceError("no DocFragment step in \(xpointer)")
        }
        let fragment = k == -1 ? 1 : k
        if pos >= s.count { return (fragment, 0) }
        switch try next() {
        case .element("body", let i) where i == -1 || i == 1: break
        case .point(0) where pos >= s.count: return (fragment, 0)
        default: throw CrengineReferenceError("no inner body step in \(xpointer)")
        }
        var current = body
        while pos < s.count {
            let step = try next()
            switch step {
            case .point(let offset):
                guard pos >= s.count else { throw CrengineReferenceError("text after the offset in \(xpointer)") }
                if current.kind == .text {
                    guard offset <= current.text.count else {
                        throw CrengineReferenceError("offset \(offset) past the end of a \(current.text.count)-character text node")
                    }
                    let inNode = current.nsCount == 0 ? 0 : current.text[..<offset].reduce(0) { $0 + (CrengineDocument.isSpace($1) ? 0 : 1) }
                    return (fragment, current.nsBefore + inNode)
                }
                guard offset <= current.children.count else {
                    throw CrengineReferenceError("offset \(offset) past the \(current.children.count) children of <\(current.name)>")
                }
                return (fragment, offset < current.children.count ? current.children[offset].nsBefore : current.nsEnd)
            case .element(let name, let index):
                current = try CrengineDocument.child(of: current, index: index, what: "<\(name)>") { $0.kind == .element && $0.name == name }
            case .text(let index):
                current = try CrengineDocument.child(of: current, index: index, what: "text()") { $0.kind == .text }
            case .nodeIndex(let index):
                current = try CrengineDocument.child(of: current, index: index, what: "node") { _ in true }
            }
        }
        return (fragment, current.nsBefore)
    }

    /// The pointer crengine (classic toStringV2 spelling) writes for the point just before the
    /// (nonSpaceBefore+1)-th non-whitespace character of the body text, in DocFragment `fragment` of a book
    /// with `fragmentCount` DocFragments. nil past the last non-whitespace character.
    func xpointer(nonSpaceBefore: Int, fragment: Int, fragmentCount: Int) -> String? {
        guard nonSpaceBefore >= 0, nonSpaceBefore < nonSpaceCount else { return nil }
        // Binary search: the last counted text node starting at or before nonSpaceBefore.
        var lo = 0, hi = counted.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if counted[mid].nsBefore <= nonSpaceBefore { lo = mid } else { hi = mid - 1 }
        }
        let node = counted[lo]
        var wanted = nonSpaceBefore - node.nsBefore
        var offset = 0
        for (i, ch) in node.text.enumerated() where !CrengineDocument.isSpace(ch) {
            if wanted == 0 { offset = i; break }
            wanted -= 1
        }
        var path = ".\(offset)"
        var p = node
        while p !== body {
            let segment = p.kind == .text ? "text()" : p.name
            path = "/" + segment + (p.xCount > 1 ? "[\(p.xIndex)]" : "") + path
            guard let up = CrengineDocument.unboxedParent(p) else { break }
            p = up
        }
        return "/body/DocFragment" + (fragmentCount > 1 ? "[\(fragment)]" : "") + "/body" + path
    }

    /// The DOM under <body>, for diagnostics: one line per node, boxing nodes in parentheses.
    var debugDump: String {
        var out = ""
        func walk(_ n: Node, _ depth: Int) {
            let pad = String(repeating: "  ", count: depth)
            switch n.kind {
            case .text:
                let s = String(String.UnicodeScalarView(n.text.compactMap(Unicode.Scalar.init)))
                out += pad + "text[\(n.xIndex)/\(n.xCount)] \(s.debugDescription)\n"
            case .element:
                out += pad + "<\(n.name)>[\(n.xIndex)/\(n.xCount)] \(n.rend)\n"
            default:
                out += pad + "(\(n.kind))\n"
            }
            for c in n.children { walk(c, depth + 1) }
        }
        walk(body, 0)
        return out
    }
}

// MARK: - DOM nodes

extension CrengineDocument {
    fileprivate enum Rend { case invisible, inline, block, final }

    fileprivate final class Node: @unchecked Sendable {
        enum Kind { case element, text, autoBoxing, floatBox, inlineBox, pseudo }
        let kind: Kind
        let name: String
        var text: [UInt32]
        var children: [Node] = []
        weak var parent: Node?
        var style: CrengineElementStyle
        var rend: Rend
        // Filled in by `index`:
        var nsBefore = 0  // counted non-space characters before this node (document order)
        var nsEnd = 0  // ... before the end of this node
        var nsCount = 0  // text: its counted non-space characters
        var xIndex = 0  // 1-based index among same-name (or text) siblings of the unboxed parent
        var xCount = 0
        var flat: [Node] = []  // unboxed children (non-boxing nodes, boxing nodes looked through)

        init(_ kind: Kind, name: String = "", text: [UInt32] = [], style: CrengineElementStyle = CrengineDocument.plainInline, rend: Rend = .inline) {
            self.kind = kind
            self.name = name
            self.text = text
            self.style = style
            self.rend = rend
        }

        var isText: Bool { kind == .text }
        /// `isBoxingNode(orPseudoElem: true)`.
        var isBoxing: Bool { kind == .autoBoxing || kind == .floatBox || kind == .inlineBox || kind == .pseudo }
        var floating: Bool { !isText && style.isFloating }
        var isWhitespaceText: Bool { isText && text.allSatisfy(CrengineDocument.isSpace) }

        func append(_ child: Node) {
            child.parent = self
            children.append(child)
        }
        func remove(_ range: ClosedRange<Int>) {
            for c in children[range] { c.parent = nil }
            children.removeSubrange(range)
        }
        /// Insert a boxing element at `range.lowerBound` holding the children in `range`.
        @discardableResult
        func box(_ range: ClosedRange<Int>, kind: Kind, rend: Rend, style: CrengineElementStyle = CrengineDocument.plainInline) -> Node {
            let box = Node(kind, name: "\(kind)", style: style, rend: rend)
            let moved = Array(children[range])
            children.replaceSubrange(range, with: [box])
            box.parent = self
            for c in moved { box.append(c) }
            return box
        }
    }

    fileprivate static let plainInline = CrengineElementStyle(display: .inline, isPre: false, isFloating: false, hasBefore: false, hasAfter: false)

    fileprivate static func isSpace(_ c: UInt32) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    fileprivate static func unboxedParent(_ n: Node) -> Node? {
        var p = n.parent
        while let q = p, q.isBoxing { p = q.parent }
        return p
    }

    /// Document-order counts and V2 sibling indexes.
    fileprivate static func index(_ n: Node, invisible: Bool, options: Options, running: inout Int, counted: inout [Node]) {
        n.nsBefore = running
        if n.isText {
            n.nsCount = (invisible && !options.countInvisibleText) ? 0 : n.text.reduce(0) { $0 + (isSpace($1) ? 0 : 1) }
            running += n.nsCount
            if n.nsCount > 0 { counted.append(n) }
        } else {
            let hidden = invisible || n.rend == .invisible
            for c in n.children { index(c, invisible: hidden, options: options, running: &running, counted: &counted) }
            if !n.isBoxing {
                var flat: [Node] = []
                func collect(_ m: Node) {
                    for c in m.children {
                        if c.isBoxing { collect(c) } else { flat.append(c) }
                    }
                }
                collect(n)
                var seen: [String: Int] = [:]
                for c in flat {
                    let key = c.isText ? "\u{0}text" : c.name
                    seen[key, default: 0] += 1
                    c.xIndex = seen[key]!
                }
                for c in flat { c.xCount = seen[c.isText ? "\u{0}text" : c.name]! }
                n.flat = flat
            }
        }
        n.nsEnd = running
    }

    /// `getNodeByIndex`: the index-th matching unboxed child (index -1: the first).
    fileprivate static func child(of n: Node, index: Int, what: String, _ predicate: (Node) -> Bool) throws -> Node {
        var count = 0
        for c in n.flat where predicate(c) {
            count += 1
            if index == -1 || count == index { return c }
        }
        throw CrengineReferenceError("no \(what)\(index == -1 ? "" : "[\(index)]") under <\(n.name)>")
    }
}

// MARK: - XPointer steps (ParseXPathStep)

extension CrengineDocument {
    fileprivate enum Step { case element(String, Int), text(Int), nodeIndex(Int), point(Int) }

    fileprivate static func parseStep(_ s: [UInt32], _ path: inout Int) -> Step? {
        func at(_ i: Int) -> UInt32 { i < s.count ? s[i] : 0 }
        func digit(_ c: UInt32) -> Bool { c >= 0x30 && c <= 0x39 }
        let slash: UInt32 = 0x2F, dot: UInt32 = 0x2E, open: UInt32 = 0x5B, close: UInt32 = 0x5D
        var pos = path
        guard at(pos) != 0 else { return nil }
        var prefix = 0
        if at(pos) == slash { prefix = 1; pos += 1 } else if at(pos) == dot { prefix = 2; pos += 1 }
        let nstart = pos
        if digit(at(pos)) {
            pos += 1
            while digit(at(pos)) { pos += 1 }
            if at(pos) != 0 && at(pos) != slash && at(pos) != dot { return nil }
            let index = atoi(Array(s[nstart..<pos]))
            if index < (prefix == 2 ? 0 : 1) { return nil }
            path = pos
            return prefix == 2 ? .point(index) : .nodeIndex(index)
        }
        while at(pos) != 0 && at(pos) != open && at(pos) != slash && at(pos) != dot { pos += 1 }
        if pos == nstart { return nil }
        let name = String(String.UnicodeScalarView(s[nstart..<pos].compactMap(Unicode.Scalar.init)))
        var index = -1
        if at(pos) == open {
            pos += 1
            let istart = pos
            while at(pos) != 0 && at(pos) != close && at(pos) != slash && at(pos) != dot { pos += 1 }
            if at(pos) == 0 || pos == istart { return nil }
            index = atoi(Array(s[istart..<pos]))
            pos += 1
        }
        if at(pos) == 0 || at(pos) == slash || at(pos) == dot {
            path = pos
            return name == "text()" ? .text(index) : .element(name, index)
        }
        return nil
    }

    /// `lString32::atoi()`: spaces, "0x" hex, sign, digits; 0 when it fails.
    fileprivate static func atoi(_ s: [UInt32]) -> Int {
        var i = 0
        while i < s.count && (s[i] == 0x20 || s[i] == 0x09) { i += 1 }
        if i + 1 < s.count && s[i] == 0x30 && s[i + 1] == 0x78 {
            var n = 0
            for c in s[(i + 2)...] where hexDigit(c) >= 0 { n = (n << 4) | hexDigit(c) }
            return n
        }
        var sign = 1
        if i < s.count && s[i] == 0x2D { sign = -1; i += 1 } else if i < s.count && s[i] == 0x2B { i += 1 }
        guard i < s.count, s[i] >= 0x30 && s[i] <= 0x39 else { return 0 }
        var n = 0
        while i < s.count && s[i] >= 0x30 && s[i] <= 0x39 {
            if n > Int(Int32.max) / 10 { return 0 }
            n = n * 10 + Int(s[i] - 0x30)
            i += 1
        }
        return n * sign
    }

    fileprivate static func hexDigit(_ c: UInt32) -> Int {
        if c >= 0x30 && c <= 0x39 { return Int(c - 0x30) }
        if c >= 0x61 && c <= 0x66 { return Int(c - 0x61 + 10) }
        if c >= 0x41 && c <= 0x46 { return Int(c - 0x41 + 10) }
        return -1
    }
}

// MARK: - DOM writer (ldomDocumentFragmentWriter + ldomDocumentWriter + ldomElementWriter + initNodeRendMethod)

extension CrengineDocument {
    /// fb2def.h elements whose `allow_text` is false (XS_TAG1, XS_TAG2, XS_TAG1OBJ, XS_TAG1D(..., false, ...)).
    fileprivate static let noText: Set<String> = [
        "cloneNode", "pseudoElem", "base", "basefont", "bgsound", "meta", "link", "table", "colgroup", "col",
        "thead", "tbody", "tfoot", "tr", "description",
        "DocFragment", "html", "head", "applet", "area", "track", "input", "keygen", "param", "audio", "source",
        "FictionBook", "annotation", "author", "coverpage", "epigraph", "part", "poem", "stanza",
        "?xml", "?xml-stylesheet", "document-info", "empty-line", "publish-info", "src-title-info", "title-info",
        "svg", "object", "embed", "img", "image",
    ]
    /// fb2def.h elements with white-space: pre by default (the initial `_flags`, replaced by the style).
    fileprivate static let preByDefault: Set<String> = ["pre", "style", "listing", "textarea", "plaintext", "xmp"]
    /// Inside <svg>, the elements that keep text (`ldomElementWriter` constructor).
    fileprivate static let svgText: Set<String> = ["style", "text", "tspan", "textPath", "title", "desc", "metadata"]

    fileprivate final class ElementWriter {
        let node: Node
        let ordinal: Int
        let isPI: Bool
        var pre: Bool
        let caseSensitive: Bool
        var isBlock: Bool
        let allowText: Bool
        var stripLeadingNewline: Bool
        let insideSVG: Bool
        var entered = false
        var after: Node?

        init(name: String, ordinal: Int, isPI: Bool, parent: ElementWriter?) {
            node = Node(.element, name: name)
            self.ordinal = ordinal
            self.isPI = isPI
            pre = CrengineDocument.preByDefault.contains(name) || (parent?.pre ?? false)
            isBlock = false
            stripLeadingNewline = name == "pre" || name == "textarea"
            insideSVG = (parent?.insideSVG ?? false) || name == "svg"
            caseSensitive = insideSVG
            var allow = !CrengineDocument.noText.contains(name)
            if insideSVG {
                allow = CrengineDocument.svgText.contains(name)
                if allow { pre = true }
            }
            allowText = allow
            if let parent {
                parent.node.append(node)
                parent.stripLeadingNewline = false
            }
        }
    }

    fileprivate final class Builder {
        let style: (Int, String) -> CrengineElementStyle
        let options: Options
        var stack: [ElementWriter] = []
        var inside = false
        var bodyMet = false
        var ordinal = -1
        var body: Node?

        init(style: @escaping (Int, String) -> CrengineElementStyle, options: Options) {
            self.style = style
            self.options = options
        }

        /// The flags the parser gets from `getFlags()`: the current element's.
        var pre: Bool { inside ? (stack.last?.pre ?? false) : false }
        var caseSensitive: Bool { inside ? (stack.last?.caseSensitive ?? false) : false }

        func tagOpen(_ name: String, isPI: Bool) {
            if !isPI { ordinal += 1 }
            if inside {
                stack.append(ElementWriter(name: name, ordinal: ordinal, isPI: isPI, parent: stack.last))
            } else if !bodyMet && name == "body" {
                inside = true
                bodyMet = true
                let w = ElementWriter(name: name, ordinal: ordinal, isPI: false, parent: nil)
                body = w.node
                stack.append(w)
            }
        }

        func tagBody() {
            guard inside, let w = stack.last, !w.entered else { return }
            enter(w)
        }

        func tagClose(_ name: String) {
            guard inside else { return }
            if name == "body" {
                finish()
                return
            }
            guard let i = stack.lastIndex(where: { $0.node.name == name }) else { return }
            while stack.count > i { exit(stack.removeLast()) }
        }

        func text(_ t: [UInt32]) {
            guard inside, let w = stack.last, w.allowText else { return }
            var t = t[...]
            if w.isBlock && w.node.children.isEmpty && t.allSatisfy(CrengineDocument.isSpace) && !w.pre { return }
            if w.stripLeadingNewline {
                if t.first == 0x0A && w.node.children.isEmpty { t = t.dropFirst() }
                w.stripLeadingNewline = false
            }
            w.node.append(Node(.text, text: Array(t)))
        }

        func finish() {
            guard inside else { return }
            while let w = stack.popLast() { exit(w) }
            inside = false
        }

        // ldomElementWriter::onBodyEnter
        func enter(_ w: ElementWriter) {
            w.entered = true
            let st: CrengineElementStyle
            if w.insideSVG && w.node.name != "svg" {
                st = CrengineDocument.plainInline
            } else if w.isPI {
                let block = w.node.name == "?xml" || w.node.name == "?xml-stylesheet"  // XS_TAG2: display block
                st = CrengineElementStyle(display: block ? .block : .inline, isPre: false, isFloating: false, hasBefore: false, hasAfter: false)
            } else {
                st = style(w.ordinal, w.node.name)
            }
            w.node.style = st
            if st.hasBefore {
                let p = Node(.pseudo, name: "pseudoElem")
                p.parent = w.node
                w.node.children.insert(p, at: 0)
            }
            if st.hasAfter {
                let p = Node(.pseudo, name: "pseudoElem")
                w.node.append(p)
                w.after = p
            }
            w.isBlock = st.display == .block || (st.display == .inline && st.isInlineBlock)
            w.pre = st.isPre || (w.insideSVG && w.allowText)
        }

        // ldomElementWriter::onBodyExit
        func exit(_ w: ElementWriter) {
            if !w.entered { enter(w) }
            if let after = w.after, let i = w.node.children.firstIndex(where: { $0 === after }), i != w.node.children.count - 1 {
                w.node.children.remove(at: i)
                w.node.children.append(after)
            }
            initNodeRendMethod(w.node)
        }

        // MARK: initNodeRendMethod and helpers

        static func isInline(_ n: Node) -> Bool { n.isText || n.rend == .inline }
        static func isFloating(_ n: Node) -> Bool { n.floating }
        /// `isNotBoxWrappingNode`: not an active floatBox (PREPARE_FLOATBOXES) nor a boxing inlineBox.
        static func isNotBoxWrapping(_ n: Node) -> Bool { !n.floating && n.kind != .inlineBox }

        static func isImage(_ n: Node) -> Bool {
            guard n.kind == .element else { return false }
            switch n.name {
            case "img", "image", "embed", "svg": return true
            case "object": return n.children.isEmpty
            default: return false
            }
        }

        static func invisible(_ n: Node) -> Bool {
            var p: Node? = n
            while let q = p {
                if q.kind == .element && q.style.display == .none { return true }
                p = q.parent
            }
            return false
        }

        static func setDescendants(_ n: Node, _ rend: Rend) {
            for c in n.children where !c.isText {
                c.rend = rend
                setDescendants(c, rend)
            }
        }

        static func detectChildTypes(_ n: Node) -> (block: Bool, inline: Bool, floating: Bool) {
            var block = false, inline = false, floating = false
            for c in n.children {
                if c.isText {
                    inline = true
                } else if c.floating {
                    floating = true
                } else if (c.kind == .element && c.style.display == .none) || c.rend == .invisible {
                    continue
                } else if c.rend == .inline {
                    inline = true
                } else {
                    block = true
                }
            }
            return (block, inline, floating)
        }

        func initNodeRendMethod(_ node: Node) {
            if Builder.isImage(node) {
                Builder.setDescendants(node, .invisible)  // (svg: reset to inline first, then invisible)
            }
            if Builder.invisible(node) {
                node.rend = .invisible
            } else if node.style.display == .inline && !node.style.isInlineBlock {
                inlineBranch(node)
            } else {
                blockBranch(node)
            }
            // Floats are wrapped in a floatBox, inline-block in an inlineBox (float wins).
            if let parent = node.parent, let i = parent.children.firstIndex(where: { $0 === node }) {
                if node.style.isFloating {
                    var st = CrengineDocument.plainInline
                    st.display = .block
                    st.isFloating = true
                    parent.box(i...i, kind: .floatBox, rend: .block, style: st)
                } else if node.style.display == .inline && node.style.isInlineBlock {
                    parent.box(i...i, kind: .inlineBox, rend: .inline)
                }
            }
        }

        func inlineBranch(_ node: Node) {
            node.rend = .inline
            if node.style.isFloating { return }  // already a box-wrapping node
            var hasBlock = false, hasInline = false
            for c in node.children where !c.isText {
                if c.rend == .inline { hasInline = true; continue }
                if c.rend == .invisible { continue }
                if !Builder.isNotBoxWrapping(c) { continue }
                hasBlock = true
                if hasInline { break }
            }
            guard hasBlock else { return }
            if !hasInline && !node.children.contains(where: { $0.isText && !$0.isWhitespaceText }) {
                node.rend = .block
                return
            }
            var i = node.children.count - 1
            while i >= 0 {
                let c = node.children[i]
                if !c.isText && c.rend != .inline && c.rend != .invisible && Builder.isNotBoxWrapping(c) {
                    if i < node.children.count - 1 && node.children[i + 1].isWhitespaceText { node.remove((i + 1)...(i + 1)) }
                    if i > 0 && node.children[i - 1].isWhitespaceText {
                        node.remove((i - 1)...(i - 1))
                        i -= 1
                    }
                    node.box(i...i, kind: .inlineBox, rend: .inline)  // T="EmbeddedBlock"
                }
                i -= 1
            }
        }

        func blockBranch(_ node: Node) {
            var t = Builder.detectChildTypes(node)
            if Builder.isImage(node) {
                node.rend = .final
            } else if t.block && !t.inline {
                node.rend = .block
            } else if !t.block && t.inline {
                node.rend = t.floating && cleanIfOnlyEmptyTextInline(node) ? .block : .final
            } else if !t.block && !t.inline {
                node.rend = .block
            } else if node.parent?.kind == .autoBoxing {
                node.rend = .final
            } else {
                if !options.legacyMixedContentCleanup && removeStandaloneWhitespace(node) {
                    t = Builder.detectChildTypes(node)
                    if !t.inline {
                        node.rend = .block
                        return
                    }
                }
                var i = node.children.count - 1
                while i >= 0 {
                    let n = node.children[i]
                    if Builder.isInline(n) || Builder.isFloating(n) {
                        var j = i - 1
                        while j >= 0 {
                            let m = node.children[j]
                            if !Builder.isInline(m) && !Builder.isFloating(m) { break }
                            j -= 1
                        }
                        j += 1
                        if j > 0 || i < node.children.count - 1 { autoboxChildren(node, j, i) }
                        i = j
                    }
                    // (display: run-in autoboxing is not modelled)
                    i -= 1
                }
                t = Builder.detectChildTypes(node)
                node.rend = t.inline ? .final : .block
            }
        }

        func cleanIfOnlyEmptyTextInline(_ node: Node) -> Bool {
            if node.style.isPre { return false }
            for c in node.children {
                if c.isText {
                    if !c.isWhitespaceText { return false }
                } else if !c.floating {
                    return false
                }
            }
            for i in stride(from: node.children.count - 1, through: 0, by: -1) where node.children[i].isText {
                node.remove(i...i)
            }
            return true
        }

        func removeStandaloneWhitespace(_ node: Node) -> Bool {
            let kids = node.children
            var kept: [Node] = []
            var removed = false
            var i = 0
            while i < kids.count {
                if kids[i].isWhitespaceText {
                    var j = i
                    while j + 1 < kids.count && kids[j + 1].isWhitespaceText { j += 1 }
                    let prev = i > 0 ? kids[i - 1] : nil
                    let next = j + 1 < kids.count ? kids[j + 1] : nil
                    let prevInlineish = prev.map { Builder.isInline($0) || Builder.isFloating($0) } ?? false
                    let nextInlineish = next.map { Builder.isInline($0) || Builder.isFloating($0) } ?? false
                    let keep = prevInlineish && nextInlineish && (Builder.isInline(prev!) || Builder.isInline(next!))
                    if keep {
                        kept.append(contentsOf: kids[i...j])
                    } else {
                        removed = true
                        for k in i...j { kids[k].parent = nil }
                    }
                    i = j + 1
                    continue
                }
                kept.append(kids[i])
                i += 1
            }
            if removed { node.children = kept }
            return removed
        }

        func autoboxChildren(_ node: Node, _ start: Int, _ end: Int) {
            let pre = node.style.isPre
            var firstNonEmpty = start
            var lastNonEmpty = end
            var hasInline = pre
            var hasNonEmptyInline = pre
            var hasFloating = false
            if !pre {
                while firstNonEmpty <= end && node.children[firstNonEmpty].isText {
                    if !node.children[firstNonEmpty].isWhitespaceText { break }
                    firstNonEmpty += 1
                }
                // crengine's loop condition is `lastNonEmpty>=endIndex`: at most one trailing blank is trimmed.
                while lastNonEmpty >= end && node.children[lastNonEmpty].isText {
                    if !node.children[lastNonEmpty].isWhitespaceText { break }
                    lastNonEmpty -= 1
                }
                if firstNonEmpty <= lastNonEmpty {
                    for i in firstNonEmpty...lastNonEmpty {
                        let n = node.children[i]
                        if Builder.isInline(n) {
                            hasInline = true
                            if !hasNonEmptyInline {
                                if n.isText {
                                    if !n.isWhitespaceText { hasNonEmptyInline = true }
                                } else if !Builder.isFloating(n) {
                                    hasNonEmptyInline = true
                                }
                            }
                        }
                        if Builder.isFloating(n) { hasFloating = true }
                        if hasNonEmptyInline && hasFloating { break }
                    }
                }
            }
            if hasFloating && !hasNonEmptyInline {
                for i in stride(from: end, through: start, by: -1) where !Builder.isFloating(node.children[i]) {
                    node.remove(i...i)
                }
            } else if hasInline {
                if lastNonEmpty + 1 <= end { node.remove((lastNonEmpty + 1)...end) }
                node.box(firstNonEmpty...lastNonEmpty, kind: .autoBoxing, rend: .final)
                if start <= firstNonEmpty - 1 { node.remove(start...(firstNonEmpty - 1)) }
            } else if hasFloating {
                if lastNonEmpty + 1 <= end { node.remove((lastNonEmpty + 1)...end) }
                if start <= firstNonEmpty - 1 { node.remove(start...(firstNonEmpty - 1)) }
            } else {
                node.remove(start...end)
            }
        }
    }
}

// MARK: - Parser (LVXMLParser::Parse, ReadText, PreProcessXmlString, ExpandTabs)

extension CrengineDocument {
    fileprivate struct Parser {
        let c: [UInt32]
        let builder: Builder
        var pos = 0
        var eof = false
        var inCdata = false
        var inStyle = false
        var inScript = false

        init(chars: [UInt32], builder: Builder) {
            c = chars
            self.builder = builder
        }

        static let TEXT_SPLIT_SIZE = 8192
        static let SP: UInt32 = 0x20, TAB: UInt32 = 0x09, LF: UInt32 = 0x0A, CR: UInt32 = 0x0D
        static let LT: UInt32 = 0x3C, GT: UInt32 = 0x3E, AMP: UInt32 = 0x26, SLASH: UInt32 = 0x2F

        func peek(_ offset: Int = 0) -> UInt32 { pos + offset < c.count ? c[pos + offset] : 0 }
        static func isSpaceChar(_ ch: UInt32) -> Bool { ch == SP || ch == TAB || ch == CR || ch == LF }

        mutating func skipSpaces() -> Bool {
            while pos < c.count && Parser.isSpaceChar(c[pos]) { pos += 1 }
            if pos >= c.count { eof = true }
            return !eof
        }

        mutating func skipTillChar(_ ch: UInt32) -> Bool {
            while pos < c.count && c[pos] != ch { pos += 1 }
            if pos >= c.count { eof = true; return false }
            return true
        }

        static func isValidIdentChar(_ ch: UInt32) -> Bool {
            (ch >= 0x61 && ch <= 0x7A) || (ch >= 0x41 && ch <= 0x5A) || (ch >= 0x30 && ch <= 0x39)
                || ch == 0x2D || ch == 0x5F || ch == 0x2E || ch == 0x3A
        }
        static func isValidFirstIdentChar(_ ch: UInt32) -> Bool { (ch >= 0x61 && ch <= 0x7A) || (ch >= 0x41 && ch <= 0x5A) }
        static func isXMLNameStart(_ ch: UInt32) -> Bool { isValidFirstIdentChar(ch) || ch == 0x5F || ch == 0x3A || ch >= 0xC0 }

        /// `LVXMLParser::ReadIdent`: (namespace prefix, local name).
        mutating func readIdent() -> (ns: [UInt32], name: [UInt32])? {
            var ns: [UInt32] = [], name: [UInt32] = []
            guard pos < c.count, Parser.isValidFirstIdentChar(c[pos]) else { return nil }
            name.append(c[pos])
            pos += 1
            while pos < c.count {
                let ch = c[pos]
                if !Parser.isValidIdentChar(ch) { break }
                if ch == 0x3A {
                    if ns.isEmpty { swap(&name, &ns) } else { break }
                } else {
                    name.append(ch)
                }
                pos += 1
            }
            let ch = peek()
            let ok = !name.isEmpty && (ch == Parser.SP || ch == Parser.SLASH || ch == Parser.GT || ch == 0x3F || ch == 0x3D || ch == 0 || ch == Parser.CR || ch == Parser.LF)
            return ok ? (ns, name) : nil
        }

        static func string(_ s: [UInt32]) -> String { String(String.UnicodeScalarView(s.compactMap(Unicode.Scalar.init))) }
        static func lowerASCII(_ s: [UInt32]) -> [UInt32] { s.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 } }

        mutating func parse() {
            enum State { case bof, lt, attr, text }
            var state = State.bof
            var tagName: [UInt32] = []
            while !eof {
                if pos >= c.count { eof = true; break }
                let ch = c[pos]
                switch state {
                case .bof:
                    while pos < c.count && c[pos] != Parser.LT { pos += 1 }
                    if pos < c.count {
                        state = .lt
                        pos += 1
                    } else {
                        eof = true
                    }
                case .lt:
                    guard skipSpaces() else { break }
                    var closeFlag = false, qFlag = false
                    if ch == Parser.SLASH {
                        pos += 1
                        closeFlag = true
                    } else if ch == 0x3F {
                        pos += 1
                        qFlag = true
                    } else if ch == 0x21 {  // '!'
                        if peek(1) == 0x2D && peek(2) == 0x2D {  // comment
                            pos += 3
                            while pos < c.count && !(c[pos] == 0x2D && peek(1) == 0x2D && peek(2) == Parser.GT) { pos += 1 }
                            if pos < c.count { pos += 3 }
                            state = .text
                            continue
                        }
                        let cdata: [UInt32] = [0x5B, 0x43, 0x44, 0x41, 0x54, 0x41, 0x5B]  // "[CDATA["
                        if (1...7).allSatisfy({ peek($0) == cdata[$0 - 1] }) {
                            pos += 8
                            state = .text
                            inCdata = true
                            continue
                        }
                    }
                    let nameStart = peek()
                    guard let ident = readIdent(), peek() != 0x3D else {
                        // crengine drops the tag; an XML parser sees an element, so keep the ordinals aligned.
                        if !closeFlag && !qFlag && ch != 0x21 && Parser.isXMLNameStart(nameStart) { builder.ordinal += 1 }
                        if skipTillChar(Parser.GT) {
                            state = .text
                            pos += 1
                        }
                        continue
                    }
                    tagName = ident.name
                    if !builder.caseSensitive { tagName = Parser.lowerASCII(tagName) }
                    if closeFlag {
                        builder.tagClose(Parser.string(tagName))
                        if skipTillChar(Parser.GT) {
                            state = .text
                            pos += 1
                        }
                        continue
                    }
                    if qFlag { tagName.insert(0x3F, at: 0) }
                    builder.tagOpen(Parser.string(tagName), isPI: qFlag)
                    let lower = Parser.string(Parser.lowerASCII(tagName))
                    if lower == "style" { inStyle = true } else if lower == "script" { inScript = true }
                    state = .attr
                case .attr:
                    guard skipSpaces() else { break }
                    let ch = peek(), nch = peek(1)
                    if ch == Parser.GT || (nch == Parser.GT && (ch == Parser.SLASH || ch == 0x3F)) {
                        builder.tagBody()
                        if ch != Parser.GT {
                            builder.tagClose(Parser.string(tagName))
                            inStyle = false
                            inScript = false
                        }
                        pos += ch == Parser.GT ? 1 : 2
                        state = .text
                        continue
                    }
                    guard readIdent() != nil else {
                        _ = skipTillChar(Parser.LT)
                        pos = min(pos + 2, c.count)  // PeekNextCharFromBuffer(1)
                        builder.tagBody()
                        state = .lt
                        continue
                    }
                    _ = skipSpaces()
                    if peek() == 0x3D {  // '='
                        pos += 1
                        _ = skipSpaces()
                        var q: UInt32 = 0
                        if peek() == 0x22 || peek() == 0x27 {
                            q = peek()
                            pos += 1
                        }
                        while pos < c.count {
                            let v = c[pos]
                            if v == Parser.GT { break }
                            if q == 0 && Parser.isSpaceChar(v) { break }
                            if q != 0 && v == q {
                                pos += 1
                                break
                            }
                            pos += 1
                            if v == 0 { break }
                        }
                    }
                case .text:
                    readText()
                    state = .lt
                    if inCdata {
                        inCdata = false
                        state = .text
                    } else if inStyle {
                        inStyle = false
                    } else if inScript {
                        inScript = false
                    }
                }
            }
            builder.finish()
        }

        /// Does `</name` (case-insensitive) start at p?
        func closingTag(at p: Int, _ name: [UInt32]) -> Bool {
            guard p + 1 + name.count < c.count, c[p + 1] == Parser.SLASH else { return false }
            return Parser.lowerASCII(Array(c[(p + 2)..<(p + 2 + name.count)])) == name
        }

        mutating func readText() {
            var txt: [UInt32] = []
            let pre = builder.pre
            var flgBreak = false
            var skip = 0
            let styleName: [UInt32] = Array("style".unicodeScalars.map { $0.value })
            let scriptName: [UInt32] = Array("script".unicodeScalars.map { $0.value })
            while !flgBreak {
                if pos >= c.count {
                    eof = true
                    if txt.contains(where: { !Parser.isSpaceChar($0) }) { flgBreak = true } else { return }
                }
                let begin = pos
                var p = pos
                let limit = min(c.count, begin + (Parser.TEXT_SPLIT_SIZE - txt.count))
                scan: while p < limit {
                    let ch = c[p]
                    var endOfNode = false
                    if inCdata {
                        if ch == 0x5D && p + 2 < c.count && c[p + 1] == 0x5D && c[p + 2] == Parser.GT {
                            skip = 3
                            endOfNode = true
                        }
                    } else if ch == Parser.LT {
                        if inStyle {
                            if closingTag(at: p, styleName) { skip = 1; endOfNode = true }
                        } else if inScript {
                            if closingTag(at: p, scriptName) { skip = 1; endOfNode = true }
                        } else {
                            skip = 1
                            endOfNode = true
                        }
                    }
                    if endOfNode {
                        flgBreak = true
                        if txt.isEmpty && p == begin {
                            pos += skip
                            return
                        }
                        break scan
                    }
                    p += 1
                }
                if p > begin {
                    txt.append(contentsOf: c[begin..<p])
                    pos = p
                }
                if txt.count >= Parser.TEXT_SPLIT_SIZE || flgBreak {
                    var last = txt.count
                    if txt.count >= Parser.TEXT_SPLIT_SIZE {
                        var k = txt.count - 1
                        while k >= 0 {
                            let ch = txt[k]
                            if ch == Parser.SP {
                                last = k + 1
                                break
                            } else if ch == Parser.CR || ch == Parser.LF {
                                let nextch: UInt32 = k < txt.count - 1 ? txt[k + 1] : 0
                                if (ch == Parser.CR && nextch != Parser.LF) || (ch == Parser.LF && nextch != Parser.CR) {
                                    last = k + 1
                                    break
                                }
                            }
                            k -= 1
                        }
                    }
                    var work = txt
                    work.append(0)
                    let n = Parser.preProcess(&work, count: last, pre: pre, cdata: inCdata)
                    var out = Array(work[..<n])
                    if pre && out.contains(Parser.TAB) { out = Parser.expandTabs(out) }
                    builder.text(out)
                    txt.removeFirst(last)
                    if flgBreak {
                        pos += skip
                        break
                    }
                }
            }
        }

        /// `ExpandTabs(lString32&, const lChar32*, int)`.
        static func expandTabs(_ s: [UInt32]) -> [UInt32] {
            var out: [UInt32] = []
            out.reserveCapacity(s.count + 16)
            var x = 0
            for ch in s {
                if ch == CR || ch == LF { x = 0 }
                if ch == TAB {
                    var delta = 8 - (x & 7)
                    x += delta
                    while delta > 0 { out.append(SP); delta -= 1 }
                } else {
                    out.append(ch)
                    x += 1
                }
            }
            return out
        }

        /// windows-1252 128...159 to Unicode (`codeconvert`).
        static func codeconvert(_ code: UInt32) -> UInt32 {
            switch code {
            case 128: return 8364
            case 130: return 8218
            case 131: return 402
            case 132: return 8222
            case 133: return 8230
            case 134: return 8224
            case 135: return 8225
            case 136: return 710
            case 137: return 8240
            case 138: return 352
            case 139: return 8249
            case 140: return 338
            case 142: return 381
            case 145: return 8216
            case 146: return 8217
            case 147: return 8220
            case 148: return 8221
            case 149: return 8226
            case 150: return 8211
            case 151: return 8212
            case 152: return 732
            case 153: return 8482
            case 154: return 353
            case 155: return 8250
            case 156: return 339
            case 158: return 382
            case 159: return 376
            default: return code
            }
        }

        /// `int PreProcessXmlString(lChar32 * str, int len, lUInt32 flags, ...)`, in place on
        /// buf[0..<count]. buf holds the whole text buffer (the split tail too) and a 0 terminator.
        static func preProcess(_ buf: inout [UInt32], count: Int, pre: Bool, cdata: Bool) -> Int {
            var st = PPState(end: count, pre: pre, cdata: cdata)
            var ampersand = false
            while st.src < st.end {
                ampersand = st.run(&buf, ampersand: ampersand)
                st.src += 1
            }
            return st.dst
        }

        struct PPState {
            let end: Int
            let pre: Bool
            let cdata: Bool
            var src = 0
            var dst = 0
            var nsp = 0
            var lch: UInt32 = 0
            var nch: UInt32 = 0

            init(end: Int, pre: Bool, cdata: Bool) {
                self.end = end
                self.pre = pre
                self.cdata = cdata
            }

            /// The `template<bool pre, bool ampersand> PreProcessXmlString` inner loop. Returns true when an
            /// '&' starts an entity (src left on it).
            mutating func run(_ buf: inout [UInt32], ampersand: Bool) -> Bool {
                var state = ampersand ? 1 : 0
                while src < end {
                    var ch = buf[src]
                    var gotoNext = false
                    if ch <= AMP {
                        if pre {
                            if ch == CR {
                                if (src == 0 || lch != LF) && (src == end - 1 || buf[src + 1] != LF) {
                                    buf[dst] = LF; dst += 1
                                    lch = LF
                                }
                                src += 1
                                continue
                            } else if ch == LF {
                                buf[dst] = LF; dst += 1
                                gotoNext = true
                            }
                        } else if ch == CR || ch == LF || ch == TAB {
                            ch = SP
                        }
                        if !gotoNext {
                            if ch == AMP && !cdata {
                                nch = 0
                                if pre { lch = ch }
                                return true
                            }
                            if !ampersand && ch == SP {
                                if pre || nsp == 0 { buf[dst] = ch; dst += 1 }
                                nsp += 1
                                gotoNext = true
                            }
                        }
                    }
                    if !gotoNext {
                        if !ampersand {
                            buf[dst] = ch; dst += 1
                            nsp = 0
                        } else {
                            if state == 2 && ch == 0x78 {  // 'x'
                                state = 22
                            } else if state == 22 && hexDigit(ch) >= 0 {
                                nch = (nch << 4) | UInt32(hexDigit(ch))
                            } else if state == 2 && ch >= 0x30 && ch <= 0x39 {
                                nch = nch &* 10 &+ (ch - 0x30)
                            } else if ch == 0x23 && state == 1 {  // '#'
                                state = 2
                            } else if state == 1 && ((ch >= 0x61 && ch <= 0x7A) || (ch >= 0x41 && ch <= 0x5A)) {
                                var k = 0
                                while k < 32 {
                                    let e = src + k < buf.count ? buf[src + k] : 0
                                    if e == 0 || e == 0x3B || e == SP { break }
                                    k += 1
                                }
                                if k == 32 { k -= 1 }
                                let term = src + k < buf.count ? buf[src + k] : 0
                                var code: UInt32 = 0, code2: UInt32 = 0
                                if term == 0x3B || term == SP {
                                    let name = String(String.UnicodeScalarView(buf[src..<(src + k)].compactMap(Unicode.Scalar.init)))
                                    if let found = CrengineDocument.entities[name] {
                                        code = found.0
                                        code2 = found.1
                                    }
                                }
                                if code != 0 {
                                    src += k
                                    state = 0
                                    buf[dst] = code; dst += 1
                                    if code2 != 0 { buf[dst] = code2; dst += 1 }
                                    nsp = 0
                                } else {
                                    if dst < end - 1 {
                                        buf[dst] = AMP; dst += 1
                                        buf[dst] = buf[src]; dst += 1
                                    }
                                    state = 0
                                }
                            } else if ch == 0x3B {  // ';'
                                if nch != 0 { buf[dst] = Parser.codeconvert(nch); dst += 1 }
                                state = 0
                                nsp = 0
                            } else {
                                state = 0  // error: back to normal mode
                            }
                            if state == 0 {
                                if pre { lch = ch }
                                return false
                            }
                        }
                    }
                    // next:
                    if pre { lch = ch }
                    src += 1
                }
                return false
            }
        }
    }
}

// MARK: - Named entities: crengine's def_entity_table (lvxml.cpp), "name=code[,code2]"

extension CrengineDocument {
    fileprivate static let entities: [String: (UInt32, UInt32)] = {
        var table: [String: (UInt32, UInt32)] = [:]
        for token in entityTable.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = token.split(separator: "=")
            let codes = parts[1].split(separator: ",").map { UInt32($0)! }
            table[String(parts[0])] = (codes[0], codes.count > 1 ? codes[1] : 0)
        }
        return table
    }()

    private static let entityTable = """
AElig=198 AMP=38 Aacute=193 Abreve=258 Acirc=194 Acy=1040 Afr=120068 Agrave=192 Alpha=913 Amacr=256 And=10835
Aogon=260 Aopf=120120 ApplyFunction=8289 Aring=197 Ascr=119964 Assign=8788 Atilde=195 Auml=196 Backslash=8726
Barv=10983 Barwed=8966 Bcy=1041 Because=8757 Bernoullis=8492 Beta=914 Bfr=120069 Bopf=120121 Breve=728
Bscr=8492 Bumpeq=8782 CHcy=1063 COPY=169 Cacute=262 Cap=8914 CapitalDifferentialD=8517 Cayleys=8493 Ccaron=268
Ccedil=199 Ccirc=264 Cconint=8752 Cdot=266 Cedilla=184 CenterDot=183 Cfr=8493 Chi=935 CircleDot=8857
CircleMinus=8854 CirclePlus=8853 CircleTimes=8855 ClockwiseContourIntegral=8754 CloseCurlyDoubleQuote=8221
CloseCurlyQuote=8217 Colon=8759 Colone=10868 Congruent=8801 Conint=8751 ContourIntegral=8750 Copf=8450
Coproduct=8720 CounterClockwiseContourIntegral=8755 Cross=10799 Cscr=119966 Cup=8915 CupCap=8781 DD=8517
DDotrahd=10513 DJcy=1026 DScy=1029 DZcy=1039 Dagger=8225 Darr=8609 Dashv=10980 Dcaron=270 Dcy=1044 Del=8711
Delta=916 Dfr=120071 DiacriticalAcute=180 DiacriticalDot=729 DiacriticalDoubleAcute=733 DiacriticalGrave=96
DiacriticalTilde=732 Diamond=8900 DifferentialD=8518 Dopf=120123 Dot=168 DotDot=8412 DotEqual=8784
DoubleContourIntegral=8751 DoubleDot=168 DoubleDownArrow=8659 DoubleLeftArrow=8656 DoubleLeftRightArrow=8660
DoubleLeftTee=10980 DoubleLongLeftArrow=10232 DoubleLongLeftRightArrow=10234 DoubleLongRightArrow=10233
DoubleRightArrow=8658 DoubleRightTee=8872 DoubleUpArrow=8657 DoubleUpDownArrow=8661 DoubleVerticalBar=8741
DownArrow=8595 DownArrowBar=10515 DownArrowUpArrow=8693 DownBreve=785 DownLeftRightVector=10576
DownLeftTeeVector=10590 DownLeftVector=8637 DownLeftVectorBar=10582 DownRightTeeVector=10591
DownRightVector=8641 DownRightVectorBar=10583 DownTee=8868 DownTeeArrow=8615 Downarrow=8659 Dscr=119967
Dstrok=272 ENG=330 ETH=208 Eacute=201 Ecaron=282 Ecirc=202 Ecy=1069 Edot=278 Efr=120072 Egrave=200
Element=8712 Emacr=274 EmptySmallSquare=9723 EmptyVerySmallSquare=9643 Eogon=280 Eopf=120124 Epsilon=917
Equal=10869 EqualTilde=8770 Equilibrium=8652 Escr=8496 Esim=10867 Eta=919 Euml=203 Exists=8707
ExponentialE=8519 Fcy=1060 Ffr=120073 FilledSmallSquare=9724 FilledVerySmallSquare=9642 Fopf=120125
ForAll=8704 Fouriertrf=8497 Fscr=8497 GJcy=1027 GT=62 Gamma=915 Gammad=988 Gbreve=286 Gcedil=290 Gcirc=284
Gcy=1043 Gdot=288 Gfr=120074 Gg=8921 Gopf=120126 GreaterEqual=8805 GreaterEqualLess=8923 GreaterFullEqual=8807
GreaterGreater=10914 GreaterLess=8823 GreaterSlantEqual=10878 GreaterTilde=8819 Gscr=119970 Gt=8811
HARDcy=1066 Hacek=711 Hat=94 Hcirc=292 Hfr=8460 HilbertSpace=8459 Hopf=8461 HorizontalLine=9472 Hscr=8459
Hstrok=294 HumpDownHump=8782 HumpEqual=8783 IEcy=1045 IJlig=306 IOcy=1025 Iacute=205 Icirc=206 Icy=1048
Idot=304 Ifr=8465 Igrave=204 Im=8465 Imacr=298 ImaginaryI=8520 Implies=8658 Int=8748 Integral=8747
Intersection=8898 InvisibleComma=8291 InvisibleTimes=8290 Iogon=302 Iopf=120128 Iota=921 Iscr=8464 Itilde=296
Iukcy=1030 Iuml=207 Jcirc=308 Jcy=1049 Jfr=120077 Jopf=120129 Jscr=119973 Jsercy=1032 Jukcy=1028 KHcy=1061
KJcy=1036 Kappa=922 Kcedil=310 Kcy=1050 Kfr=120078 Kopf=120130 Kscr=119974 LJcy=1033 LT=60 Lacute=313
Lambda=923 Lang=10218 Laplacetrf=8466 Larr=8606 Lcaron=317 Lcedil=315 Lcy=1051 LeftAngleBracket=10216
LeftArrow=8592 LeftArrowBar=8676 LeftArrowRightArrow=8646 LeftCeiling=8968 LeftDoubleBracket=10214
LeftDownTeeVector=10593 LeftDownVector=8643 LeftDownVectorBar=10585 LeftFloor=8970 LeftRightArrow=8596
LeftRightVector=10574 LeftTee=8867 LeftTeeArrow=8612 LeftTeeVector=10586 LeftTriangle=8882
LeftTriangleBar=10703 LeftTriangleEqual=8884 LeftUpDownVector=10577 LeftUpTeeVector=10592 LeftUpVector=8639
LeftUpVectorBar=10584 LeftVector=8636 LeftVectorBar=10578 Leftarrow=8656 Leftrightarrow=8660
LessEqualGreater=8922 LessFullEqual=8806 LessGreater=8822 LessLess=10913 LessSlantEqual=10877 LessTilde=8818
Lfr=120079 Ll=8920 Lleftarrow=8666 Lmidot=319 LongLeftArrow=10229 LongLeftRightArrow=10231
LongRightArrow=10230 Longleftarrow=10232 Longleftrightarrow=10234 Longrightarrow=10233 Lopf=120131
LowerLeftArrow=8601 LowerRightArrow=8600 Lscr=8466 Lsh=8624 Lstrok=321 Lt=8810 Map=10501 Mcy=1052
MediumSpace=8287 Mellintrf=8499 Mfr=120080 MinusPlus=8723 Mopf=120132 Mscr=8499 Mu=924 NJcy=1034 Nacute=323
Ncaron=327 Ncedil=325 Ncy=1053 NegativeMediumSpace=8203 NegativeThickSpace=8203 NegativeThinSpace=8203
NegativeVeryThinSpace=8203 NestedGreaterGreater=8811 NestedLessLess=8810 NewLine=10 Nfr=120081 NoBreak=8288
NonBreakingSpace=160 Nopf=8469 Not=10988 NotCongruent=8802 NotCupCap=8813 NotDoubleVerticalBar=8742
NotElement=8713 NotEqual=8800 NotEqualTilde=8770,824 NotExists=8708 NotGreater=8815 NotGreaterEqual=8817
NotGreaterFullEqual=8807,824 NotGreaterGreater=8811,824 NotGreaterLess=8825 NotGreaterSlantEqual=10878,824
NotGreaterTilde=8821 NotHumpDownHump=8782,824 NotHumpEqual=8783,824 NotLeftTriangle=8938
NotLeftTriangleBar=10703,824 NotLeftTriangleEqual=8940 NotLess=8814 NotLessEqual=8816 NotLessGreater=8824
NotLessLess=8810,824 NotLessSlantEqual=10877,824 NotLessTilde=8820 NotNestedGreaterGreater=10914,824
NotNestedLessLess=10913,824 NotPrecedes=8832 NotPrecedesEqual=10927,824 NotPrecedesSlantEqual=8928
NotReverseElement=8716 NotRightTriangle=8939 NotRightTriangleBar=10704,824 NotRightTriangleEqual=8941
NotSquareSubset=8847,824 NotSquareSubsetEqual=8930 NotSquareSuperset=8848,824 NotSquareSupersetEqual=8931
NotSubset=8834,8402 NotSubsetEqual=8840 NotSucceeds=8833 NotSucceedsEqual=10928,824 NotSucceedsSlantEqual=8929
NotSucceedsTilde=8831,824 NotSuperset=8835,8402 NotSupersetEqual=8841 NotTilde=8769 NotTildeEqual=8772
NotTildeFullEqual=8775 NotTildeTilde=8777 NotVerticalBar=8740 Nscr=119977 Ntilde=209 Nu=925 OElig=338
Oacute=211 Ocirc=212 Ocy=1054 Odblac=336 Ofr=120082 Ograve=210 Omacr=332 Omega=937 Omicron=927 Oopf=120134
OpenCurlyDoubleQuote=8220 OpenCurlyQuote=8216 Or=10836 Oscr=119978 Oslash=216 Otilde=213 Otimes=10807 Ouml=214
OverBar=8254 OverBrace=9182 OverBracket=9140 OverParenthesis=9180 PartialD=8706 Pcy=1055 Pfr=120083 Phi=934
Pi=928 PlusMinus=177 Poincareplane=8460 Popf=8473 Pr=10939 Precedes=8826 PrecedesEqual=10927
PrecedesSlantEqual=8828 PrecedesTilde=8830 Prime=8243 Product=8719 Proportion=8759 Proportional=8733
Pscr=119979 Psi=936 QUOT=34 Qfr=120084 Qopf=8474 Qscr=119980 RBarr=10512 REG=174 Racute=340 Rang=10219
Rarr=8608 Rarrtl=10518 Rcaron=344 Rcedil=342 Rcy=1056 Re=8476 ReverseElement=8715 ReverseEquilibrium=8651
ReverseUpEquilibrium=10607 Rfr=8476 Rho=929 RightAngleBracket=10217 RightArrow=8594 RightArrowBar=8677
RightArrowLeftArrow=8644 RightCeiling=8969 RightDoubleBracket=10215 RightDownTeeVector=10589
RightDownVector=8642 RightDownVectorBar=10581 RightFloor=8971 RightTee=8866 RightTeeArrow=8614
RightTeeVector=10587 RightTriangle=8883 RightTriangleBar=10704 RightTriangleEqual=8885 RightUpDownVector=10575
RightUpTeeVector=10588 RightUpVector=8638 RightUpVectorBar=10580 RightVector=8640 RightVectorBar=10579
Rightarrow=8658 Ropf=8477 RoundImplies=10608 Rrightarrow=8667 Rscr=8475 Rsh=8625 RuleDelayed=10740 SHCHcy=1065
SHcy=1064 SOFTcy=1068 Sacute=346 Sc=10940 Scaron=352 Scedil=350 Scirc=348 Scy=1057 Sfr=120086
ShortDownArrow=8595 ShortLeftArrow=8592 ShortRightArrow=8594 ShortUpArrow=8593 Sigma=931 SmallCircle=8728
Sopf=120138 Sqrt=8730 Square=9633 SquareIntersection=8851 SquareSubset=8847 SquareSubsetEqual=8849
SquareSuperset=8848 SquareSupersetEqual=8850 SquareUnion=8852 Sscr=119982 Star=8902 Sub=8912 Subset=8912
SubsetEqual=8838 Succeeds=8827 SucceedsEqual=10928 SucceedsSlantEqual=8829 SucceedsTilde=8831 SuchThat=8715
Sum=8721 Sup=8913 Superset=8835 SupersetEqual=8839 Supset=8913 THORN=222 TRADE=8482 TSHcy=1035 TScy=1062 Tab=9
Tau=932 Tcaron=356 Tcedil=354 Tcy=1058 Tfr=120087 Therefore=8756 Theta=920 ThickSpace=8287,8202 ThinSpace=8201
Tilde=8764 TildeEqual=8771 TildeFullEqual=8773 TildeTilde=8776 Topf=120139 TripleDot=8411 Tscr=119983
Tstrok=358 Uacute=218 Uarr=8607 Uarrocir=10569 Ubrcy=1038 Ubreve=364 Ucirc=219 Ucy=1059 Udblac=368 Ufr=120088
Ugrave=217 Umacr=362 UnderBar=95 UnderBrace=9183 UnderBracket=9141 UnderParenthesis=9181 Union=8899
UnionPlus=8846 Uogon=370 Uopf=120140 UpArrow=8593 UpArrowBar=10514 UpArrowDownArrow=8645 UpDownArrow=8597
UpEquilibrium=10606 UpTee=8869 UpTeeArrow=8613 Uparrow=8657 Updownarrow=8661 UpperLeftArrow=8598
UpperRightArrow=8599 Upsi=978 Upsilon=933 Uring=366 Uscr=119984 Utilde=360 Uuml=220 VDash=8875 Vbar=10987
Vcy=1042 Vdash=8873 Vdashl=10982 Vee=8897 Verbar=8214 Vert=8214 VerticalBar=8739 VerticalLine=124
VerticalSeparator=10072 VerticalTilde=8768 VeryThinSpace=8202 Vfr=120089 Vopf=120141 Vscr=119985 Vvdash=8874
Wcirc=372 Wedge=8896 Wfr=120090 Wopf=120142 Wscr=119986 Xfr=120091 Xi=926 Xopf=120143 Xscr=119987 YAcy=1071
YIcy=1031 YUcy=1070 Yacute=221 Ycirc=374 Ycy=1067 Yfr=120092 Yopf=120144 Yscr=119988 Yuml=376 ZHcy=1046
Zacute=377 Zcaron=381 Zcy=1047 Zdot=379 ZeroWidthSpace=8203 Zeta=918 Zfr=8488 Zopf=8484 Zscr=119989 aacute=225
abreve=259 ac=8766 acE=8766,819 acd=8767 acirc=226 acute=180 acy=1072 aelig=230 af=8289 afr=120094 agrave=224
alefsym=8501 aleph=8501 alpha=945 amacr=257 amalg=10815 amp=38 and=8743 andand=10837 andd=10844 andslope=10840
andv=10842 ang=8736 ange=10660 angle=8736 angmsd=8737 angmsdaa=10664 angmsdab=10665 angmsdac=10666
angmsdad=10667 angmsdae=10668 angmsdaf=10669 angmsdag=10670 angmsdah=10671 angrt=8735 angrtvb=8894
angrtvbd=10653 angsph=8738 angst=197 angzarr=9084 aogon=261 aopf=120146 ap=8776 apE=10864 apacir=10863
ape=8778 apid=8779 apos=39 approx=8776 approxeq=8778 aring=229 ascr=119990 ast=42 asymp=8776 asympeq=8781
atilde=227 auml=228 awconint=8755 awint=10769 bNot=10989 backcong=8780 backepsilon=1014 backprime=8245
backsim=8765 backsimeq=8909 barvee=8893 barwed=8965 barwedge=8965 bbrk=9141 bbrktbrk=9142 bcong=8780 bcy=1073
bdquo=8222 becaus=8757 because=8757 bemptyv=10672 bepsi=1014 bernou=8492 beta=946 beth=8502 between=8812
bfr=120095 bigcap=8898 bigcirc=9711 bigcup=8899 bigodot=10752 bigoplus=10753 bigotimes=10754 bigsqcup=10758
bigstar=9733 bigtriangledown=9661 bigtriangleup=9651 biguplus=10756 bigvee=8897 bigwedge=8896 bkarow=10509
blacklozenge=10731 blacksquare=9642 blacktriangle=9652 blacktriangledown=9662 blacktriangleleft=9666
blacktriangleright=9656 blank=9251 blk12=9618 blk14=9617 blk34=9619 block=9608 bne=61,8421 bnequiv=8801,8421
bnot=8976 bopf=120147 bot=8869 bottom=8869 bowtie=8904 boxDL=9559 boxDR=9556 boxDl=9558 boxDr=9555 boxH=9552
boxHD=9574 boxHU=9577 boxHd=9572 boxHu=9575 boxUL=9565 boxUR=9562 boxUl=9564 boxUr=9561 boxV=9553 boxVH=9580
boxVL=9571 boxVR=9568 boxVh=9579 boxVl=9570 boxVr=9567 boxbox=10697 boxdL=9557 boxdR=9554 boxdl=9488
boxdr=9484 boxh=9472 boxhD=9573 boxhU=9576 boxhd=9516 boxhu=9524 boxminus=8863 boxplus=8862 boxtimes=8864
boxuL=9563 boxuR=9560 boxul=9496 boxur=9492 boxv=9474 boxvH=9578 boxvL=9569 boxvR=9566 boxvh=9532 boxvl=9508
boxvr=9500 bprime=8245 breve=728 brvbar=166 bscr=119991 bsemi=8271 bsim=8765 bsime=8909 bsol=92 bsolb=10693
bsolhsub=10184 bull=8226 bullet=8226 bump=8782 bumpE=10926 bumpe=8783 bumpeq=8783 cacute=263 cap=8745
capand=10820 capbrcup=10825 capcap=10827 capcup=10823 capdot=10816 caps=8745,65024 caret=8257 caron=711
ccaps=10829 ccaron=269 ccedil=231 ccirc=265 ccups=10828 ccupssm=10832 cdot=267 cedil=184 cemptyv=10674
cent=162 centerdot=183 cfr=120096 chcy=1095 check=10003 checkmark=10003 chi=967 cir=9675 cirE=10691 circ=710
circeq=8791 circlearrowleft=8634 circlearrowright=8635 circledR=174 circledS=9416 circledast=8859
circledcirc=8858 circleddash=8861 cire=8791 cirfnint=10768 cirmid=10991 cirscir=10690 clubs=9827 clubsuit=9827
colon=58 colone=8788 coloneq=8788 comma=44 commat=64 comp=8705 compfn=8728 complement=8705 complexes=8450
cong=8773 congdot=10861 conint=8750 copf=120148 coprod=8720 copy=169 copysr=8471 crarr=8629 cross=10007
cscr=119992 csub=10959 csube=10961 csup=10960 csupe=10962 ctdot=8943 cudarrl=10552 cudarrr=10549 cuepr=8926
cuesc=8927 cularr=8630 cularrp=10557 cup=8746 cupbrcap=10824 cupcap=10822 cupcup=10826 cupdot=8845 cupor=10821
cups=8746,65024 curarr=8631 curarrm=10556 curlyeqprec=8926 curlyeqsucc=8927 curlyvee=8910 curlywedge=8911
curren=164 curvearrowleft=8630 curvearrowright=8631 cuvee=8910 cuwed=8911 cwconint=8754 cwint=8753 cylcty=9005
dArr=8659 dHar=10597 dagger=8224 daleth=8504 darr=8595 dash=8208 dashv=8867 dbkarow=10511 dblac=733 dcaron=271
dcy=1076 dd=8518 ddagger=8225 ddarr=8650 ddotseq=10871 deg=176 delta=948 demptyv=10673 dfisht=10623 dfr=120097
dharl=8643 dharr=8642 diam=8900 diamond=8900 diamondsuit=9830 diams=9830 die=168 digamma=989 disin=8946
div=247 divide=247 divideontimes=8903 divonx=8903 djcy=1106 dlcorn=8990 dlcrop=8973 dollar=36 dopf=120149
dot=729 doteq=8784 doteqdot=8785 dotminus=8760 dotplus=8724 dotsquare=8865 doublebarwedge=8966 downarrow=8595
downdownarrows=8650 downharpoonleft=8643 downharpoonright=8642 drbkarow=10512 drcorn=8991 drcrop=8972
dscr=119993 dscy=1109 dsol=10742 dstrok=273 dtdot=8945 dtri=9663 dtrif=9662 duarr=8693 duhar=10607
dwangle=10662 dzcy=1119 dzigrarr=10239 eDDot=10871 eDot=8785 eacute=233 easter=10862 ecaron=283 ecir=8790
ecirc=234 ecolon=8789 ecy=1101 edot=279 ee=8519 efDot=8786 efr=120098 eg=10906 egrave=232 egs=10902
egsdot=10904 el=10905 elinters=9191 ell=8467 els=10901 elsdot=10903 emacr=275 empty=8709 emptyset=8709
emptyv=8709 emsp=8195 emsp13=8196 emsp14=8197 eng=331 ensp=8194 eogon=281 eopf=120150 epar=8917 eparsl=10723
eplus=10865 epsi=949 epsilon=949 epsiv=1013 eqcirc=8790 eqcolon=8789 eqsim=8770 eqslantgtr=10902
eqslantless=10901 equals=61 equest=8799 equiv=8801 equivDD=10872 eqvparsl=10725 erDot=8787 erarr=10609
escr=8495 esdot=8784 esim=8770 eta=951 eth=240 euml=235 euro=8364 excl=33 exist=8707 expectation=8496
exponentiale=8519 fallingdotseq=8786 fcy=1092 female=9792 ffilig=64259 fflig=64256 ffllig=64260 ffr=120099
filig=64257 fjlig=102,106 flat=9837 fllig=64258 fltns=9649 fnof=402 fopf=120151 forall=8704 fork=8916
forkv=10969 fpartint=10765 frac12=189 frac13=8531 frac14=188 frac15=8533 frac16=8537 frac18=8539 frac23=8532
frac25=8534 frac34=190 frac35=8535 frac38=8540 frac45=8536 frac56=8538 frac58=8541 frac78=8542 frasl=8260
frown=8994 fscr=119995 gE=8807 gEl=10892 gacute=501 gamma=947 gammad=989 gap=10886 gbreve=287 gcirc=285
gcy=1075 gdot=289 ge=8805 gel=8923 geq=8805 geqq=8807 geqslant=10878 ges=10878 gescc=10921 gesdot=10880
gesdoto=10882 gesdotol=10884 gesl=8923,65024 gesles=10900 gfr=120100 gg=8811 ggg=8921 gimel=8503 gjcy=1107
gl=8823 glE=10898 gla=10917 glj=10916 gnE=8809 gnap=10890 gnapprox=10890 gne=10888 gneq=10888 gneqq=8809
gnsim=8935 gopf=120152 grave=96 gscr=8458 gsim=8819 gsime=10894 gsiml=10896 gt=62 gtcc=10919 gtcir=10874
gtdot=8919 gtlPar=10645 gtquest=10876 gtrapprox=10886 gtrarr=10616 gtrdot=8919 gtreqless=8923 gtreqqless=10892
gtrless=8823 gtrsim=8819 gvertneqq=8809,65024 gvnE=8809,65024 hArr=8660 hairsp=8202 half=189 hamilt=8459
hardcy=1098 harr=8596 harrcir=10568 harrw=8621 hbar=8463 hcirc=293 hearts=9829 heartsuit=9829 hellip=8230
hercon=8889 hfr=120101 hksearow=10533 hkswarow=10534 hoarr=8703 homtht=8763 hookleftarrow=8617
hookrightarrow=8618 hopf=120153 horbar=8213 hscr=119997 hslash=8463 hstrok=295 hybull=8259 hyphen=8208
iacute=237 ic=8291 icirc=238 icy=1080 iecy=1077 iexcl=161 iff=8660 ifr=120102 igrave=236 ii=8520 iiiint=10764
iiint=8749 iinfin=10716 iiota=8489 ijlig=307 imacr=299 image=8465 imagline=8464 imagpart=8465 imath=305
imof=8887 imped=437 in=8712 incare=8453 infin=8734 infintie=10717 inodot=305 int=8747 intcal=8890
integers=8484 intercal=8890 intlarhk=10775 intprod=10812 iocy=1105 iogon=303 iopf=120154 iota=953 iprod=10812
iquest=191 iscr=119998 isin=8712 isinE=8953 isindot=8949 isins=8948 isinsv=8947 isinv=8712 it=8290 itilde=297
iukcy=1110 iuml=239 jcirc=309 jcy=1081 jfr=120103 jmath=567 jopf=120155 jscr=119999 jsercy=1112 jukcy=1108
kappa=954 kappav=1008 kcedil=311 kcy=1082 kfr=120104 kgreen=312 khcy=1093 kjcy=1116 kopf=120156 kscr=120000
lAarr=8666 lArr=8656 lAtail=10523 lBarr=10510 lE=8806 lEg=10891 lHar=10594 lacute=314 laemptyv=10676
lagran=8466 lambda=955 lang=10216 langd=10641 langle=10216 lap=10885 laquo=171 larr=8592 larrb=8676
larrbfs=10527 larrfs=10525 larrhk=8617 larrlp=8619 larrpl=10553 larrsim=10611 larrtl=8610 lat=10923
latail=10521 late=10925 lates=10925,65024 lbarr=10508 lbbrk=10098 lbrace=123 lbrack=91 lbrke=10635
lbrksld=10639 lbrkslu=10637 lcaron=318 lcedil=316 lceil=8968 lcub=123 lcy=1083 ldca=10550 ldquo=8220
ldquor=8222 ldrdhar=10599 ldrushar=10571 ldsh=8626 le=8804 leftarrow=8592 leftarrowtail=8610
leftharpoondown=8637 leftharpoonup=8636 leftleftarrows=8647 leftrightarrow=8596 leftrightarrows=8646
leftrightharpoons=8651 leftrightsquigarrow=8621 leftthreetimes=8907 leg=8922 leq=8804 leqq=8806 leqslant=10877
les=10877 lescc=10920 lesdot=10879 lesdoto=10881 lesdotor=10883 lesg=8922,65024 lesges=10899 lessapprox=10885
lessdot=8918 lesseqgtr=8922 lesseqqgtr=10891 lessgtr=8822 lesssim=8818 lfisht=10620 lfloor=8970 lfr=120105
lg=8822 lgE=10897 lhard=8637 lharu=8636 lharul=10602 lhblk=9604 ljcy=1113 ll=8810 llarr=8647 llcorner=8990
llhard=10603 lltri=9722 lmidot=320 lmoust=9136 lmoustache=9136 lnE=8808 lnap=10889 lnapprox=10889 lne=10887
lneq=10887 lneqq=8808 lnsim=8934 loang=10220 loarr=8701 lobrk=10214 longleftarrow=10229
longleftrightarrow=10231 longmapsto=10236 longrightarrow=10230 looparrowleft=8619 looparrowright=8620
lopar=10629 lopf=120157 loplus=10797 lotimes=10804 lowast=8727 lowbar=95 loz=9674 lozenge=9674 lozf=10731
lpar=40 lparlt=10643 lrarr=8646 lrcorner=8991 lrhar=8651 lrhard=10605 lrm=8206 lrtri=8895 lsaquo=8249
lscr=120001 lsh=8624 lsim=8818 lsime=10893 lsimg=10895 lsqb=91 lsquo=8216 lsquor=8218 lstrok=322 lt=60
ltcc=10918 ltcir=10873 ltdot=8918 lthree=8907 ltimes=8905 ltlarr=10614 ltquest=10875 ltrPar=10646 ltri=9667
ltrie=8884 ltrif=9666 lurdshar=10570 luruhar=10598 lvertneqq=8808,65024 lvnE=8808,65024 mDDot=8762 macr=175
male=9794 malt=10016 maltese=10016 map=8614 mapsto=8614 mapstodown=8615 mapstoleft=8612 mapstoup=8613
marker=9646 mcomma=10793 mcy=1084 mdash=8212 measuredangle=8737 mfr=120106 mho=8487 micro=181 mid=8739
midast=42 midcir=10992 middot=183 minus=8722 minusb=8863 minusd=8760 minusdu=10794 mlcp=10971 mldr=8230
mnplus=8723 models=8871 mopf=120158 mp=8723 mscr=120002 mstpos=8766 mu=956 multimap=8888 mumap=8888
nGg=8921,824 nGt=8811,8402 nGtv=8811,824 nLeftarrow=8653 nLeftrightarrow=8654 nLl=8920,824 nLt=8810,8402
nLtv=8810,824 nRightarrow=8655 nVDash=8879 nVdash=8878 nabla=8711 nacute=324 nang=8736,8402 nap=8777
napE=10864,824 napid=8779,824 napos=329 napprox=8777 natur=9838 natural=9838 naturals=8469 nbsp=160
nbump=8782,824 nbumpe=8783,824 ncap=10819 ncaron=328 ncedil=326 ncong=8775 ncongdot=10861,824 ncup=10818
ncy=1085 ndash=8211 ne=8800 neArr=8663 nearhk=10532 nearr=8599 nearrow=8599 nedot=8784,824 nequiv=8802
nesear=10536 nesim=8770,824 nexist=8708 nexists=8708 nfr=120107 ngE=8807,824 nge=8817 ngeq=8817 ngeqq=8807,824
ngeqslant=10878,824 nges=10878,824 ngsim=8821 ngt=8815 ngtr=8815 nhArr=8654 nharr=8622 nhpar=10994 ni=8715
nis=8956 nisd=8954 niv=8715 njcy=1114 nlArr=8653 nlE=8806,824 nlarr=8602 nldr=8229 nle=8816 nleftarrow=8602
nleftrightarrow=8622 nleq=8816 nleqq=8806,824 nleqslant=10877,824 nles=10877,824 nless=8814 nlsim=8820
nlt=8814 nltri=8938 nltrie=8940 nmid=8740 nopf=120159 not=172 notin=8713 notinE=8953,824 notindot=8949,824
notinva=8713 notinvb=8951 notinvc=8950 notni=8716 notniva=8716 notnivb=8958 notnivc=8957 npar=8742
nparallel=8742 nparsl=11005,8421 npart=8706,824 npolint=10772 npr=8832 nprcue=8928 npre=10927,824 nprec=8832
npreceq=10927,824 nrArr=8655 nrarr=8603 nrarrc=10547,824 nrarrw=8605,824 nrightarrow=8603 nrtri=8939
nrtrie=8941 nsc=8833 nsccue=8929 nsce=10928,824 nscr=120003 nshortmid=8740 nshortparallel=8742 nsim=8769
nsime=8772 nsimeq=8772 nsmid=8740 nspar=8742 nsqsube=8930 nsqsupe=8931 nsub=8836 nsubE=10949,824 nsube=8840
nsubset=8834,8402 nsubseteq=8840 nsubseteqq=10949,824 nsucc=8833 nsucceq=10928,824 nsup=8837 nsupE=10950,824
nsupe=8841 nsupset=8835,8402 nsupseteq=8841 nsupseteqq=10950,824 ntgl=8825 ntilde=241 ntlg=8824
ntriangleleft=8938 ntrianglelefteq=8940 ntriangleright=8939 ntrianglerighteq=8941 nu=957 num=35 numero=8470
numsp=8199 nvDash=8877 nvHarr=10500 nvap=8781,8402 nvdash=8876 nvge=8805,8402 nvgt=62,8402 nvinfin=10718
nvlArr=10498 nvle=8804,8402 nvlt=60,8402 nvltrie=8884,8402 nvrArr=10499 nvrtrie=8885,8402 nvsim=8764,8402
nwArr=8662 nwarhk=10531 nwarr=8598 nwarrow=8598 nwnear=10535 oS=9416 oacute=243 oast=8859 ocir=8858 ocirc=244
ocy=1086 odash=8861 odblac=337 odiv=10808 odot=8857 odsold=10684 oelig=339 ofcir=10687 ofr=120108 ogon=731
ograve=242 ogt=10689 ohbar=10677 ohm=937 oint=8750 olarr=8634 olcir=10686 olcross=10683 oline=8254 olt=10688
omacr=333 omega=969 omicron=959 omid=10678 ominus=8854 oopf=120160 opar=10679 operp=10681 oplus=8853 or=8744
orarr=8635 ord=10845 order=8500 orderof=8500 ordf=170 ordm=186 origof=8886 oror=10838 orslope=10839 orv=10843
oscr=8500 oslash=248 osol=8856 otilde=245 otimes=8855 otimesas=10806 ouml=246 ovbar=9021 par=8741 para=182
parallel=8741 parsim=10995 parsl=11005 part=8706 pcy=1087 percnt=37 period=46 permil=8240 perp=8869
pertenk=8241 pfr=120109 phi=966 phiv=981 phmmat=8499 phone=9742 pi=960 pitchfork=8916 piv=982 planck=8463
planckh=8462 plankv=8463 plus=43 plusacir=10787 plusb=8862 pluscir=10786 plusdo=8724 plusdu=10789 pluse=10866
plusmn=177 plussim=10790 plustwo=10791 pm=177 pointint=10773 popf=120161 pound=163 pr=8826 prE=10931
prap=10935 prcue=8828 pre=10927 prec=8826 precapprox=10935 preccurlyeq=8828 preceq=10927 precnapprox=10937
precneqq=10933 precnsim=8936 precsim=8830 prime=8242 primes=8473 prnE=10933 prnap=10937 prnsim=8936 prod=8719
profalar=9006 profline=8978 profsurf=8979 prop=8733 propto=8733 prsim=8830 prurel=8880 pscr=120005 psi=968
puncsp=8200 qfr=120110 qint=10764 qopf=120162 qprime=8279 qscr=120006 quaternions=8461 quatint=10774 quest=63
questeq=8799 quot=34 rAarr=8667 rArr=8658 rAtail=10524 rBarr=10511 rHar=10596 race=8765,817 racute=341
radic=8730 raemptyv=10675 rang=10217 rangd=10642 range=10661 rangle=10217 raquo=187 rarr=8594 rarrap=10613
rarrb=8677 rarrbfs=10528 rarrc=10547 rarrfs=10526 rarrhk=8618 rarrlp=8620 rarrpl=10565 rarrsim=10612
rarrtl=8611 rarrw=8605 ratail=10522 ratio=8758 rationals=8474 rbarr=10509 rbbrk=10099 rbrace=125 rbrack=93
rbrke=10636 rbrksld=10638 rbrkslu=10640 rcaron=345 rcedil=343 rceil=8969 rcub=125 rcy=1088 rdca=10551
rdldhar=10601 rdquo=8221 rdquor=8221 rdsh=8627 real=8476 realine=8475 realpart=8476 reals=8477 rect=9645
reg=174 rfisht=10621 rfloor=8971 rfr=120111 rhard=8641 rharu=8640 rharul=10604 rho=961 rhov=1009
rightarrow=8594 rightarrowtail=8611 rightharpoondown=8641 rightharpoonup=8640 rightleftarrows=8644
rightleftharpoons=8652 rightrightarrows=8649 rightsquigarrow=8605 rightthreetimes=8908 ring=730
risingdotseq=8787 rlarr=8644 rlhar=8652 rlm=8207 rmoust=9137 rmoustache=9137 rnmid=10990 roang=10221
roarr=8702 robrk=10215 ropar=10630 ropf=120163 roplus=10798 rotimes=10805 rpar=41 rpargt=10644 rppolint=10770
rrarr=8649 rsaquo=8250 rscr=120007 rsh=8625 rsqb=93 rsquo=8217 rsquor=8217 rthree=8908 rtimes=8906 rtri=9657
rtrie=8885 rtrif=9656 rtriltri=10702 ruluhar=10600 rx=8478 sacute=347 sbquo=8218 sc=8827 scE=10932 scap=10936
scaron=353 sccue=8829 sce=10928 scedil=351 scirc=349 scnE=10934 scnap=10938 scnsim=8937 scpolint=10771
scsim=8831 scy=1089 sdot=8901 sdotb=8865 sdote=10854 seArr=8664 searhk=10533 searr=8600 searrow=8600 sect=167
semi=59 seswar=10537 setminus=8726 setmn=8726 sext=10038 sfr=120112 sfrown=8994 sharp=9839 shchcy=1097
shcy=1096 shortmid=8739 shortparallel=8741 shy=173 sigma=963 sigmaf=962 sigmav=962 sim=8764 simdot=10858
sime=8771 simeq=8771 simg=10910 simgE=10912 siml=10909 simlE=10911 simne=8774 simplus=10788 simrarr=10610
slarr=8592 smallsetminus=8726 smashp=10803 smeparsl=10724 smid=8739 smile=8995 smt=10922 smte=10924
smtes=10924,65024 softcy=1100 sol=47 solb=10692 solbar=9023 sopf=120164 spades=9824 spadesuit=9824 spar=8741
sqcap=8851 sqcaps=8851,65024 sqcup=8852 sqcups=8852,65024 sqsub=8847 sqsube=8849 sqsubset=8847 sqsubseteq=8849
sqsup=8848 sqsupe=8850 sqsupset=8848 sqsupseteq=8850 squ=9633 square=9633 squarf=9642 squf=9642 srarr=8594
sscr=120008 ssetmn=8726 ssmile=8995 sstarf=8902 star=9734 starf=9733 straightepsilon=1013 straightphi=981
strns=175 sub=8834 subE=10949 subdot=10941 sube=8838 subedot=10947 submult=10945 subnE=10955 subne=8842
subplus=10943 subrarr=10617 subset=8834 subseteq=8838 subseteqq=10949 subsetneq=8842 subsetneqq=10955
subsim=10951 subsub=10965 subsup=10963 succ=8827 succapprox=10936 succcurlyeq=8829 succeq=10928
succnapprox=10938 succneqq=10934 succnsim=8937 succsim=8831 sum=8721 sung=9834 sup=8835 sup1=185 sup2=178
sup3=179 supE=10950 supdot=10942 supdsub=10968 supe=8839 supedot=10948 suphsol=10185 suphsub=10967
suplarr=10619 supmult=10946 supnE=10956 supne=8843 supplus=10944 supset=8835 supseteq=8839 supseteqq=10950
supsetneq=8843 supsetneqq=10956 supsim=10952 supsub=10964 supsup=10966 swArr=8665 swarhk=10534 swarr=8601
swarrow=8601 swnwar=10538 szlig=223 target=8982 tau=964 tbrk=9140 tcaron=357 tcedil=355 tcy=1090 tdot=8411
telrec=8981 tfr=120113 there4=8756 therefore=8756 theta=952 thetasym=977 thetav=977 thickapprox=8776
thicksim=8764 thinsp=8201 thkap=8776 thksim=8764 thorn=254 tilde=732 times=215 timesb=8864 timesbar=10801
timesd=10800 tint=8749 toea=10536 top=8868 topbot=9014 topcir=10993 topf=120165 topfork=10970 tosa=10537
tprime=8244 trade=8482 triangle=9653 triangledown=9663 triangleleft=9667 trianglelefteq=8884 triangleq=8796
triangleright=9657 trianglerighteq=8885 tridot=9708 trie=8796 triminus=10810 triplus=10809 trisb=10701
tritime=10811 trpezium=9186 tscr=120009 tscy=1094 tshcy=1115 tstrok=359 twixt=8812 twoheadleftarrow=8606
twoheadrightarrow=8608 uArr=8657 uHar=10595 uacute=250 uarr=8593 ubrcy=1118 ubreve=365 ucirc=251 ucy=1091
udarr=8645 udblac=369 udhar=10606 ufisht=10622 ufr=120114 ugrave=249 uharl=8639 uharr=8638 uhblk=9600
ulcorn=8988 ulcorner=8988 ulcrop=8975 ultri=9720 umacr=363 uml=168 uogon=371 uopf=120166 uparrow=8593
updownarrow=8597 upharpoonleft=8639 upharpoonright=8638 uplus=8846 upsi=965 upsih=978 upsilon=965
upuparrows=8648 urcorn=8989 urcorner=8989 urcrop=8974 uring=367 urtri=9721 uscr=120010 utdot=8944 utilde=361
utri=9653 utrif=9652 uuarr=8648 uuml=252 uwangle=10663 vArr=8661 vBar=10984 vBarv=10985 vDash=8872
vangrt=10652 varepsilon=1013 varkappa=1008 varnothing=8709 varphi=981 varpi=982 varpropto=8733 varr=8597
varrho=1009 varsigma=962 varsubsetneq=8842,65024 varsubsetneqq=10955,65024 varsupsetneq=8843,65024
varsupsetneqq=10956,65024 vartheta=977 vartriangleleft=8882 vartriangleright=8883 vcy=1074 vdash=8866 vee=8744
veebar=8891 veeeq=8794 vellip=8942 verbar=124 vert=124 vfr=120115 vltri=8882 vnsub=8834,8402 vnsup=8835,8402
vopf=120167 vprop=8733 vrtri=8883 vscr=120011 vsubnE=10955,65024 vsubne=8842,65024 vsupnE=10956,65024
vsupne=8843,65024 vzigzag=10650 wcirc=373 wedbar=10847 wedge=8743 wedgeq=8793 weierp=8472 wfr=120116
wopf=120168 wp=8472 wr=8768 wreath=8768 wscr=120012 xcap=8898 xcirc=9711 xcup=8899 xdtri=9661 xfr=120117
xhArr=10234 xharr=10231 xi=958 xlArr=10232 xlarr=10229 xmap=10236 xnis=8955 xodot=10752 xopf=120169
xoplus=10753 xotime=10754 xrArr=10233 xrarr=10230 xscr=120013 xsqcup=10758 xuplus=10756 xutri=9651 xvee=8897
xwedge=8896 yacute=253 yacy=1103 ycirc=375 ycy=1099 yen=165 yfr=120118 yicy=1111 yopf=120170 yscr=120014
yucy=1102 yuml=255 zacute=378 zcaron=382 zcy=1079 zdot=380 zeetrf=8488 zeta=950 zfr=120119 zhcy=1078
zigrarr=8669 zopf=120171 zscr=120015 zwj=8205
"""
}
