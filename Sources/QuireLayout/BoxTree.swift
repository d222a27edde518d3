import QuireContainer
import QuireCore
import QuireDocument
import QuireStyle
import QuireText
import QuireXML

/// The styled tree layout works on: blocks containing blocks or paragraphs (inline formatting
/// contexts). Built from the document and its computed styles; layout never looks at tag names.
indirect enum FlowNode {
    case block(BlockNode)
    case paragraph(Paragraph)
    case replaced(ReplacedBox)
    case table(TableNode)
}

struct BlockNode {
    var style: ComputedStyle
    var node: NodeID?
    var children: [FlowNode]
    /// The `::marker` of a list item, drawn outside the first line.
    var marker: GeneratedContent?
    /// An inline-block holding blocks (a shaped poem): as wide as its content, placed on its
    /// line by the line's text-align.
    var shrinkToFit: TextAlign? = nil
    /// Inside a shrink-to-fit box, sized for its content: indentation never gives way.
    var fitsItsContent = false

    /// Marks every block inside as laid out in a box sized to fit it.
    mutating func markFitted() {
        for index in children.indices {
            if case .block(var child) = children[index] {
                child.fitsItsContent = true
                child.markFitted()
                children[index] = .block(child)
            }
        }
    }
}

struct TableNode {
    var style: ComputedStyle
    var node: NodeID?
    var caption: [FlowNode]
    /// Rows of cells; each cell is a block. Header rows come first, footer rows last.
    var rows: [[BlockNode]]
    /// How many of the first rows are the table's header (its first `thead`), repeated atop
    /// each page the table continues on.
    var headerRows = 0
    /// The widths `<col>` and `<colgroup>` give the columns, in order (nil where they give none).
    var columnWidths: [Length?] = []
}

/// An image or other replaced element. Sizes are CSS px; nil means unknown until measured.
struct ReplacedBox {
    /// Provisional sides (CSS px) for an image not yet measured, and for one that cannot be.
    static let unknownSide = 24.0
    static let failedSide = 150.0

    var style: ComputedStyle
    var node: NodeID
    /// The image's archive path (nil for external or missing references).
    var resource: String?
    var alt: String
    /// The width/height attributes (or a viewBox) in CSS px.
    var width: Double?
    var height: Double?
    /// Source offset where the element sits in the text.
    var offset: Int
    /// From settling: nil until measured.
    var measurement: ImageMeasurement?
    /// An inline `<svg>` picture, serialized for librsvg.
    var inlineData: [UInt8]?

    var displayState: ImageBox.State {
        switch measurement {
        case .measured?: return resource == nil && inlineData == nil ? .placeholder : .image
        case .failed?: return .missing
        case nil: return .placeholder
        }
    }
}

/// A ruby annotation (`rt`): its text is drawn small, centred above its base range of the
/// paragraph's text. The base never breaks across lines.
struct RubyAnnotation {
    var base: Range<Int>
    var text: [UInt16]
    var style: Int
}

/// An inline element with a box to draw or space to keep: background, border, padding or a
/// horizontal margin. Its edges add space before its first unit and after its last; its
/// background and border are painted behind its text on each line it reaches.
struct InlineBox {
    var range: Range<Int>
    var style: Int

    /// Whether the element's style gives it anything to draw, any width of its own, or an offset
    /// (`position: relative` moves what is drawn inside it).
    static func matters(_ style: ComputedStyle) -> Bool {
        !style.backgroundColor.isTransparent || style.position == .relative || style.backgroundImages.contains { $0 != nil }
            || style.padding.left != .zero || style.padding.right != .zero
            || style.padding.top != .zero || style.padding.bottom != .zero || style.margin.left != .px(0) || style.margin.right != .px(0)
            || [style.borderStyle.top, style.borderStyle.right, style.borderStyle.bottom, style.borderStyle.left].contains { $0 != .none && $0 != .hidden }
    }
}

struct StyleRun {
    var start: Int
    var end: Int
    var style: Int
}

/// Inline content of one block: text after white-space processing, the source offset of every
/// UTF-16 unit, style runs, and atoms (inline images) at U+FFFC positions.
final class Paragraph {
    let blockStyle: ComputedStyle
    var text: [UInt16] = []
    var sources: [Int32] = []
    var runs: [StyleRun] = []
    var atoms: [Int: ReplacedBox] = [:]
    /// Ruby annotations over ranges of the text, in order.
    var annotations: [RubyAnnotation] = []
    /// Inline elements with boxes, outer before inner.
    var inlineBoxes: [InlineBox] = []
    /// The text of each element that sets `text-combine-upright: all` (tate-chu-yoko in vertical
    /// text: each is set in one em, even beside another with the same style).
    var combinedRanges: [Range<Int>] = []
    /// `::first-line`: for each run style, the style its units take on the first line.
    var firstLineStyles: [Int: Int] = [:]
    var marker: GeneratedContent?
    /// A floated `::first-letter` (a drop cap): the text range it takes and its style index.
    var dropCap: (range: Range<Int>, style: Int)?
    /// The block's primary face, for the line strut (found once per paragraph).
    var strutFace: FontFace?
    /// Offset in the source where this paragraph begins (used when it is empty of text).
    var startOffset: Int

    init(blockStyle: ComputedStyle, startOffset: Int) {
        self.blockStyle = blockStyle
        self.startOffset = startOffset
    }

    /// Whether the paragraph makes a line: any text, atom or line break (`<p><br/></p>`, the
    /// blank-line idiom of many templates, is one line tall, as in browsers).
    var hasContent: Bool {
        !atoms.isEmpty || text.contains { $0 != 0x20 && $0 != 0x0A }
    }

    /// The first unit whose source offset is at or after `source` (the text's end if none is).
    func unitIndex(atSource source: Int) -> Int {
        sources.firstIndex { Int($0) >= source } ?? text.count
    }

