import QuireXML

// Counters, quotes and generated text (::before, ::after, ::marker) in document order.

struct GeneratedContentState {
    struct Frame {
        var element: Int32
        /// Counter instances this element's children created (scoped to the children and their subtrees).
        var owned: [String] = []
        var reversedList = false
        var full: Int32 = -1
        var after: Int32 = -1
    }

    let table: ElementTable
    var counters: [String: [Int]] = [:]
    var stack: [Frame] = [Frame(element: -1)]
    var quoteDepth = 0

    init(table: ElementTable) { self.table = table }

    /// Closes open elements until `parent` is on top of the stack (it becomes the new element's parent).
    mutating func closeUntil(parent: Int32, fullStyles: [FullStyle], extras: inout [Int32: PseudoStyles]) {
        while stack.count > 1, stack[stack.count - 1].element != parent {
            let frame = stack[stack.count - 1]
            if frame.after >= 0 {
                // ::after comes after the children, so it sees their counter changes.
                let pseudo = fullStyles[Int(frame.after)]
                applyCounterOps(pseudo, isListItem: false, ownerFrame: stack.count - 1)
                if let text = resolve(pseudo, element: frame.element) {
                    extras[frame.element, default: PseudoStyles()].after = GeneratedContent(text: text, style: pseudo.style)
                }
            }
            for name in frame.owned {
                counters[name]?.removeLast()
                if counters[name]?.isEmpty == true { counters[name] = nil }
            }
            stack.removeLast()
        }
    }

    /// Counter operations of an element (or pseudo-element) whose new instances belong to `stack[ownerFrame]`.
    private mutating func applyCounterOps(_ full: FullStyle, isListItem: Bool, ownerFrame: Int) {
        for op in full.counterReset { reset(op.name, op.value, ownerFrame: ownerFrame) }
        var incrementedListItem = false
        for op in full.counterIncrement {
            if op.name == "list-item" { incrementedListItem = true }
            increment(op.name, by: op.value, ownerFrame: ownerFrame)
        }
        if isListItem && !incrementedListItem {
            let reversed = ownerFrame >= 1 && stack[ownerFrame].reversedList
            increment("list-item", by: reversed ? -1 : 1, ownerFrame: ownerFrame)
        }
        for op in full.counterSet {
            if counters[op.name]?.isEmpty ?? true { reset(op.name, 0, ownerFrame: ownerFrame) }
            counters[op.name]![counters[op.name]!.count - 1] = op.value
        }
    }

    private mutating func reset(_ name: String, _ value: Int, ownerFrame: Int) {
        if stack[ownerFrame].owned.contains(name), var values = counters[name], !values.isEmpty {
            // A sibling already created one in this scope: this reset replaces it.
            values[values.count - 1] = value
            counters[name] = values
            return
        }
        counters[name, default: []].append(value)
        stack[ownerFrame].owned.append(name)
    }

    private mutating func increment(_ name: String, by delta: Int, ownerFrame: Int) {
        if counters[name]?.isEmpty ?? true { reset(name, 0, ownerFrame: ownerFrame) }
        let last = counters[name]!.count - 1
        counters[name]![last] = counters[name]![last] &+ delta
    }

    /// Opens an element: its counter operations, then its frame on the stack (its children's scope).
    /// The element's style is read in `fullStyles` where it lies (a copy retains all its fields).
    mutating func enter(element e: Int32, result: CascadeResult, fullStyles: [FullStyle]) {
        let parentFrame = stack.count - 1
        let full = Int(result.full)
        let isListItem = fullStyles[full].style.display == .listItem
        if isListItem || !fullStyles[full].counterReset.isEmpty || !fullStyles[full].counterIncrement.isEmpty
            || !fullStyles[full].counterSet.isEmpty
        {
            applyCounterOps(fullStyles[full], isListItem: isListItem, ownerFrame: parentFrame)
        }
        let index = Int(e)
        let html = table.isHTML[index]
        let name = table.localName[index]
        var frame = Frame(element: e, full: result.full, after: result.after)
        if html && name == "ol", let ol = table.tree.element(NodeID(e)) {
            let start = ol.attribute("start").flatMap { Int($0.trimmingWhitespace()) }
            if ol.attribute("reversed") != nil {
                frame.reversedList = true
                let count = ol.elementChildren.filter { $0.localName.lowercased() == "li" }.count
                setInnermost("list-item", (start ?? count) + 1, ownerFrame: parentFrame)
            } else if let start {
                setInnermost("list-item", start - 1, ownerFrame: parentFrame)
            }
        }
        if html && name == "li" && isListItem, let value = table.tree.element(NodeID(e))?.attribute("value").flatMap({ Int($0.trimmingWhitespace()) }) {
            setInnermost("list-item", value, ownerFrame: parentFrame)
        }
        stack.append(frame)
    }

