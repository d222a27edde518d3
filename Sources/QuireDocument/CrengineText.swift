import QuireCore
import QuireXML

// KOReader's XPointers (`…/p[3]/text()[2].42`) count text nodes and characters of the DOM that
// crengine builds, which is not libxml2's: crengine cuts text at every `<` (so a comment splits a
// node), cuts runs longer than 8,192 source characters, collapses white space outside `pre`,
// expands `pre` tabs, and drops some white-space-only nodes while parsing and some more when it
// first renders. This file rebuilds those nodes from the document's source bytes, following
// crengine's code (koreader/crengine, read at 05b2098f):
//   - node boundaries and the 8,192 split: `LVXMLParser::ReadText` (src/lvxml.cpp);
//   - entity decoding, collapsing: `PreProcessXmlString`; tabs: `ExpandTabs` (src/lvxml.cpp);
//   - which text the DOM keeps: `ldomElementWriter::onText`, `_allowText` (include/fb2def.h),
//     `_stripLeadingNewlineChar` (src/lvtinydom.cpp);
//   - what rendering removes: `removeStandaloneWhitespaceTextChildrenInMixedContent` and
//     `cleanIfOnlyEmptyTextInline`, called from `ldomNode::initNodeRendMethod` (src/lvtinydom.cpp).
// Not modelled (rare in books; such pointers fall back to counting the DOM): the whitespace
// removed around a block inside an inline element ("EmbeddedBlock"), run-in, and documents
// read by the HTML parser or in another encoding than UTF-8.
// Each crengine node is tied to the span of Quire's text (UTF-16 offsets) it came from, so a
// position converts both ways.

/// What crengine's CSS decides for one element, computed by the caller from the cascade.
public struct CrengineStyle: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `display` is neither inline nor none, inline-block included: crengine's `isBlockNode()`,
    /// which decides for the element's own content.
    public static let block = CrengineStyle(rawValue: 1)
    /// `display` is inline-level (inline-block too): rendered `erm_inline` among its siblings.
    public static let inline = CrengineStyle(rawValue: 2)
    /// `white-space` is pre-line, pre, pre-wrap or break-spaces (crengine's `TXTFLG_PRE`).
    public static let pre = CrengineStyle(rawValue: 4)
    /// `float` is not none.
    public static let floating = CrengineStyle(rawValue: 8)
    /// A `::before` with content: crengine inserts its pseudoElem as the first child.
    public static let before = CrengineStyle(rawValue: 16)
    public static let after = CrengineStyle(rawValue: 32)
    /// `white-space` is pre, pre-wrap or break-spaces (`cleanIfOnlyEmptyTextInline` leaves these alone).
    public static let preserved = CrengineStyle(rawValue: 64)
}

/// crengine's text nodes of one content document, each tied to the Quire text it came from.
public struct CrengineText: Sendable {
    public struct Node: Sendable {
        /// The element holding the node (crengine's boxing elements are transparent in XPointers).
        public var parent: NodeID
        /// The node's span in Quire's text (UTF-16 offsets).
        public var start: Int
        public var end: Int
        /// For each character of crengine's text, the Quire offset it stands for.
        public var offsets: [Int32]
        /// 1-based among the parent's kept text nodes, and how many the parent keeps.
        public var index: Int = 0
        public var siblings: Int = 0
        var isWhitespace: Bool

        public var length: Int { offsets.count }
    }

    /// The nodes crengine keeps, in document order.
    public let nodes: [Node]

    /// Builds crengine's nodes, or nil when the source can't be followed the way crengine reads
    /// it (not UTF-8, read by the HTML parser, or a mismatch with Quire's text).
    public init?(_ text: DocumentText, styles: [CrengineStyle]) {
        let document = text.document
        guard let body = document.body, !document.source.isEmpty, !document.readAsHTML, styles.count == document.tree.nodeCount,
            var builder = Builder(text: text, styles: styles, body: body.id)
        else { return nil }
        guard builder.scan() else { return nil }
        nodes = builder.finish()
    }

    /// The node holding a Quire offset and the crengine character there; positions in text crengine
    /// dropped move on to the next node it keeps.
    public func location(at offset: Int) -> (node: Int, character: Int)? {
        var low = 0
        var high = nodes.count
        while low < high {  // first node ending after `offset`
            let middle = (low + high) / 2
            if nodes[middle].end <= offset { low = middle + 1 } else { high = middle }
        }
        guard low < nodes.count else {
            guard let last = nodes.indices.last else { return nil }
            return (last, nodes[last].length)
        }
        let node = nodes[low]
        // The first character standing at or after the offset (a collapsed space names the next one).
        let character = node.offsets.firstIndex(where: { Int($0) >= offset }) ?? node.length
        return (low, character)
    }