    /// A copy whose units before `end` take their `::first-line` styles (with its case transform).
    func withFirstLine(through end: Int, styles: [ComputedStyle]) -> Paragraph {
        let copy = Paragraph(blockStyle: blockStyle, startOffset: startOffset)
        copy.text = text
        copy.sources = sources
        copy.atoms = atoms
        copy.annotations = annotations
        copy.inlineBoxes = inlineBoxes
        copy.combinedRanges = combinedRanges
        copy.marker = marker
        copy.dropCap = dropCap
        copy.strutFace = strutFace
        for run in runs {
            let styled = firstLineStyles[run.style] ?? run.style
            if run.end <= end || run.start >= end {
                copy.runs.append(StyleRun(start: run.start, end: run.end, style: run.start < end ? styled : run.style))
            } else {
                copy.runs.append(StyleRun(start: run.start, end: end, style: styled))
                copy.runs.append(StyleRun(start: end, end: run.end, style: run.style))
            }
        }
        for run in copy.runs where run.end <= end && styles[run.style].textTransform != .none {
            let range = run.start..<run.end
            let units = Array(copy.text[range])
            let language = styles[run.style].language
            let changed: [UInt16]
            switch styles[run.style].textTransform {
            case .uppercase: changed = UnicodeInfo.uppercased(units, language: language)
            case .lowercase: changed = UnicodeInfo.lowercased(units, language: language)
            default: changed = units
            }
            // Only a transform that keeps the length: the units' source offsets must still line up.
            if changed.count == units.count { copy.text.replaceSubrange(range, with: changed) }
        }
        return copy
    }
}

/// Builds the flow tree of a content document from its styles.
struct BoxTreeBuilder {
    let document: ContentDocument
    let styles: DocumentStyles
    /// Character classes met so far (the layout worker's, when it builds the tree for layout).
    var characters = CharacterCategories()
    /// Image measurements known so far (settling fills this in between passes).
    var imageSizes: ImageSizes = [:]
    /// Archive paths of the images the chapter uses, in document order.
    private(set) var imagePaths: [String] = []
    /// The archive path an image reference shows (its fallback for a foreign image), nil when the
    /// manifest does not list it; every path is shown when no publication is known.
    var shownResource: (String) -> String? = { $0 }
    /// Images the content refers to that the manifest does not list (drawn as placeholders).
    private(set) var unlistedImages: [String] = []
    /// Styles referenced by paragraph runs, interned.
    private(set) var styleTable: [ComputedStyle] = []
    private var styleIndex: [ComputedStyle: Int] = [:]
    private(set) var imageCount = 0
    /// For the CSS report: the elements whose style asks for something their box does not draw.
    var recordsUnhonoured = false
    private(set) var unhonoured: [(node: NodeID, feature: UnhonouredFeature)] = []
    /// Combining marks past `maxCombiningMarks` on one base were left out.
    private(set) var droppedCombiningMarks = false
    static let maxCombiningMarks = 30
    /// Elements nested deeper than `maxNesting` are set as the text they hold (see `appendFlattened`).
    private(set) var flattenedDeepNesting = false
    private var nesting = 0
    /// Building boxes, and every later pass over them (layout, painting), recurses once per level of
    /// nesting, with frames of tens of KB in a debug or sanitizer build: past this depth a document
    /// (a hostile one: real books nest a few dozen levels at most) would run out of stack.
    static let maxNesting = 48

    init(document: ContentDocument, styles: DocumentStyles) {
        self.document = document
        self.styles = styles
        // A chapter's text uses a handful of styles: room for them up front, rather than the
        // table rehashing every style (each hash a dozen fields) as it grows.
        styleIndex.reserveCapacity(16)
    }

    /// For each of the document's distinct styles (`DocumentStyles.computedIndex`), its index in
    /// `styleTable` once interned (-1 before): text in an element's own style is interned by that
    /// number, not by comparing or hashing the style (a few hundred fields).
    private var documentStyleIndex: [Int32] = []

    /// `intern(style)` for `node`'s own style (`styles.computedStyle(of: node)`), looked up by the
    /// document's style number.
    mutating func intern(_ style: ComputedStyle, styleOf node: NodeID) -> Int {
        guard let number = styles.computedIndex(of: node) else { return intern(style) }
        if documentStyleIndex.isEmpty { documentStyleIndex = [Int32](filling: -1, count: styles.distinctStyleCount) }
        if documentStyleIndex[number] >= 0 { return Int(documentStyleIndex[number]) }
        let index = intern(style)
        documentStyleIndex[number] = Int32(index)
        return index
    }

    /// The indices interned last: consecutive text nodes nearly always repeat one of a few styles,
    /// and comparing two styles costs far less than hashing one.
    private var recentStyles: [Int] = []

    mutating func intern(_ style: ComputedStyle) -> Int {
        // Compared in place (a copy of each style tried retained all its fields).
        let recent = styleTable.withUnsafeBufferPointer { table in recentStyles.first { table[$0] == style } }
        if let recent { return recent }
        let index: Int
        if let known = styleIndex[style] {
            index = known
        } else {
            styleTable.append(style)
            index = styleTable.count - 1
            styleIndex[style] = index
        }
        if recentStyles.count == 4 { recentStyles.removeFirst() }
        recentStyles.append(index)
        return index
    }

    /// The body as a block (or an empty block when there is no body).
    mutating func build() -> BlockNode {
        guard let body = document.body else {
            return BlockNode(style: ComputedStyle(), node: nil, children: [], marker: nil)
        }
        let bodyBlock = buildBlock(body, styles.style(of: body.id))
        // The root element's box holds body's: books set margins, widths and backgrounds on it.
        guard let root = document.tree.root, root.id != body.id else { return bodyBlock }
        return BlockNode(style: styles.style(of: root.id).style, node: root.id, children: [.block(bodyBlock)], marker: nil)
    }

