// CSS Syntax Level 3 parsing: tokens → component values → rules and declarations, with the
// spec's error recovery (a bad declaration drops only itself; unclosed blocks close at EOF).

/// A component value: a preserved token, a function with its arguments, or a simple block.
indirect enum CV: Hashable, Sendable {
    case token(CSSToken)
    case function(String, [CV])
    /// `{`, `[` or `(` with its contents.
    case block(Unicode.Scalar, [CV])

    var isWhitespace: Bool { if case .token(.whitespace) = self { return true } else { return false } }
    var ident: String? { if case .token(.ident(let name)) = self { return name } else { return nil } }
    var lowerIdent: String? { ident?.lowercased() }
}

struct RawDeclaration: Sendable {
    var name: String
    var value: [CV]
    var important: Bool
}

enum RawRule: Sendable {
    case qualified(prelude: [CV], block: [CV])
    case at(name: String, prelude: [CV], block: [CV]?)
}

/// Counters of what the parser met, for warnings.
struct ParseProblems: Sendable {
    var skippedDeepBlocks = 0
}

struct ComponentParser {
    /// Blocks and functions nested deeper than this are skipped whole (bounded stack on hostile input).
    static let maxNestingDepth = 200

    private let tokens: [CSSToken]
    private var i = 0
    var problems = ParseProblems()

    init(_ tokens: [CSSToken]) { self.tokens = tokens }

    /// The whole input as a list of component values.
    static func parse(_ text: String) -> ([CV], ParseProblems) {
        var parser = ComponentParser(Tokenizer.tokenize(text))
        var values: [CV] = []
        while parser.i < parser.tokens.count { values.append(parser.consumeComponentValue(depth: 0)) }
        return (values, parser.problems)
    }

    private mutating func consumeComponentValue(depth: Int) -> CV {
        let token = tokens[i]
        i += 1
        switch token {
        case .leftBrace, .leftBracket, .leftParen:
            let (open, close): (Unicode.Scalar, CSSToken) =
                token == .leftBrace ? ("{", .rightBrace) : token == .leftBracket ? ("[", .rightBracket) : ("(", .rightParen)
            if depth >= ComponentParser.maxNestingDepth {
                skipBlock()
                return .token(.skippedBlock)
            }
            var contents: [CV] = []
            while i < tokens.count {
                if tokens[i] == close {
                    i += 1
                    break
                }
                contents.append(consumeComponentValue(depth: depth + 1))
            }
            return .block(open, contents)
        case .function(let name):
            if depth >= ComponentParser.maxNestingDepth {
                skipBlock()
                return .token(.skippedBlock)
            }
            var arguments: [CV] = []
            while i < tokens.count {
                if tokens[i] == .rightParen {
                    i += 1
                    break
                }
                arguments.append(consumeComponentValue(depth: depth + 1))
            }
            return .function(name, arguments)
        default:
            return .token(token)
        }
    }

    /// Skips to the end of the block just opened, iteratively (any closing bracket counts).
    private mutating func skipBlock() {
        problems.skippedDeepBlocks += 1
        var depth = 1
        while i < tokens.count && depth > 0 {
            switch tokens[i] {
            case .leftBrace, .leftBracket, .leftParen, .function: depth += 1
            case .rightBrace, .rightBracket, .rightParen: depth -= 1
            default: break
            }
            i += 1
        }
    }
}

enum RuleParser {
    /// A list of rules from component values (top level: CDO/CDC ignored).
    static func rules(_ values: [CV], topLevel: Bool) -> [RawRule] {
        var rules: [RawRule] = []
        var i = 0
        while i < values.count {
            let value = values[i]
            switch value {
            case .token(.whitespace):
                i += 1
            case .token(.cdo), .token(.cdc):
                i += 1
                if !topLevel { _ = consumeQualified(values, &i).map { rules.append($0) } }
            case .token(.atKeyword(let name)):
                i += 1
                var prelude: [CV] = []
                var block: [CV]? = nil
                while i < values.count {
                    let v = values[i]
                    i += 1
                    if case .token(.semicolon) = v { break }
                    if case .block("{", let contents) = v {
                        block = contents
                        break
                    }
                    prelude.append(v)
                }
                rules.append(.at(name: name.lowercased(), prelude: prelude, block: block))
            default:
                if let rule = consumeQualified(values, &i) { rules.append(rule) }
            }
        }
        return rules
    }

    private static func consumeQualified(_ values: [CV], _ i: inout Int) -> RawRule? {
        var prelude: [CV] = []
        while i < values.count {
            let v = values[i]
            i += 1
            if case .block("{", let contents) = v { return .qualified(prelude: prelude, block: contents) }
            prelude.append(v)
        }
        return nil  // EOF before a block: dropped
    }