    /// The Quire offset of crengine's `character` in the `index`-th (1-based) kept text node of `parent`.
    public func offset(parent: NodeID, index: Int, character: Int) throws -> Int {
        guard let node = nodes.first(where: { $0.parent == parent && $0.index == index }) else {
            let count = nodes.first(where: { $0.parent == parent })?.siblings ?? 0
            throw QuireError.unresolvable("XPointer text()[\(index)] does not exist (the element has \(count) text nodes)")
        }
        guard character >= 0, character <= node.length else {
            throw QuireError.unresolvable("XPointer offset .\(character) is past the end of its text node (\(node.length) characters)")
        }
        return character < node.length ? Int(node.offsets[character]) : node.end
    }
}

extension CrengineText {
    /// A node while the source is read: crengine's characters and the element's child count so far.
    fileprivate struct Pending {
        var parent: NodeID
        var start: Int
        var end: Int
        var offsets: [Int32]
        /// Only spaces, tabs and line breaks (or nothing).
        var isWhitespace: Bool
        /// Its first character is a line feed (which a `pre` may strip).
        var startsWithNewline: Bool
    }

    /// One child of an element as crengine's renderer sees it.
    fileprivate enum Child {
        case text(Int)  // index into `pending`
        case element(CrengineStyle)
        case pseudo
    }

    fileprivate enum Literal {
        static let commentOpen = Array("<!--".unicodeScalars)
        static let commentClose = Array("-->".unicodeScalars)
        static let cdataOpen = Array("<![CDATA[".unicodeScalars)
        static let cdataClose = Array("]]>".unicodeScalars)
        static let piOpen = Array("<?".unicodeScalars)
        static let piClose = Array("?>".unicodeScalars)
        static let declarationOpen = Array("<!".unicodeScalars)
        static let endTag = Array("</".unicodeScalars)
        static let tagClose = Array(">".unicodeScalars)
    }