    /// `elementStyle` is `styles.style(of: element.id)` (every caller has it already).
    private mutating func buildBlock(_ element: XMLElement, _ elementStyle: ElementStyle) -> BlockNode {
        var context = FlowContext(blockStyle: elementStyle.style, startOffset: document.textOffset(atElement: element.id))
        if let before = elementStyle.before { appendGenerated(before, &context) }
        buildChildren(of: element, inlineStyle: elementStyle.style, styleNode: element.id, &context)
        if let after = elementStyle.after { appendGenerated(after, &context) }
        context.flushParagraph(endOffset: nil)
        if let firstLetter = elementStyle.firstLetter, case .paragraph(let paragraph)? = context.flow.first {
            applyFirstLetter(firstLetter, to: paragraph)
        }
        if let firstLine = elementStyle.firstLine, case .paragraph(let paragraph)? = context.flow.first {
            for style in Set(paragraph.runs.map(\.style)).sorted() {
                paragraph.firstLineStyles[style] = intern(Self.firstLineStyle(styleTable[style], firstLine: firstLine, block: elementStyle.style))
            }
        }
        var block = BlockNode(style: elementStyle.style, node: element.id, children: context.flow, marker: nil)
        if elementStyle.style.display == .listItem, let marker = elementStyle.marker, elementStyle.style.listStyleType != .none {
            if elementStyle.style.listStylePosition == .inside, case .paragraph(let paragraph)? = block.children.first {
                prepend(marker, to: paragraph)
            } else {
                block.marker = marker
            }
        }
        return block
    }

    /// `::first-letter`: leading punctuation and the first letter. Floated, it becomes a drop cap
    /// (laid out beside the first lines); otherwise it restyles those characters in place.
    /// A run's style on the first line: what it inherits unchanged from the block takes the
    /// `::first-line` value instead (so an `em` keeps its italics but takes the line's size).
    static func firstLineStyle(_ run: ComputedStyle, firstLine: ComputedStyle, block: ComputedStyle) -> ComputedStyle {
        var style = run
        if run.fontSize == block.fontSize { style.fontSize = firstLine.fontSize }
        if run.fontFamilies == block.fontFamilies { style.fontFamilies = firstLine.fontFamilies }
        if run.fontWeight == block.fontWeight { style.fontWeight = firstLine.fontWeight }
        if run.fontStyle == block.fontStyle { style.fontStyle = firstLine.fontStyle }
        if run.fontVariantCaps == block.fontVariantCaps { style.fontVariantCaps = firstLine.fontVariantCaps }
        if run.fontFeatures == block.fontFeatures { style.fontFeatures = firstLine.fontFeatures }
        if run.color == block.color { style.color = firstLine.color }
        if run.letterSpacing == block.letterSpacing { style.letterSpacing = firstLine.letterSpacing }
        if run.wordSpacing == block.wordSpacing { style.wordSpacing = firstLine.wordSpacing }
        if run.textTransform == block.textTransform { style.textTransform = firstLine.textTransform }
        style.textDecoration = run.textDecoration.union(firstLine.textDecoration)
        return style
    }

    private mutating func applyFirstLetter(_ style: ComputedStyle, to paragraph: Paragraph) {
        let text = paragraph.text
        var start = 0
        while start < text.count, text[start] == 0x20 || text[start] == 0x2028 { start += 1 }
        var end = start
        func category(_ index: Int) -> Unicode.GeneralCategory? { Unicode.Scalar(text[index])?.properties.generalCategory }
        while end < text.count, let kind = category(end), [.openPunctuation, .initialPunctuation, .otherPunctuation].contains(kind) { end += 1 }
        guard end < text.count else { return }
        end += (text[end] >= 0xD800 && text[end] < 0xDC00 && end + 1 < text.count) ? 2 : 1
        while end < text.count, let kind = category(end), [.nonspacingMark, .spacingMark, .finalPunctuation, .closePunctuation].contains(kind) { end += 1 }
        guard end > start, paragraph.atoms[start] == nil else { return }
        let index = intern(style)
        if style.float != .none && paragraph.blockStyle.direction == .ltr {
            paragraph.dropCap = (start..<end, index)
            return
        }
        // In place: split the style runs around the range.
        var runs: [StyleRun] = []
        for run in paragraph.runs {
            if run.end <= start || run.start >= end {
                runs.append(run)
                continue
            }
            if run.start < start { runs.append(StyleRun(start: run.start, end: start, style: run.style)) }
            runs.append(StyleRun(start: max(run.start, start), end: min(run.end, end), style: index))
            if run.end > end { runs.append(StyleRun(start: end, end: run.end, style: run.style)) }
        }
        paragraph.runs = runs
    }

    private mutating func prepend(_ marker: GeneratedContent, to paragraph: Paragraph) {
        let units = Array((marker.text + " ").utf16)
        let styleIndex = intern(marker.style)
        let offset = Int32(paragraph.sources.first ?? Int32(paragraph.startOffset))
        paragraph.text.insert(contentsOf: units, at: 0)
        paragraph.sources.insert(contentsOf: [Int32](repeating: offset, count: units.count), at: 0)
        paragraph.runs = [StyleRun(start: 0, end: units.count, style: styleIndex)]
            + paragraph.runs.map { StyleRun(start: $0.start + units.count, end: $0.end + units.count, style: $0.style) }
        paragraph.atoms = Dictionary(uniqueKeysWithValues: paragraph.atoms.map { ($0.key + units.count, $0.value) })
        for index in paragraph.inlineBoxes.indices {
            let range = paragraph.inlineBoxes[index].range
            paragraph.inlineBoxes[index].range = range.lowerBound + units.count..<range.upperBound + units.count
        }
        for index in paragraph.annotations.indices {
            let base = paragraph.annotations[index].base
            paragraph.annotations[index].base = base.lowerBound + units.count..<base.upperBound + units.count
        }
        paragraph.combinedRanges = paragraph.combinedRanges.map { ($0.lowerBound + units.count)..<($0.upperBound + units.count) }
    }