    /// A declaration list (a style rule's block or a `style` attribute). Nested rules are skipped.
    static func declarations(_ values: [CV], limit: Int = Int.max) -> (declarations: [RawDeclaration], invalid: Int) {
        var result: [RawDeclaration] = []
        var invalid = 0
        var i = 0
        while i < values.count {
            switch values[i] {
            case .token(.whitespace), .token(.semicolon):
                i += 1
            case .token(.atKeyword):
                // An at-rule: skip to `;` or past its block.
                i += 1
                while i < values.count {
                    let v = values[i]
                    i += 1
                    if case .token(.semicolon) = v { break }
                    if case .block("{", _) = v { break }
                }
            case .token(.ident(let name)):
                var end = i
                while end < values.count {
                    if case .token(.semicolon) = values[end] { break }
                    end += 1
                }
                if result.count < limit, let declaration = declaration(name: name, values[(i + 1)..<end]) {
                    result.append(declaration)
                } else {
                    invalid += 1
                }
                i = end
            default:
                // Not a declaration: skip to the next `;` (nested rules end at their block).
                invalid += 1
                while i < values.count {
                    if case .token(.semicolon) = values[i] { break }
                    if case .block("{", _) = values[i] {
                        i += 1
                        break
                    }
                    i += 1
                }
            }
        }
        return (result, invalid)
    }

    private static func declaration(name: String, _ rest: ArraySlice<CV>) -> RawDeclaration? {
        var j = rest.startIndex
        while j < rest.endIndex, rest[j].isWhitespace { j += 1 }
        guard j < rest.endIndex, case .token(.colon) = rest[j] else { return nil }
        var value = Array(rest[(j + 1)...])
        while let first = value.first, first.isWhitespace { value.removeFirst() }
        while let last = value.last, last.isWhitespace { value.removeLast() }
        var important = false
        // `! important` at the end, whitespace allowed between.
        var k = value.count - 1
        if k >= 0, let word = value[k].lowerIdent, word == "important" {
            k -= 1
            while k >= 0, value[k].isWhitespace { k -= 1 }
            if k >= 0, case .token(.delim("!")) = value[k] {
                important = true
                value.removeSubrange(k...)
                while let last = value.last, last.isWhitespace { value.removeLast() }
            }
        }
        let isCustom = name.hasPrefix("--")
        return RawDeclaration(name: isCustom ? name : name.lowercased(), value: value, important: important)
    }
}

extension Array where Element == CV {
    /// Without whitespace tokens (top level only).
    var significant: [CV] { filter { !$0.isWhitespace } }

    /// Split at top-level commas.
    func splitCommas() -> [[CV]] {
        var parts: [[CV]] = [[]]
        for v in self {
            if case .token(.comma) = v { parts.append([]) } else { parts[parts.count - 1].append(v) }
        }
        return parts
    }

    var containsVar: Bool {
        contains { v in
            switch v {
            case .function(let name, let args): return name.lowercased() == "var" || args.containsVar
            case .block(_, let contents): return contents.containsVar
            default: return false
            }
        }
    }
}

extension CV {
    /// Serializes for messages, `@supports selector()` and attribute values; close to the source text.
    var text: String {
        switch self {
        case .token(let token): return token.text
        case .function(let name, let args): return name + "(" + args.map(\.text).joined() + ")"
        case .block(let open, let contents):
            let close = open == "{" ? "}" : open == "[" ? "]" : ")"
            return String(open) + contents.map(\.text).joined() + close
        }
    }
}

extension CSSToken {
    var text: String {
        switch self {
        case .ident(let s): return s
        case .function(let s): return s + "("
        case .atKeyword(let s): return "@" + s
        case .hash(let s, _): return "#" + s
        case .string(let s): return "\"" + s + "\""
        case .badString, .badURL, .skippedBlock: return ""
        case .url(let s): return "url(" + s + ")"
        case .delim(let c): return String(c)
        case .number(let v, _): return formatNumber(v)
        case .percentage(let v): return formatNumber(v) + "%"
        case .dimension(let v, let unit): return formatNumber(v) + unit
        case .unicodeRange(let a, let b): return "U+" + String(a, radix: 16) + "-" + String(b, radix: 16)
        case .whitespace: return " "
        case .cdo: return "<!--"
        case .cdc: return "-->"
        case .colon: return ":"
        case .semicolon: return ";"
        case .comma: return ","
        case .leftBracket: return "["
        case .rightBracket: return "]"
        case .leftParen: return "("
        case .rightParen: return ")"
        case .leftBrace: return "{"
        case .rightBrace: return "}"
        }
    }
}

func formatNumber(_ v: Double) -> String {
    if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
    return String(v)
}