    fileprivate struct Builder {
        let units: [UInt16]
        let tree: XMLTree
        /// The caller's styles, adjusted as elements open (SVG content, hidden subtrees).
        var styles: [CrengineStyle]
        /// Elements whose text the DOM writer refuses, and elements in a `display: none` subtree
        /// (rendering leaves those alone).
        var refusesText: [Bool]
        var hidden: [Bool]
        let body: NodeID
        let source: [Unicode.Scalar]
        /// Quire's elements in document order: the n-th start tag in the source is the n-th here.
        let elements: [NodeID]
        var pending: [Pending] = []
        var dropped: Set<Int> = []
        /// Every element's children for the renderer's pass, in document order, and how many each has so far.
        var events: [(parent: Int32, child: Child)] = []
        var childCounts: [Int32]
        /// Elements whose first text may still lose a leading newline (`pre`, `textarea`).
        var stripsNewline: Set<Int32> = []
        /// Elements in an `<svg>`.
        var svgDepth: Set<Int32> = []
        /// Where Quire's text stands while reading body text.
        var cursor = 0

        init?(text: DocumentText, styles: [CrengineStyle], body: NodeID) {
            let document = text.document
            units = text.units
            tree = document.tree
            self.styles = styles
            self.body = body
            var scalars = Self.decode(document.source)
            if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
            // A declared encoding other than UTF-8 is decoded by libxml2 in ways not followed here.
            if Self.declaresOtherEncoding(scalars) { return nil }
            source = scalars
            let tree = document.tree
            var elements: [NodeID] = []
            for index in 0..<Int32(tree.nodeCount) where tree.kind(of: NodeID(index)) == .element { elements.append(NodeID(index)) }
            self.elements = elements
            childCounts = [Int32](repeating: 0, count: tree.nodeCount)
            refusesText = [Bool](repeating: false, count: tree.nodeCount)
            hidden = [Bool](repeating: false, count: tree.nodeCount)
        }

        /// Whether the XML declaration in the first 200 characters names an encoding, and not
        /// UTF-8. Read as ASCII, lowercased (the words looked for are ASCII): building a `String`
        /// of those characters, lowercasing and splitting it cost 2% of a book's map-only layout.
        static func declaresOtherEncoding(_ scalars: [Unicode.Scalar]) -> Bool {
            let head = scalars.prefix(200).map { scalar -> UInt8 in
                guard scalar.isASCII else { return 0xFF }
                let byte = UInt8(scalar.value)
                return (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            }
            guard head.starts(with: "<?xml".utf8) else { return false }
            let declaration = head.prefix { $0 != UInt8(ascii: ">") }
            func has(_ word: String) -> Bool {
                let word = Array(word.utf8)
                return declaration.indices.contains { declaration[$0...].starts(with: word) }
            }
            return has("encoding") && !has("utf-8") && !has("utf8")
        }

        /// The source's scalars (ill-formed UTF-8 as U+FFFD, as the standard library's repairing
        /// decoder gives it): ASCII, most of a book's markup and text, is copied byte by byte.
        static func decode(_ bytes: [UInt8]) -> [Unicode.Scalar] {
            guard !bytes.isEmpty else { return [] }
            // Never more scalars than bytes (a repaired byte is one U+FFFD).
            return [Unicode.Scalar](unsafeUninitializedCapacity: bytes.count) { scalars, written in
                written = 0
                bytes.withUnsafeBufferPointer { buffer in
                    var index = 0
                    let count = buffer.count
                    while index < count {
                        // A run of ASCII (eight bytes at a time, widened together), then whatever
                        // follows it through the standard decoder.
                        while index + 8 <= count, let ascii = UTF8Words.ascii(buffer, at: index) {
                            UnsafeMutableRawPointer(scalars.baseAddress! + written).storeBytes(
                                of: SIMD8<UInt32>(truncatingIfNeeded: ascii), as: SIMD8<UInt32>.self)
                            written += 8
                            index += 8
                        }
                        while index < count, buffer[index] < 0x80 {
                            scalars.initializeElement(at: written, to: Unicode.Scalar(buffer[index]))
                            written += 1
                            index += 1
                        }
                        guard index < count else { break }
                        var end = index + 1
                        while end < count, buffer[end] >= 0x80 { end += 1 }
                        _ = transcode(
                            UnsafeBufferPointer(rebasing: buffer[index..<end]).makeIterator(), from: UTF8.self, to: UTF32.self,
                            stoppingOnError: false
                        ) {
                            scalars.initializeElement(at: written, to: Unicode.Scalar($0) ?? "\u{FFFD}")
                            written += 1
                        }
                        index = end
                    }
                }
            }
        }

        /// An element's local name from its qualified name's scalars (after the last colon).
        static func localName(_ name: ArraySlice<Unicode.Scalar>) -> String {
            let local = name.lastIndex(of: ":").map { name[($0 + 1)...] } ?? name
            // Built from UTF-8 (appending scalars to a String's scalar view costs thousands of
            // instructions a name), in a temporary buffer: a short name's String needs no storage.
            if local.allSatisfy(\.isASCII) {
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: local.count) { bytes in
                    for (index, scalar) in local.enumerated() { bytes[index] = UInt8(scalar.value) }
                    return String(decoding: bytes, as: UTF8.self)
                }
            }
            var bytes: [UInt8] = []
            for scalar in local { bytes.append(contentsOf: String(scalar).utf8) }
            return String(decoding: bytes, as: UTF8.self)
        }

        // MARK: Reading the source as LVXMLParser does

        mutating func scan() -> Bool {
            var stack: [NodeID] = []
            var ordinal = 0
            var insideBody = 0  // depth of open elements at and under body
            var index = 0
            let count = source.count
            let source = self.source
            func starts(_ literal: [Unicode.Scalar], at position: Int) -> Bool {
                guard position + literal.count <= count else { return false }
                for (index, scalar) in literal.enumerated() where source[position + index] != scalar { return false }
                return true
            }
            func find(_ literal: [Unicode.Scalar], from position: Int) -> Int? {
                var position = position
                while position < count {
                    if source[position] == literal[0], starts(literal, at: position) { return position }
                    position += 1
                }
                return nil
            }
            while index < count {
                if source[index] != "<" {
                    var end = index
                    while end < count, source[end] != "<" { end += 1 }
                    if insideBody > 0, let parent = stack.last {
                        guard readText(source[index..<end], parent: parent, cdata: false) else { return false }
                    }
                    index = end
                    continue
                }
                if starts(Literal.commentOpen, at: index) {
                    guard let end = find(Literal.commentClose, from: index + 4) else { return false }
                    index = end + 3
                } else if starts(Literal.cdataOpen, at: index) {
                    guard let end = find(Literal.cdataClose, from: index + 9) else { return false }
                    if insideBody > 0, let parent = stack.last {
                        guard readText(source[(index + 9)..<end], parent: parent, cdata: true) else { return false }
                    }
                    index = end + 3
                } else if starts(Literal.piOpen, at: index) {
                    guard let end = find(Literal.piClose, from: index + 2) else { return false }
                    index = end + 2
                } else if starts(Literal.declarationOpen, at: index) {
                    // DOCTYPE, with an internal subset in brackets.
                    var depth = 0
                    var position = index + 2
                    while position < count {
                        let scalar = source[position]
                        if scalar == "[" { depth += 1 } else if scalar == "]" { depth -= 1 } else if scalar == ">", depth <= 0 { break }
                        position += 1
                    }
                    index = position + 1
                } else if starts(Literal.endTag, at: index) {
                    guard let end = find(Literal.tagClose, from: index + 2), !stack.isEmpty else { return false }
                    // crengine's tag reader wants a space, CR, LF, `/`, `>`, `?` or `=` after a name:
                    // `</a\t>` is dropped, and `a` stays open until an end tag of an element around
                    // it closes it too (its text after the tag is the a's in crengine's tree).
                    let name = source[(index + 2)..<end].prefix { !$0.isXMLWhitespace && $0 != "/" }
                    let after = index + 2 + name.count
                    let dropped = after < end && !["\u{20}", "\r", "\n", "/", "?", "="].contains(source[after])
                    let local = Self.localName(name)
                    if !dropped, let open = stack.lastIndex(where: { tree.element($0)?.localName == local }) {
                        while stack.count > open {
                            let closed = stack.removeLast()
                            if insideBody > 0 { insideBody -= 1 }
                            stripsNewline.remove(closed.index)
                        }
                    }
                    index = end + 1
                } else {
                    // A start tag: its name, then attributes (quoted values may hold `>`).
                    var position = index + 1
                    var quote: Unicode.Scalar?
                    while position < count {
                        let scalar = source[position]
                        if let open = quote {
                            if scalar == open { quote = nil }
                        } else if scalar == "\"" || scalar == "'" {
                            quote = scalar
                        } else if scalar == ">" {
                            break
                        }
                        position += 1
                    }
                    guard position < count, ordinal < elements.count else { return false }
                    let selfClosing = source[position - 1] == "/"
                    let element = elements[ordinal]
                    ordinal += 1
                    let local = Self.localName(source[(index + 1)..<position].prefix { !$0.isXMLWhitespace && $0 != "/" && $0 != ">" })
                    guard tree.element(element)?.localName == local else { return false }
                    if let parent = stack.last, insideBody > 0 {
                        append(.element(styles[Int(element.index)]), to: parent.index)
                        stripsNewline.remove(parent.index)
                    }
                    if element == body || insideBody > 0 {
                        insideBody += 1
                        open(element, name: local, parent: element == body ? nil : stack.last)
                    }
                    if selfClosing {
                        if insideBody > 0 { insideBody -= 1 }
                        closeElement(element)
                    } else {
                        stack.append(element)
                    }
                    index = position + 1
                }
            }
            // Every character of Quire's body text must have been met, in order.
            return cursor == units.count
        }

        /// An element of the body opens: what the writer decides before its content.
        mutating func open(_ element: NodeID, name: String, parent: NodeID?) {
            let index = Int(element.index)
            let inSVG = name == "svg" || parent.map { svgDepth.contains($0.index) } ?? false
            if inSVG {
                svgDepth.insert(element.index)
                // Inside SVG only these keep text, and keep it as written.
                refusesText[index] = !Self.svgText.contains(name)
                if !refusesText[index] { styles[index].insert(.pre) }
            } else {
                refusesText[index] = Self.refusesText.contains(name.lowercased())
            }
            hidden[index] = parent.map { hidden[Int($0.index)] } ?? false || styles[index].isDisjoint(with: [.block, .inline])
            // Both pseudo-elements exist before any text: either makes the element's first text no first child.
            if styles[index].contains(.before) { append(.pseudo, to: element.index) }
            if styles[index].contains(.after) { childCounts[index] += 1 }
            if name == "pre" || name == "textarea" { stripsNewline.insert(element.index) }
        }

        mutating func append(_ child: Child, to parent: Int32) {
            events.append((parent, child))
            childCounts[Int(parent)] += 1
        }

        mutating func closeElement(_ element: NodeID) {
            stripsNewline.remove(element.index)
        }

        /// One run of text between two `<`: cut as ReadText cuts it, each piece a node.
        mutating func readText(_ run: ArraySlice<Unicode.Scalar>, parent: NodeID, cdata: Bool) -> Bool {
            var rest = run
            while rest.count >= Self.splitSize {
                let window = rest.prefix(Self.splitSize)
                var cut = window.endIndex
                var position = window.endIndex - 1
                while position >= window.startIndex {
                    let scalar = window[position]
                    if scalar == " " {
                        cut = position + 1
                        break
                    }
                    if scalar == "\r" || scalar == "\n" {
                        let next: Unicode.Scalar = position + 1 < window.endIndex ? window[position + 1] : "\0"
                        if (scalar == "\r" && next != "\n") || (scalar == "\n" && next != "\r") {
                            cut = position + 1
                            break
                        }
                    }
                    position -= 1
                }
                guard readChunk(rest[rest.startIndex..<cut], parent: parent, cdata: cdata) else { return false }
                rest = rest[cut...]
            }
            return rest.isEmpty || readChunk(rest, parent: parent, cdata: cdata)
        }

        static let splitSize = 8192

        /// One text chunk: where each source character lands in Quire's text (libxml2's decoding,
        /// checked against it), then crengine's processing of the same characters.
        mutating func readChunk(_ chunk: ArraySlice<Unicode.Scalar>, parent: NodeID, cdata: Bool) -> Bool {
            let style = styles[Int(parent.index)]
            if !cdata, !style.contains(.pre), let plain = plainChunk(chunk) {
                let node = Pending(
                    parent: parent, start: cursor, end: plain.end, offsets: plain.offsets, isWhitespace: plain.isWhitespace,
                    startsWithNewline: false)
                cursor = plain.end
                insert(node, style: style)
                return true
            }
            let raw = Array(chunk)
            guard let positions = quirePositions(raw, cdata: cdata) else { return false }
            let start = cursor
            cursor = positions.last.map { Int($0) } ?? cursor
            var (characters, offsets) = Self.process(raw, positions: positions, pre: style.contains(.pre), cdata: cdata)
            if style.contains(.pre), characters.contains("\t") { (characters, offsets) = Self.expandTabs(characters, offsets) }
            let node = Pending(
                parent: parent, start: start, end: cursor, offsets: offsets, isWhitespace: characters.allSatisfy(Self.isSpace),
                startsWithNewline: characters.first == "\n")
            insert(node, style: style)
            return true
        }

        /// `quirePositions` and `process` in one pass for the usual chunk outside `pre`: no entity
        /// and no carriage return (nil when it has one, or when its text isn't Quire's, for the
        /// general path to decide). Line breaks and tabs are spaces, and each run of spaces is kept
        /// as its first.
        func plainChunk(_ chunk: ArraySlice<Unicode.Scalar>) -> (offsets: [Int32], end: Int, isWhitespace: Bool)? {
            var offset = cursor
            var isWhitespace = true
            var finished = true
            // Written in place (never more offsets than characters): appending checked the
            // array's storage at every character of the book.
            let units = self.units  // (the closure then holds this array, not a copy of the builder)
            let offsets = [Int32](capacity: chunk.count) { buffer in
                var written = 0
                var inSpaces = false
                var sawText = false
                finished = units.withUnsafeBufferPointer { units in
                    chunk.withUnsafeBufferPointer { raw in
                        for scalar in raw {
                            let value = scalar.value
                            // Nearly every character: above `&` (and so neither a space, a
                            // newline, a tab nor a carriage return) and below U+10000.
                            if value > 0x26 && value < 0x10000 {
                                guard offset < units.count, units[offset] == UInt16(truncatingIfNeeded: value) else { return false }
                                buffer[written] = Int32(truncatingIfNeeded: offset)
                                written &+= 1
                                offset &+= 1
                                inSpaces = false
                                sawText = true
                                continue
                            }
                            if value == 0x26 || value == 0x0D { return false }
                            let at = Int32(offset)
                            if value < 0x10000 {
                                guard offset < units.count, units[offset] == UInt16(value) else { return false }
                                offset += 1
                            } else {
                                guard offset + 1 < units.count, units[offset] == UInt16(0xD800 + ((value - 0x10000) >> 10)),
                                    units[offset + 1] == UInt16(0xDC00 + ((value - 0x10000) & 0x3FF))
                                else { return false }
                                offset += 2
                            }
                            if value == 0x20 || value == 0x0A || value == 0x09 {
                                if !inSpaces {
                                    buffer[written] = at
                                    written += 1
                                }
                                inSpaces = true
                            } else {
                                buffer[written] = at
                                written += 1
                                inSpaces = false
                                isWhitespace = false
                            }
                        }
                        return true
                    }
                }
                if sawText { isWhitespace = false }
                return finished ? written : 0
            }
            return finished ? (offsets, offset, isWhitespace) : nil
        }

        /// `positions[i]`: the Quire offset where source character i's text begins; one extra
        /// entry for the end. Nil when the decoded text isn't Quire's.
        mutating func quirePositions(_ raw: [Unicode.Scalar], cdata: Bool) -> [Int32]? {
            var positions = [Int32](filling: 0, count: raw.count + 1)
            var offset = cursor
            var index = 0
            func expect(_ scalar: Unicode.Scalar) -> Bool {
                let value = scalar.value
                if value < 0x10000 {
                    guard offset < units.count, units[offset] == UInt16(value) else { return false }
                    offset += 1
                    return true
                }
                let high = UInt16(0xD800 + ((value - 0x10000) >> 10))
                let low = UInt16(0xDC00 + ((value - 0x10000) & 0x3FF))
                guard offset + 1 < units.count, units[offset] == high, units[offset + 1] == low else { return false }
                offset += 2
                return true
            }
            while index < raw.count {
                let scalar = raw[index]
                positions[index] = Int32(offset)
                if scalar == "&", !cdata, let semicolon = raw[index...].prefix(40).firstIndex(of: ";") {
                    let name = String(String.UnicodeScalarView(raw[(index + 1)..<semicolon]))
                    guard let decoded = Self.entity(name) else { return nil }
                    for position in index...semicolon { positions[position] = Int32(offset) }
                    for scalar in decoded { guard expect(scalar) else { return nil } }
                    index = semicolon + 1
                    continue
                }
                if scalar == "\r" {  // XML end-of-line handling: CRLF and lone CR become LF
                    if index + 1 < raw.count, raw[index + 1] == "\n" {
                        index += 1
                        continue
                    }
                    guard expect("\n") else { return nil }
                } else {
                    guard expect(scalar) else { return nil }
                }
                index += 1
            }
            positions[raw.count] = Int32(offset)
            return positions
        }

        static func entity(_ name: String) -> [Unicode.Scalar]? {
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                return UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { [$0] }
            }
            if name.hasPrefix("#") { return UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { [$0] } }
            switch name {
            case "amp": return ["&"]
            case "lt": return ["<"]
            case "gt": return [">"]
            case "quot": return ["\""]
            case "apos": return ["'"]
            default: return XMLParser.characterEntity(name).map { [$0] }
            }
        }