    struct FlowContext {
        var blockStyle: ComputedStyle
        var flow: [FlowNode] = []
        var paragraph: Paragraph?
        var lastWasSpace = true
        var startOffset: Int
        /// Floats met inside the current paragraph, placed before it.
        var pendingFloats: [FlowNode] = []

        init(blockStyle: ComputedStyle, startOffset: Int) {
            self.blockStyle = blockStyle
            self.startOffset = startOffset
        }

        mutating func currentParagraph(offset: Int) -> Paragraph {
            if let paragraph { return paragraph }
            let paragraph = Paragraph(blockStyle: blockStyle, startOffset: offset)
            self.paragraph = paragraph
            lastWasSpace = true
            return paragraph
        }

        mutating func flushParagraph(endOffset: Int?) {
            flow.append(contentsOf: pendingFloats)
            pendingFloats.removeAll()
            guard let paragraph else { return }
            self.paragraph = nil
            // Trailing collapsible space is dropped.
            while let last = paragraph.text.last, last == 0x20,
                let run = paragraph.runs.last, run.end == paragraph.text.count
            {
                paragraph.text.removeLast()
                paragraph.sources.removeLast()
                paragraph.runs[paragraph.runs.count - 1].end -= 1
                if paragraph.runs[paragraph.runs.count - 1].end <= paragraph.runs[paragraph.runs.count - 1].start {
                    paragraph.runs.removeLast()
                }
            }
            if paragraph.hasContent { flow.append(.paragraph(paragraph)) }
        }
    }

    /// `styleNode`: the element whose style (in `styles`) `inlineStyle` is.
    private mutating func buildChildren(of element: XMLElement, inlineStyle: ComputedStyle, styleNode: NodeID, _ context: inout FlowContext) {
        nesting += 1
        defer { nesting -= 1 }
        guard nesting <= Self.maxNesting else {
            appendFlattened(element, style: inlineStyle, &context)
            return
        }
        let tree = document.tree
        for child in tree.childIDs(of: element.id) {
            if tree.kind(of: child) == .text {
                appendText(tree.text(of: child), sourceStart: Int(document.textStarts[Int(child.index)]), style: inlineStyle, styleNode: styleNode, &context)
                continue
            }
            guard let childElement = tree.element(child) else { continue }
            // The computed style alone: the whole ElementStyle (pseudo-elements' styles too) is
            // copied only for the children that become blocks (MathML's many inline elements made
            // those copies a tenth of a chapter's layout).
            let style = styles.computedStyle(of: child)
            if style.display == .none { continue }
            // Absolutely positioned far off the page: hidden on purpose (Standard Ebooks' title pages).
            if style.position == .absolute || style.position == .fixed, Self.isOffscreen(style) { continue }
            let name = childElement.localName
            if name == "img" || (name == "image" && childElement.namespace == Namespace.svg) || name == "svg" || name == "video"
                || name == "object" || name == "canvas" && childElement.elementChildren.isEmpty
            {
                let box = replacedBox(childElement, style)
                if style.float != .none || style.position == .absolute || style.position == .fixed {
                    // Floats leave the line: they go into the flow ahead of the paragraph around them.
                    context.pendingFloats.append(.replaced(box))
                    if context.paragraph == nil { context.flushParagraph(endOffset: nil) }
                } else if style.display.isBlockLevel {
                    context.flushParagraph(endOffset: box.offset)
                    context.flow.append(.replaced(box))
                } else {
                    appendAtom(box, style: style, &context)
                }
                continue
            }
            if style.float != .none || (style.position == .absolute || style.position == .fixed) && style.display != .table {
                // A floated element (a line number, a note's label): its own block, placed beside the
                // paragraph it sits in, like a floated picture. A positioned one leaves the
                // paragraph the same way.
                context.pendingFloats.append(.block(buildBlock(childElement, styles.style(of: child))))
                if context.paragraph == nil { context.flushParagraph(endOffset: nil) }
                continue
            }
            switch style.display {
            case .table, .inlineTable:
                context.flushParagraph(endOffset: nil)
                context.flow.append(.table(buildTable(childElement, style)))
            case .ruby:
                let generated = styles.generated(of: child)
                if let before = generated.before { appendGenerated(before, &context) }
                buildRuby(childElement, style, &context)
                if let after = generated.after { appendGenerated(after, &context) }
            case .inlineBlock where hasBlockChildren(childElement) || standsAlone(childElement, after: context.paragraph):
                context.flushParagraph(endOffset: nil)
                var block = buildBlock(childElement, styles.style(of: child))
                block.shrinkToFit = context.blockStyle.textAlign
                block.markFitted()
                context.flow.append(.block(block))
                context.lastWasSpace = true
            case .inline, .contents, .inlineBlock, .inlineFlex, .inlineGrid, .rubyText:
                // The box is recorded where it opens (outer boxes paint first) and closed after its
                // content, if that content stayed in one paragraph.
                var box: (paragraph: Paragraph, index: Int)?
                if recordsUnhonoured, style.display != .contents { recordUnhonouredInline(child, style) }
                if style.display != .contents, style.display != .rubyText, InlineBox.matters(style) {
                    let paragraph = context.currentParagraph(offset: document.textOffset(atElement: childElement.id))
                    paragraph.inlineBoxes.append(InlineBox(range: paragraph.text.count..<paragraph.text.count, style: intern(style)))
                    box = (paragraph, paragraph.inlineBoxes.count - 1)
                }
                var combined: (paragraph: Paragraph, start: Int)?
                // (Vertical text only: a horizontal chapter's paragraphs start as they always have.)
                if style.textCombineUpright == .all, inlineStyle.textCombineUpright != .all, style.writingMode != .horizontalTB {
                    let paragraph = context.currentParagraph(offset: document.textOffset(atElement: childElement.id))
                    combined = (paragraph, paragraph.text.count)
                }
                let generated = styles.generated(of: child)
                if let before = generated.before { appendGenerated(before, &context) }
                if style.display == .contents {
                    buildChildren(of: childElement, inlineStyle: inlineStyle, styleNode: styleNode, &context)
                } else {
                    buildChildren(of: childElement, inlineStyle: style, styleNode: child, &context)
                }
                if let after = generated.after { appendGenerated(after, &context) }
                if let combined, context.paragraph === combined.paragraph, combined.paragraph.text.count > combined.start {
                    combined.paragraph.combinedRanges.append(combined.start..<combined.paragraph.text.count)
                }
                if let box {
                    if context.paragraph === box.paragraph, box.paragraph.text.count > box.paragraph.inlineBoxes[box.index].range.lowerBound {
                        let start = box.paragraph.inlineBoxes[box.index].range.lowerBound
                        box.paragraph.inlineBoxes[box.index].range = start..<box.paragraph.text.count
                    } else {
                        box.paragraph.inlineBoxes.remove(at: box.index)
                    }
                }
            default:
                context.flushParagraph(endOffset: nil)
                context.flow.append(.block(buildBlock(childElement, styles.style(of: child))))
                context.lastWasSpace = true
            }
        }
    }