    /// The ::marker and ::before text of the element just entered (their counter operations run
    /// in its scope, after its own). Only for an element with either.
    mutating func markerAndBefore(element e: Int32, result: CascadeResult, fullStyles: [FullStyle], extra: inout PseudoStyles) {
        let ownFrame = stack.count - 1
        let full = fullStyles[Int(result.full)]
        let isListItem = full.style.display == .listItem
        if isListItem, result.marker >= 0 {
            let marker = fullStyles[Int(result.marker)]
            applyCounterOps(marker, isListItem: false, ownerFrame: ownFrame)
            var text: String? = nil
            if let content = marker.content, case .content = content {
                text = resolve(marker, element: e)
            } else {
                text = GeneratedContentState.markerText(full.style.listStyleType, value: counters["list-item"]?.last ?? 0)
            }
            if let text { extra.marker = GeneratedContent(text: text, style: marker.style) }
        }
        if result.before >= 0 {
            let before = fullStyles[Int(result.before)]
            applyCounterOps(before, isListItem: false, ownerFrame: ownFrame)
            if let text = resolve(before, element: e) { extra.before = GeneratedContent(text: text, style: before.style) }
        }
    }

    private mutating func setInnermost(_ name: String, _ value: Int, ownerFrame: Int) {
        if counters[name]?.isEmpty ?? true { reset(name, value, ownerFrame: ownerFrame) }
        counters[name]![counters[name]!.count - 1] = value
    }

    /// The text of a pseudo-element's `content`, nil when it generates no box.
    private mutating func resolve(_ pseudo: FullStyle, element: Int32) -> String? {
        guard case .content(let items)? = pseudo.content else { return nil }
        guard pseudo.style.display != .none else { return nil }
        var text = ""
        for item in items {
            switch item {
            case .string(let s): text += s
            case .attr(let name):
                if let element = table.tree.element(NodeID(element)) {
                    let lower = name.lowercased()
                    for attribute in element.attributes
                    where attribute.name.namespace.isEmpty && (attribute.name.local == name || attribute.name.local.lowercased() == lower) {
                        text += attribute.value
                        break
                    }
                }
            case .counter(let name, let style):
                text += GeneratedContentState.format(counters[name]?.last ?? 0, style)
            case .counters(let name, let separator, let style):
                let values = counters[name] ?? [0]
                text += values.map { GeneratedContentState.format($0, style) }.joined(separator: separator)
            case .openQuote, .closeQuote, .noOpenQuote, .noCloseQuote:
                let quotes = pseudo.quotes ?? GeneratedContentState.defaultQuotes(pseudo.style.language)
                if item == .closeQuote || item == .noCloseQuote { quoteDepth = max(0, quoteDepth - 1) }
                if (item == .openQuote || item == .closeQuote), quotes.count >= 2 {
                    let pair = min(quoteDepth, quotes.count / 2 - 1)
                    text += quotes[pair * 2 + (item == .openQuote ? 0 : 1)]
                }
                if item == .openQuote || item == .noOpenQuote { quoteDepth += 1 }
            }
        }
        return text
    }

    static func defaultQuotes(_ language: String?) -> [String] {
        let lang = (language ?? "en").lowercased()
        if lang.hasPrefix("fr") { return ["«\u{00A0}", "\u{00A0}»", "“", "”"] }
        if lang.hasPrefix("de") { return ["„", "“", "‚", "‘"] }
        if lang.hasPrefix("ru") { return ["«", "»", "„", "“"] }
        if lang.hasPrefix("ja") || lang.hasPrefix("zh") { return ["「", "」", "『", "』"] }
        return ["“", "”", "‘", "’"]
    }

    static func markerText(_ type: ListStyleType, value: Int) -> String? {
        switch type {
        case .none: return nil
        case .disc: return "• "
        case .circle: return "◦ "
        case .square: return "▪ "
        case .string(let s): return s
        case .cjkDecimal: return format(value, type) + "、"
        default: return format(value, type) + ". "
        }
    }

    static func format(_ value: Int, _ type: ListStyleType) -> String {
        switch type {
        case .none: return ""
        case .disc: return "•"
        case .circle: return "◦"
        case .square: return "▪"
        case .string(let s): return s
        case .decimal: return String(value)
        case .decimalLeadingZero:
            return value >= 0 && value < 10 ? "0" + String(value) : value < 0 && value > -10 ? "-0" + String(-value) : String(value)
        case .lowerRoman, .upperRoman:
            guard value > 0, value < 4000 else { return String(value) }
            let text = roman(value)
            return type == .lowerRoman ? text.lowercased() : text
        case .lowerAlpha, .upperAlpha:
            guard value > 0 else { return String(value) }
            let text = alphabetic(value, Array("abcdefghijklmnopqrstuvwxyz"))
            return type == .upperAlpha ? text.uppercased() : text
        case .lowerGreek:
            guard value > 0 else { return String(value) }
            return alphabetic(value, Array("αβγδεζηθικλμνξοπρστυφχψω"))
        case .cjkDecimal:
            let digits = Array("〇一二三四五六七八九")
            return String(String(abs(value)).map { digits[Int(String($0))!] })
        }
    }

    static func roman(_ value: Int) -> String {
        let table: [(Int, String)] = [
            (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"),
            (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
        ]
        var n = value
        var result = ""
        for (v, s) in table {
            while n >= v {
                result += s
                n -= v
            }
        }
        return result
    }

    static func alphabetic(_ value: Int, _ letters: [Character]) -> String {
        var n = value
        var result: [Character] = []
        while n > 0 {
            n -= 1
            result.append(letters[n % letters.count])
            n /= letters.count
        }
        return String(result.reversed())
    }
}