        /// `PreProcessXmlString`: entities decoded, and outside `pre` CR, LF and TAB made spaces and
        /// each run of spaces kept as one (a decoded entity ends a run).
        static func process(_ raw: [Unicode.Scalar], positions: [Int32], pre: Bool, cdata: Bool)
            -> (characters: [Unicode.Scalar], offsets: [Int32])
        {
            var characters: [Unicode.Scalar] = []
            var offsets: [Int32] = []
            characters.reserveCapacity(raw.count)
            offsets.reserveCapacity(raw.count)
            var spaces = 0
            var last: Unicode.Scalar = "\0"
            var state = 0  // 0 text, 1 after `&`, 2 after `&#`, 22 after `&#x`
            var number: UInt32 = 0
            var entityStart = 0
            var index = 0
            func emit(_ scalar: Unicode.Scalar, _ source: Int) {
                characters.append(scalar)
                offsets.append(positions[source])
            }
            while index < raw.count {
                var scalar = raw[index]
                if state == 0 {
                    if scalar.value <= 0x26 {
                        if pre {
                            if scalar == "\r" {
                                if (index == 0 || last != "\n") && (index == raw.count - 1 || raw[index + 1] != "\n") {
                                    emit("\n", index)
                                    last = "\n"
                                }
                                index += 1
                                continue
                            } else if scalar == "\n" {
                                emit("\n", index)
                                last = scalar
                                index += 1
                                continue
                            }
                        } else if scalar == "\r" || scalar == "\n" || scalar == "\t" {
                            scalar = " "
                        }
                        if scalar == "&" && !cdata {
                            number = 0
                            if pre { last = scalar }
                            state = 1
                            entityStart = index
                            index += 1
                            continue
                        }
                        if scalar == " " {
                            if pre || spaces == 0 { emit(" ", index) }
                            spaces += 1
                            if pre { last = scalar }
                            index += 1
                            continue
                        }
                    }
                    emit(scalar, index)
                    spaces = 0
                    if pre { last = scalar }
                    index += 1
                    continue
                }
                // Inside an entity reference.
                let value = scalar.value
                let hex: UInt32? =
                    switch value {
                    case 0x30...0x39: value - 0x30
                    case 0x41...0x46: value - 0x41 + 10
                    case 0x61...0x66: value - 0x61 + 10
                    default: nil
                    }
                if state == 2 && scalar == "x" {
                    state = 22
                } else if state == 22, let hex {
                    number = number << 4 | hex
                } else if state == 2, (0x30...0x39).contains(value) {
                    number = number &* 10 &+ (value - 0x30)
                } else if scalar == "#" && state == 1 {
                    state = 2
                } else if state == 1, (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) {
                    var length = 0
                    while length < 32, index + length < raw.count, raw[index + length] != ";", raw[index + length] != " " { length += 1 }
                    if length == 32 { length = 31 }
                    var decoded: [Unicode.Scalar]?
                    if index + length < raw.count, raw[index + length] == ";" || raw[index + length] == " " {
                        decoded = entity(String(String.UnicodeScalarView(raw[index..<(index + length)])))
                    }
                    if let decoded, !decoded.isEmpty {
                        index += length
                        for scalar in decoded { emit(scalar, entityStart) }
                        spaces = 0
                    } else {
                        emit("&", entityStart)
                        emit(scalar, index)
                    }
                    state = 0
                } else if scalar == ";" {
                    if number != 0, let decoded = Unicode.Scalar(number) { emit(decoded, entityStart) }
                    state = 0
                    spaces = 0
                } else {
                    state = 0
                }
                if state == 0, pre { last = scalar }
                index += 1
            }
            return (characters, offsets)
        }