    static func isCombiningMark(_ unit: UInt16) -> Bool {
        guard let scalar = Unicode.Scalar(unit) else { return false }
        let category = scalar.properties.generalCategory
        return category == .nonspacingMark || category == .enclosingMark
    }

    /// An element nested too deep for boxes of its own: its text, in document order, in the style
    /// of the box it sits in, with a paragraph break at each block-level element. Walked with a
    /// stack of its own, so no depth of nesting reaches the call stack.
    private mutating func appendFlattened(_ element: XMLElement, style: ComputedStyle, _ context: inout FlowContext) {
        flattenedDeepNesting = true
        let tree = document.tree
        var pending: [(node: NodeID, closing: Bool)] = tree.childIDs(of: element.id).reversed().map { ($0, false) }
        while let (node, closing) = pending.popLast() {
            if tree.kind(of: node) == .text {
                appendText(tree.text(of: node), sourceStart: Int(document.textStarts[Int(node.index)]), style: style, &context)
                continue
            }
            guard tree.element(node) != nil else { continue }
            let display = styles.display(of: node)
            if display == .none { continue }
            if display.isBlockLevel {
                context.flushParagraph(endOffset: nil)
                context.lastWasSpace = true
            }
            if !closing {
                if display.isBlockLevel { pending.append((node, true)) }
                pending.append(contentsOf: tree.childIDs(of: node).reversed().map { ($0, false) })
            }
        }
    }

    /// What an inline-block in running text leaves undrawn: its size (its content stays in the line).
    private mutating func recordUnhonouredInline(_ node: NodeID, _ style: ComputedStyle) {
        guard style.display == .inlineBlock || style.display == .inlineFlex || style.display == .inlineGrid else { return }
        let sized: Bool = {
            if case .length = style.width { return true }
            if case .length = style.height { return true }
            return style.minWidth.resolve(against: 100) > 0 || style.minHeight.resolve(against: 100) > 0 || style.maxWidth != nil || style.maxHeight != nil
        }()
        if sized { unhonoured.append((node, .size)) }
    }


    /// An inline-block alone on its line (only white space before it in the paragraph, and
    /// only white space or blocks after it) is laid out as the shrink-to-fit block it would
    /// be there: its width, max-width, padding and alignment then hold, as for Standard Ebooks'
    /// bridgeheads and epigraphs.
    private func standsAlone(_ element: XMLElement, after paragraph: Paragraph?) -> Bool {
        if let paragraph, paragraph.hasContent { return false }
        guard let parent = document.tree.parent(of: element.id) else { return false }
        var seen = false
        for sibling in document.tree.childIDs(of: parent) {
            if sibling == element.id {
                seen = true
                continue
            }
            guard seen else { continue }
            if document.tree.element(sibling) != nil {
                let display = styles.display(of: sibling)
                if display.isBlockLevel { return true }
                if display != .none { return false }
            } else if document.tree.text(of: sibling).contains(where: { !$0.isWhitespace }) {
                return false
            }
        }
        return true
    }

    private func hasBlockChildren(_ element: XMLElement) -> Bool {
        document.tree.childIDs(of: element.id).contains { child in
            document.tree.element(child) != nil && styles.display(of: child).isBlockLevel
        }
    }

    static func isOffscreen(_ style: ComputedStyle) -> Bool {
        let offsets = [style.offsets.left, style.offsets.top, style.offsets.right, style.offsets.bottom]
        return offsets.contains { offset in
            if case .length(.px(let value)) = offset { return value < -2000 }
            if case .length(.percent(let value)) = offset { return value <= -100 }
            return false
        }
    }

    /// A ruby element: its content is the base text, and each `rt` (display: ruby-text) annotates
    /// the base that came before it, back to the previous annotation.
    private mutating func buildRuby(_ element: XMLElement, _ style: ComputedStyle, _ context: inout FlowContext) {
        let tree = document.tree
        let paragraph = context.currentParagraph(offset: document.textOffset(atElement: element.id))
        var baseStart = paragraph.text.count
        for child in tree.childIDs(of: element.id) {
            if let childElement = tree.element(child), styles.display(of: child) == .rubyText {
                let annotationStyle = styles.computedStyle(of: child)
                let text = childElement.textContent.collapsingWhitespace()
                let base = baseStart..<paragraph.text.count
                if !text.isEmpty, !base.isEmpty, annotationStyle.visibility == .visible {
                    paragraph.annotations.append(RubyAnnotation(base: base, text: Array(text.utf16), style: intern(annotationStyle)))
                }
                baseStart = paragraph.text.count
                continue
            }
            if tree.kind(of: child) == .text {
                appendText(tree.text(of: child), sourceStart: Int(document.textStarts[Int(child.index)]), style: style, &context)
            } else if let childElement = tree.element(child) {
                let childStyle = styles.style(of: child)
                guard childStyle.style.display != .none else { continue }
                if let before = childStyle.before { appendGenerated(before, &context) }
                buildChildren(of: childElement, inlineStyle: childStyle.style, styleNode: child, &context)
                if let after = childStyle.after { appendGenerated(after, &context) }
            }
        }
    }

    private mutating func buildTable(_ element: XMLElement, _ style: ComputedStyle) -> TableNode {
        var table = TableNode(style: style, node: element.id, caption: [], rows: [])
        // CSS tables: the first header group goes first and the first footer group last,
        // wherever they are in the source.
        var header: [[BlockNode]]?
        var footer: [[BlockNode]]?
        /// The background of the row group being collected: rows and groups paint behind their cells.
        var groupBackground = Color.transparent
        /// A `col` (or a `colgroup` without any) stands for `span` columns of its width.
        func collectColumns(_ element: XMLElement, _ style: ComputedStyle) {
            let columns = element.elementChildren.filter { styles.display(of: $0.id) == .tableColumn }
            if style.display == .tableColumnGroup, !columns.isEmpty {
                for column in columns { collectColumns(column, styles.computedStyle(of: column.id)) }
                return
            }
            let span = max(1, min(1000, Int(element.attribute("span")?.trimmingWhitespace() ?? "") ?? 1))
            let width: Length? = { if case .length(let length) = style.width { return length } else { return nil } }()
            if table.columnWidths.count < 1000 { table.columnWidths += Array(repeating: width, count: span) }
        }
        func collectRows(_ parent: XMLElement) {
            for child in parent.elementChildren {
                let childStyle = styles.style(of: child.id)
                switch childStyle.style.display {
                case .none: continue
                case .tableRow:
                    var cells: [BlockNode] = []
                    let rowBackground = childStyle.style.backgroundColor.isTransparent ? groupBackground : childStyle.style.backgroundColor
                    for cell in child.elementChildren where styles.display(of: cell.id) != .none {
                        // Columns are sized for their cells' content, padding included: it never gives way.
                        var block = buildBlock(cell, styles.style(of: cell.id))
                        block.fitsItsContent = true
                        block.markFitted()
                        if block.style.backgroundColor.isTransparent { block.style.backgroundColor = rowBackground }
                        cells.append(block)
                    }
                    if !cells.isEmpty { table.rows.append(cells) }
                case .tableCaption:
                    table.caption.append(.block(buildBlock(child, childStyle)))
                case .tableColumn, .tableColumnGroup:
                    collectColumns(child, childStyle.style)
                case .tableHeaderGroup where header == nil, .tableFooterGroup where footer == nil:
                    let body = table.rows
                    table.rows = []
                    let outer = groupBackground
                    if !childStyle.style.backgroundColor.isTransparent { groupBackground = childStyle.style.backgroundColor }
                    collectRows(child)
                    groupBackground = outer
                    if childStyle.style.display == .tableHeaderGroup { header = table.rows } else { footer = table.rows }
                    table.rows = body
                case .tableRowGroup, .tableHeaderGroup, .tableFooterGroup:
                    let outer = groupBackground
                    if !childStyle.style.backgroundColor.isTransparent { groupBackground = childStyle.style.backgroundColor }
                    collectRows(child)
                    groupBackground = outer
                default:
                    // Stray content in a table: an anonymous single-cell row.
                    table.rows.append([buildBlock(child, childStyle)])
                }
            }
        }
        collectRows(element)
        table.headerRows = header?.count ?? 0
        table.rows = (header ?? []) + table.rows + (footer ?? [])
        return table
    }

    private mutating func replacedBox(_ element: XMLElement, _ style: ComputedStyle) -> ReplacedBox {
        imageCount += 1
        func dimension(_ value: String?) -> Double? {
            guard let value = value?.trimmingWhitespace(), !value.hasSuffix("%") else { return nil }
            return Double(value.hasSuffix("px") ? String(value.dropLast(2)) : value)
        }
        var target = element
        // A cover-style <svg> holding one <image> is that image, sized by the viewBox.
        if element.localName == "svg", let image = element.descendants("image").first { target = image }
        let source = target.attribute("src") ?? target.attribute("href", namespace: Namespace.xlink) ?? target.attribute("href")
            ?? target.attribute("data")
        var width = dimension(element.attribute("width"))
        var height = dimension(element.attribute("height"))
        if element.localName == "svg", let viewBox = element.attribute("viewBox") {
            let numbers = viewBox.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
            if numbers.count == 4, numbers[2] > 0, numbers[3] > 0 {
                if width == nil && height == nil {
                    width = numbers[2]
                    height = numbers[3]
                } else if let w = width, height == nil {
                    height = w * numbers[3] / numbers[2]
                }
            }
        }
        var resource: String?
        var embedded: [UInt8]?
        var unlisted: String?
        if let source, let data = DataURL(source) {
            embedded = data.bytes
        } else if let source, let resolved = Href.resolve(source, relativeTo: document.path) {
            resource = shownResource(resolved.path)
            if resource == nil { unlisted = resolved.path }
        }
        var measurement: ImageMeasurement?
        if let unlisted {
            if !unlistedImages.contains(unlisted) { unlistedImages.append(unlisted) }
            measurement = .failed(reason: "\(unlisted) is not listed in the manifest, so it is not shown")
        } else if let embedded {
            // A data: URL carries the image itself.
            measurement = ImageMeasurement(bytes: embedded)
        } else if let resource {
            if !imagePaths.contains(resource) { imagePaths.append(resource) }
            measurement = imageSizes[resource]
        } else if element.localName == "svg" {
            // Inline SVG drawing: its own viewBox gives the size; librsvg draws the markup.
            measurement = width.map { .measured(width: $0, height: height ?? $0, hasIntrinsicSize: true) }
                ?? .measured(width: 300, height: 150, hasIntrinsicSize: false)
        } else {
            measurement = .failed(reason: "no image source")
        }
        return ReplacedBox(
            style: style, node: element.id, resource: resource, alt: element.attribute("alt") ?? element.attribute("title") ?? "",
            width: width, height: height, offset: document.textOffset(atElement: element.id), measurement: measurement,
            inlineData: embedded ?? (resource == nil && element.localName == "svg" ? inlineSVG(element) : nil))
    }