        /// `ExpandTabs`: a tab fills to the next multiple of 8 columns, counted from the node's start;
        /// after a line break the column restarts at 0 and the break itself counts one.
        static func expandTabs(_ characters: [Unicode.Scalar], _ offsets: [Int32]) -> ([Unicode.Scalar], [Int32]) {
            var outCharacters: [Unicode.Scalar] = []
            var outOffsets: [Int32] = []
            var column = 0
            for (scalar, offset) in zip(characters, offsets) {
                if scalar == "\r" || scalar == "\n" { column = 0 }
                if scalar == "\t" {
                    let delta = 8 - (column & 7)
                    column += delta
                    outCharacters += repeatElement(" ", count: delta)
                    outOffsets += repeatElement(offset, count: delta)
                } else {
                    outCharacters.append(scalar)
                    outOffsets.append(offset)
                    column += 1
                }
            }
            return (outCharacters, outOffsets)
        }

        static func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\r" || scalar == "\n" || scalar == "\t" }

        /// Elements whose text crengine's DOM writer refuses: `_allowText` false in include/fb2def.h
        /// (`XS_TAG1`, `XS_TAG1OBJ` and the `XS_TAG1D(…, false, …)` entries).
        static let refusesText: Set<String> = [
            "table", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "base", "basefont", "bgsound", "meta", "link", "html", "head",
            "svg", "object", "embed", "img", "image", "applet", "area", "track", "input", "keygen", "param", "audio", "source",
            "description", "annotation", "author", "coverpage", "epigraph", "part", "poem", "stanza", "fictionbook",
        ]
        /// Inside `<svg>`, the elements that keep text (as preformatted).
        static let svgText: Set<String> = ["style", "text", "tspan", "textPath", "title", "desc", "metadata"]