    /// An inline `<svg>` as markup for librsvg, with the document's CSS inside it (CSS Styling of
    /// SVG: the document's rules apply to inline SVG content).
    private func inlineSVG(_ element: XMLElement) -> [UInt8] {
        Array(XMLSerializer.serialize(element, styleSheet: styles.svgStyleSheet).utf8)
    }

    private mutating func appendGenerated(_ content: GeneratedContent, _ context: inout FlowContext) {
        guard content.style.display != .none else { return }
        let offset = context.paragraph?.sources.last.map { Int($0) } ?? context.startOffset
        if content.style.display.isBlockLevel {
            // A block ::before or ::after is a block of its own, drawn even when empty (a rule
            // made of `content: ""` and a border, as Standard Ebooks' colophons have).
            context.flushParagraph(endOffset: nil)
            var inner = FlowContext(blockStyle: content.style, startOffset: offset)
            if !content.text.isEmpty { appendText(content.text, sourceStart: nil, fallbackOffset: offset, style: content.style, &inner) }
            inner.flushParagraph(endOffset: nil)
            context.flow.append(.block(BlockNode(style: content.style, node: nil, children: inner.flow, marker: nil)))
            context.lastWasSpace = true
            return
        }
        guard !content.text.isEmpty else { return }
        appendText(content.text, sourceStart: nil, fallbackOffset: offset, style: content.style, &context)
    }

    private mutating func appendAtom(_ box: ReplacedBox, style: ComputedStyle, _ context: inout FlowContext) {
        let paragraph = context.currentParagraph(offset: box.offset)
        let index = intern(style)
        paragraph.atoms[paragraph.text.count] = box
        appendUnits([0xFFFC], sources: [Int32(box.offset)], style: index, to: paragraph)
        context.lastWasSpace = false
    }

    private func appendUnits(_ units: [UInt16], sources: [Int32], style: Int, to paragraph: Paragraph) {
        guard !units.isEmpty else { return }
        let start = paragraph.text.count
        paragraph.text.append(contentsOf: units)
        paragraph.sources.append(contentsOf: sources)
        if let last = paragraph.runs.last, last.style == style, last.end == start {
            paragraph.runs[paragraph.runs.count - 1].end = paragraph.text.count
        } else {
            paragraph.runs.append(StyleRun(start: start, end: paragraph.text.count, style: style))
        }
    }