        /// `ldomElementWriter::onText`: white space alone as the first child of a block that isn't
        /// pre is dropped; a `pre` or `textarea` loses one newline at the start of its first text.
        mutating func insert(_ node: Pending, style: CrengineStyle) {
            var node = node
            let parent = node.parent.index
            let siblings = childCounts[Int(parent)]
            if refusesText[Int(parent)] { return }
            if style.contains(.block), siblings == 0, !style.contains(.pre), node.isWhitespace { return }
            if stripsNewline.contains(parent) {
                // Losing a leading newline leaves white space white space, and text text.
                if siblings == 0, node.startsWithNewline {
                    node.offsets.removeFirst()
                }
                stripsNewline.remove(parent)
            }
            pending.append(node)
            append(.text(pending.count - 1), to: parent)
        }

        // MARK: What rendering removes

        /// Runs the renderer's removals and numbers the nodes each element keeps.
        mutating func finish() -> [Node] {
            // Group the children by parent (a counting sort keeps document order).
            var grouping = [Int](repeating: 0, count: childCounts.count)
            for (parent, _) in events { grouping[Int(parent)] += 1 }
            var starts = [Int](repeating: 0, count: grouping.count + 1)
            for (index, count) in grouping.enumerated() { starts[index + 1] = starts[index] + count }
            var fill = starts
            var grouped = [Child](repeating: .pseudo, count: events.count)
            for (parent, child) in events {
                grouped[fill[Int(parent)]] = child
                fill[Int(parent)] += 1
            }
            for parent in grouping.indices where grouping[parent] > 0 {
                var list = Array(grouped[starts[parent]..<starts[parent + 1]])
                // Only mixed content with white space, or floats beside white space, loses anything.
                guard !hidden[parent], list.contains(where: isWhitespace) else { continue }
                if styles[parent].contains(.after) { list.append(.pseudo) }
                removeWhitespace(in: list, parentStyle: styles[parent])
            }
            var result: [Node] = []
            var counts: [Int32: Int] = [:]
            for (index, node) in pending.enumerated() where !dropped.contains(index) {
                counts[node.parent.index, default: 0] += 1
                result.append(
                    Node(
                        parent: node.parent, start: node.start, end: node.end, offsets: node.offsets, index: counts[node.parent.index]!,
                        isWhitespace: node.isWhitespace))
            }
            for index in result.indices { result[index].siblings = counts[result[index].parent.index] ?? 0 }
            return result
        }