    /// White-space processing (CSS Text 3, simplified): collapsible spaces collapse across element
    /// boundaries; preserved newlines become forced breaks (U+2028, which ICU treats as mandatory).
    /// `styleNode`: the element whose style (in `styles`) `style` is, when it is one.
    private mutating func appendText(
        _ text: String, sourceStart: Int?, fallbackOffset: Int = 0, style: ComputedStyle, styleNode: NodeID? = nil,
        _ context: inout FlowContext
    ) {
        let whiteSpace = style.whiteSpace
        // Read once: this loop runs for every character of the book.
        let collapses = whiteSpace.collapsesSpaces
        let preservesNewlines = whiteSpace.preservesNewlines
        let wraps = whiteSpace.wraps
        let collapsedSpace: UInt16 = whiteSpace == .nowrap ? 0x00A0 : 0x20
        var units = text.utf16Units
        if collapses && !context.lastWasSpace == false && context.paragraph == nil
            && units.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        {
            return  // whitespace between blocks
        }
        // Where each unit came from: its offset in the document text, or the generated content's
        // offset; a transform that changes the length spreads the sources over the new units.
        var remapped: [Int32]? = nil
        switch style.textTransform {
        case .uppercase, .lowercase, .capitalize:
            let transformed = transform(units, style.textTransform, language: style.language)
            if transformed.count != units.count {
                let count = units.count
                remapped = (0..<transformed.count).map { index in
                    let original = min(index * max(count, 1) / max(transformed.count, 1), max(count - 1, 0))
                    return Int32(sourceStart.map { $0 + original } ?? fallbackOffset)
                }
            }
            units = transformed
        case .fullWidth, .fullSizeKana:
            units = transform(units, style.textTransform, language: style.language)
        case .none:
            break
        }
        @inline(__always) func source(_ index: Int) -> Int32 {
            if let remapped { return remapped[index] }
            return Int32(sourceStart.map { $0 + index } ?? fallbackOffset)
        }
        guard !units.isEmpty else { return }
        var lastWasSpace = context.lastWasSpace
        var marksInRow = 0
        // Where unit i came from when no transform moved it: base + step * i.
        let directBase: Int32? = remapped == nil ? Int32(sourceStart ?? fallbackOffset) : nil
        let directStep: Int32 = sourceStart == nil ? 0 : 1
        // Written into buffers of the largest size they can take (a preformatted tab is four
        // units): appending checked each array's storage twice a character.
        let capacity = collapses ? units.count : units.count * 4
        var outSources: [Int32] = []
        let outUnits = [UInt16](capacity: capacity) { unitBuffer in
            outSources = [Int32](capacity: capacity) { sourceBuffer in
                var written = 0
                @inline(__always) func emit(_ unit: UInt16, _ from: Int32) {
                    unitBuffer[written] = unit
                    sourceBuffer[written] = from
                    written += 1
                }
                units.withUnsafeBufferPointer { units in
            var index = 0
            while index < units.count {
                // Nearly every character of a book: no space, newline, tab or mark (none below
                // U+0300, nor among the dashes and quotes from U+2010 to U+2027), kept as it is;
                // a run of them copied in a tight loop.
                if let directBase {
                    var end = index
                    while end < units.count {
                        let unit = units[end]
                        guard (unit > 0x20 && unit < 0x300) || (unit >= 0x2010 && unit <= 0x2027) else { break }
                        unitBuffer[written &+ end &- index] = unit
                        sourceBuffer[written &+ end &- index] = directBase &+ directStep &* Int32(truncatingIfNeeded: end)
                        end &+= 1
                    }
                    if end > index {
                        written &+= end &- index
                        index = end
                        marksInRow = 0
                        lastWasSpace = false
                        continue
                    }
                }
                defer { index += 1 }
                let unit = units[index]
                // Unicode's stream-safe limit: no text needs more than 30 marks on one base, and
                // HarfBuzz's time grows with the square of a run of them (a 1 MB run never ends).
                if unit >= 0x300 && unit < 0x3000 && characters.isCombiningMark(unit) {
                    marksInRow += 1
                    if marksInRow > Self.maxCombiningMarks {
                        droppedCombiningMarks = true
                        continue
                    }
                } else {
                    marksInRow = 0
                }
                let isNewline = unit == 0x0A || unit == 0x0D
                let isSpace = unit == 0x20 || unit == 0x09 || isNewline
                if preservesNewlines && isNewline {
                    if unit == 0x0D && index + 1 < units.count && units[index + 1] == 0x0A { continue }
                    emit(0x2028, source(index))
                    lastWasSpace = true
                    continue
                }
                if collapses && isSpace {
                    if lastWasSpace { continue }
                    emit(collapsedSpace, source(index))
                    lastWasSpace = true
                    continue
                }
                if unit == 0x09 && !collapses {
                    // Tabs in preformatted text: expand to the next multiple of 8 columns (approximate).
                    for _ in 0..<4 { emit(0x00A0, source(index)) }
                    lastWasSpace = false
                    continue
                }
                emit(unit == 0x20 && !wraps ? 0x00A0 : unit, source(index))
                lastWasSpace = unit == 0x20 && collapses
            }
                }
                return written
            }
            return outSources.count
        }
        guard !outUnits.isEmpty else { return }
        let paragraph = context.currentParagraph(offset: Int(outSources[0]))
        let index = styleNode.map { intern(style, styleOf: $0) } ?? intern(style)
        appendUnits(outUnits, sources: outSources, style: index, to: paragraph)
        context.lastWasSpace = lastWasSpace
    }

    private func transform(_ units: [UInt16], _ transform: TextTransform, language: String?) -> [UInt16] {
        switch transform {
        case .uppercase: return UnicodeInfo.uppercased(units, language: language)
        case .lowercase: return UnicodeInfo.lowercased(units, language: language)
        case .capitalize:
            var result = units
            var atWordStart = true
            for (index, unit) in units.enumerated() {
                let isLetter = Unicode.Scalar(unit).map { $0.properties.isAlphabetic } ?? true
                if atWordStart && isLetter {
                    let upper = UnicodeInfo.uppercased([unit], language: language)
                    if upper.count == 1 { result[index] = upper[0] }
                }
                atWordStart = !isLetter && unit != 0x27 && unit != 0x2019
            }
            return result
        case .fullWidth:
            // ASCII graphic characters to their fullwidth forms (U+FF01…U+FF5E); spaces stay, as
            // white space was processed before the transform.
            return units.map { $0 >= 0x21 && $0 <= 0x7E ? $0 + 0xFEE0 : $0 }
        case .fullSizeKana:
            return units.map { Self.fullSizeKana[$0] ?? $0 }
        case .none: return units
        }
    }

    /// Small kana and their full-size forms (CSS Text 3, text-transform: full-size-kana).
    static let fullSizeKana: [UInt16: UInt16] = {
        var table: [UInt16: UInt16] = [:]
        for small in [0x3041, 0x3043, 0x3045, 0x3047, 0x3049, 0x3063, 0x3083, 0x3085, 0x3087, 0x308E] as [UInt16] {
            table[small] = small + 1
            table[small + 0x60] = small + 0x61  // katakana
        }
        table[0x3095] = 0x304B
        table[0x3096] = 0x3051
        table[0x30F5] = 0x30AB
        table[0x30F6] = 0x30B1
        let extensions: [UInt16] = [0x30AF, 0x30B7, 0x30B9, 0x30C8, 0x30CC, 0x30CF, 0x30D2, 0x30D5, 0x30D8, 0x30DB, 0x30E0, 0x30E9, 0x30EA, 0x30EB, 0x30EC, 0x30ED]
        for (offset, full) in extensions.enumerated() { table[0x31F0 + UInt16(offset)] = full }
        return table
    }()
}

/// For the CSS report: which elements' styles ask for something their boxes do not draw (an
/// image layer on an inline box, an image's border), as the box tree is built for layout.
public enum UndrawnStyles {
    public static func elements(document: ContentDocument, styles: DocumentStyles) -> [(node: NodeID, feature: UnhonouredFeature)] {
        var builder = BoxTreeBuilder(document: document, styles: styles)
        builder.recordsUnhonoured = true
        _ = builder.build()
        return builder.unhonoured
    }
}