        /// A block inside an inline element is boxed as an "EmbeddedBlock" inlineBox, and one
        /// white-space node on each side of it goes (`initNodeRendMethod`, BOX_INLINE_BLOCKS), when
        /// the element also holds inline content.
        mutating func removeWhitespaceAroundEmbeddedBlocks(in list: [Child]) {
            func isBlock(_ child: Child) -> Bool {
                if case .element(let style) = child { return style.contains(.block) && !style.contains(.inline) && !style.contains(.floating) }
                return false
            }
            guard list.contains(where: isBlock) else { return }
            let hasInline = list.contains { child in
                switch child {
                case .text: return !isWhitespace(child)
                case .pseudo: return true
                case .element(let style): return style.contains(.inline)
                }
            }
            guard hasInline else { return }
            var removed = Set<Int>()
            for index in list.indices where isBlock(list[index]) {
                var next = index + 1
                while removed.contains(next) { next += 1 }
                if next < list.count, case .text(let node) = list[next], isWhitespace(list[next]) {
                    dropped.insert(node)
                    removed.insert(next)
                }
                var previous = index - 1
                while removed.contains(previous) { previous -= 1 }
                if previous >= 0, case .text(let node) = list[previous], isWhitespace(list[previous]) {
                    dropped.insert(node)
                    removed.insert(previous)
                }
            }
        }

        func isWhitespace(_ child: Child) -> Bool {
            if case .text(let index) = child { return pending[index].isWhitespace }
            return false
        }

        /// `isInlineNode`: text, a pseudo-element, or an element rendered inline (not floating).
        func isInline(_ child: Child) -> Bool {
            switch child {
            case .text, .pseudo: return true
            case .element(let style): return style.contains(.inline) && !style.contains(.floating)
            }
        }

        func isFloating(_ child: Child) -> Bool {
            if case .element(let style) = child { return style.contains(.floating) }
            return false
        }

        mutating func removeWhitespace(in list: [Child], parentStyle: CrengineStyle) {
            if parentStyle.contains(.inline) && !parentStyle.contains(.block) {
                removeWhitespaceAroundEmbeddedBlocks(in: list)
                return
            }
            guard parentStyle.contains(.block) else { return }
            // detectChildTypes: text is inline content; floats are apart; hidden elements don't count.
            var hasBlock = false
            var hasInline = false
            var hasFloating = false
            for child in list {
                switch child {
                case .text, .pseudo: hasInline = true
                case .element(let style):
                    if style.contains(.floating) { hasFloating = true }
                    else if style.contains(.inline) { hasInline = true }
                    else if style.contains(.block) { hasBlock = true }
                }
            }
            if hasBlock && hasInline {
                // removeStandaloneWhitespaceTextChildrenInMixedContent: a white-space run stays only
                // between inline-ish siblings, one of them inline.
                var index = 0
                while index < list.count {
                    guard isWhitespace(list[index]) else {
                        index += 1
                        continue
                    }
                    var end = index
                    while end + 1 < list.count, isWhitespace(list[end + 1]) { end += 1 }
                    let previous = index > 0 ? list[index - 1] : nil
                    let next = end + 1 < list.count ? list[end + 1] : nil
                    let previousInlineish = previous.map { isInline($0) || isFloating($0) } ?? false
                    let nextInlineish = next.map { isInline($0) || isFloating($0) } ?? false
                    let keep = previousInlineish && nextInlineish && (isInline(previous!) || isInline(next!))
                    if !keep {
                        for position in index...end { if case .text(let node) = list[position] { dropped.insert(node) } }
                    }
                    index = end + 1
                }
            } else if !hasBlock && hasInline && hasFloating && !parentStyle.contains(.preserved) {
                // cleanIfOnlyEmptyTextInline: inline content that is only white space beside floats goes.
                let onlySpace = list.allSatisfy { child in
                    switch child {
                    case .text: return isWhitespace(child)
                    case .element(let style): return style.contains(.floating)
                    case .pseudo: return false
                    }
                }
                if onlySpace { for child in list { if case .text(let node) = child { dropped.insert(node) } } }
            }
        }
    }
}
