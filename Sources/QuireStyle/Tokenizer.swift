// CSS Syntax Level 3 tokenizer (https://www.w3.org/TR/css-syntax-3/#tokenization).

enum CSSToken: Hashable, Sendable {
    case ident(String)
    case function(String)
    case atKeyword(String)
    case hash(String, isID: Bool)
    case string(String)
    case badString
    case url(String)
    case badURL
    case delim(Unicode.Scalar)
    case number(Double, isInteger: Bool)
    case percentage(Double)
    case dimension(Double, String)
    /// Only produced inside a `unicode-range` declaration, so selectors like `u+a` still tokenize as CSS 3 says.
    case unicodeRange(UInt32, UInt32)
    case whitespace, cdo, cdc, colon, semicolon, comma
    case leftBracket, rightBracket, leftParen, rightParen, leftBrace, rightBrace
    /// A block nested deeper than the parser's limit, skipped whole.
    case skippedBlock
}

struct Tokenizer {
    private let s: [Unicode.Scalar]
    private var i = 0
    /// Tracks `unicode-range:` so `U+…` becomes a unicode-range token only there.
    private var lastSignificant: [CSSToken] = []
    private var inUnicodeRange = false

    init(_ text: String) {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(text.utf8.count)
        var previousCR = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": scalars.append("\n"); previousCR = true; continue
            case "\n": if !previousCR { scalars.append("\n") }
            case "\u{0C}": scalars.append("\n")
            case "\u{0}": scalars.append("\u{FFFD}")
            default: scalars.append(scalar)
            }
            previousCR = false
        }
        s = scalars
    }

    static func tokenize(_ text: String) -> [CSSToken] {
        var tokenizer = Tokenizer(text)
        var tokens: [CSSToken] = []
        while let token = tokenizer.next() { tokens.append(token) }
        return tokens
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let j = i + offset
        return j < s.count ? s[j] : nil
    }

    mutating func next() -> CSSToken? {
        let token = consumeToken()
        if let token {
            switch token {
            case .whitespace: break
            case .colon:
                if let last = lastSignificant.last, case .ident(let name) = last,
                    name.lowercased() == "unicode-range"
                {
                    inUnicodeRange = true
                }
                lastSignificant = [token]
            case .semicolon, .rightBrace, .leftBrace:
                inUnicodeRange = false
                lastSignificant = [token]
            default: lastSignificant = [token]
            }
        }
        return token
    }

    static func isHex(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return ("0"..."9").contains(c) || ("a"..."f").contains(c) || ("A"..."F").contains(c)
    }
    static func isDigit(_ c: Unicode.Scalar?) -> Bool { c.map { ("0"..."9").contains($0) } ?? false }
    static func isNameStart(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "_" || c.value >= 0x80
    }
    static func isName(_ c: Unicode.Scalar?) -> Bool { isNameStart(c) || isDigit(c) || c == "-" }
    static func isWhitespace(_ c: Unicode.Scalar?) -> Bool { c == " " || c == "\n" || c == "\t" }

    private func validEscape(_ offset: Int = 0) -> Bool {
        peek(offset) == "\\" && peek(offset + 1) != "\n" && peek(offset + 1) != nil
    }

    private func startsIdentifier(_ offset: Int = 0) -> Bool {
        let c = peek(offset)
        if c == "-" {
            return Tokenizer.isNameStart(peek(offset + 1)) || peek(offset + 1) == "-" || validEscape(offset + 1)
        }
        if Tokenizer.isNameStart(c) { return true }
        return validEscape(offset)
    }

    private func startsNumber() -> Bool {
        let c = peek()
        if c == "+" || c == "-" {
            return Tokenizer.isDigit(peek(1)) || (peek(1) == "." && Tokenizer.isDigit(peek(2)))
        }
        if c == "." { return Tokenizer.isDigit(peek(1)) }
        return Tokenizer.isDigit(c)
    }

    private mutating func consumeComments() {
        while peek() == "/" && peek(1) == "*" {
            i += 2
            while i < s.count && !(s[i] == "*" && peek(1) == "/") { i += 1 }
            i = min(i + 2, s.count)
        }
    }

    private mutating func consumeToken() -> CSSToken? {
        consumeComments()
        guard i < s.count else { return nil }
        let c = s[i]
        if Tokenizer.isWhitespace(c) {
            while Tokenizer.isWhitespace(peek()) { i += 1 }
            return .whitespace
        }
        if inUnicodeRange, c == "u" || c == "U", peek(1) == "+", Tokenizer.isHex(peek(2)) || peek(2) == "?" {
            i += 2
            return consumeUnicodeRange()
        }
        switch c {
        case "\"", "'":
            i += 1
            return consumeString(c)
        case "#":
            if Tokenizer.isName(peek(1)) || validEscape(1) {
                i += 1
                let isID = startsIdentifier()
                return .hash(consumeName(), isID: isID)
            }
            i += 1
            return .delim(c)
        case "(": i += 1; return .leftParen
        case ")": i += 1; return .rightParen
        case "[": i += 1; return .leftBracket
        case "]": i += 1; return .rightBracket
        case "{": i += 1; return .leftBrace
        case "}": i += 1; return .rightBrace
        case ",": i += 1; return .comma
        case ":": i += 1; return .colon
        case ";": i += 1; return .semicolon
        case "+", ".":
            if startsNumber() { return consumeNumeric() }
            i += 1
            return .delim(c)
        case "-":
            if startsNumber() { return consumeNumeric() }
            if peek(1) == "-" && peek(2) == ">" {
                i += 3
                return .cdc
            }
            if startsIdentifier() { return consumeIdentLike() }
            i += 1
            return .delim(c)
        case "<":
            if peek(1) == "!" && peek(2) == "-" && peek(3) == "-" {
                i += 4
                return .cdo
            }
            i += 1
            return .delim(c)
        case "@":
            if startsIdentifier(1) {
                i += 1
                return .atKeyword(consumeName())
            }
            i += 1
            return .delim(c)
        case "\\":
            if validEscape() { return consumeIdentLike() }
            i += 1
            return .delim(c)
        default:
            if Tokenizer.isDigit(c) { return consumeNumeric() }
            if Tokenizer.isNameStart(c) { return consumeIdentLike() }
            i += 1
            return .delim(c)
        }
    }

    private mutating func consumeUnicodeRange() -> CSSToken {
        var digits = ""
        while digits.count < 6, Tokenizer.isHex(peek()) {
            digits.unicodeScalars.append(s[i])
            i += 1
        }
        var questions = 0
        while digits.count + questions < 6, peek() == "?" {
            questions += 1
            i += 1
        }
        if questions > 0 {
            let low = UInt32(digits + String(repeating: "0", count: questions), radix: 16) ?? 0
            let high = UInt32(digits + String(repeating: "F", count: questions), radix: 16) ?? 0
            return .unicodeRange(low, min(high, 0x10FFFF))
        }
        let start = UInt32(digits, radix: 16) ?? 0
        if peek() == "-", Tokenizer.isHex(peek(1)) {
            i += 1
            var end = ""
            while end.count < 6, Tokenizer.isHex(peek()) {
                end.unicodeScalars.append(s[i])
                i += 1
            }
            return .unicodeRange(start, UInt32(end, radix: 16) ?? start)
        }
        return .unicodeRange(start, start)
    }

    private mutating func consumeEscape() -> Unicode.Scalar {
        // The backslash is already consumed.
        guard i < s.count else { return "\u{FFFD}" }
        if Tokenizer.isHex(s[i]) {
            var hex = ""
            while hex.count < 6, Tokenizer.isHex(peek()) {
                hex.unicodeScalars.append(s[i])
                i += 1
            }
            if Tokenizer.isWhitespace(peek()) { i += 1 }
            let value = UInt32(hex, radix: 16) ?? 0
            if value == 0 || (0xD800...0xDFFF).contains(value) || value > 0x10FFFF { return "\u{FFFD}" }
            return Unicode.Scalar(value) ?? "\u{FFFD}"
        }
        let c = s[i]
        i += 1
        return c
    }

    private mutating func consumeName() -> String {
        var name = String.UnicodeScalarView()
        while i < s.count {
            let c = s[i]
            if Tokenizer.isName(c) {
                name.append(c)
                i += 1
            } else if validEscape() {
                i += 1
                name.append(consumeEscape())
            } else {
                break
            }
        }
        return String(name)
    }

    private mutating func consumeString(_ quote: Unicode.Scalar) -> CSSToken {
        var value = String.UnicodeScalarView()
        while i < s.count {
            let c = s[i]
            if c == quote {
                i += 1
                return .string(String(value))
            }
            if c == "\n" { return .badString }  // newline not consumed: reprocessed as whitespace
            if c == "\\" {
                if i + 1 >= s.count {
                    i += 1
                    continue
                }
                if s[i + 1] == "\n" {
                    i += 2
                    continue
                }
                i += 1
                value.append(consumeEscape())
                continue
            }
            value.append(c)
            i += 1
        }
        return .string(String(value))  // EOF: a parse error, but the string stands
    }

    private mutating func consumeNumber() -> (Double, Bool) {
        var repr = ""
        var isInteger = true
        if peek() == "+" || peek() == "-" {
            repr.unicodeScalars.append(s[i])
            i += 1
        }
        while Tokenizer.isDigit(peek()) {
            repr.unicodeScalars.append(s[i])
            i += 1
        }
        if peek() == ".", Tokenizer.isDigit(peek(1)) {
            isInteger = false
            repr.unicodeScalars.append(".")
            i += 1
            while Tokenizer.isDigit(peek()) {
                repr.unicodeScalars.append(s[i])
                i += 1
            }
        }
        if peek() == "e" || peek() == "E" {
            let signed = (peek(1) == "+" || peek(1) == "-") && Tokenizer.isDigit(peek(2))
            if signed || Tokenizer.isDigit(peek(1)) {
                isInteger = false
                repr += "e"
                i += 1
                if signed {
                    repr.unicodeScalars.append(s[i])
                    i += 1
                }
                while Tokenizer.isDigit(peek()) {
                    repr.unicodeScalars.append(s[i])
                    i += 1
                }
            }
        }
        if repr.hasPrefix("+") { repr.removeFirst() }
        if repr.hasPrefix(".") { repr = "0" + repr }
        if repr.hasPrefix("-.") { repr = "-0" + repr.dropFirst() }
        var value = Double(repr) ?? 0
        if !value.isFinite { value = value > 0 ? 1e30 : -1e30 }
        return (value, isInteger)
    }

    private mutating func consumeNumeric() -> CSSToken {
        let (value, isInteger) = consumeNumber()
        if startsIdentifier() { return .dimension(value, consumeName()) }
        if peek() == "%" {
            i += 1
            return .percentage(value)
        }
        return .number(value, isInteger: isInteger)
    }

    private mutating func consumeIdentLike() -> CSSToken {
        let name = consumeName()
        if peek() == "(" {
            i += 1
            if name.lowercased() == "url" {
                while Tokenizer.isWhitespace(peek()) && Tokenizer.isWhitespace(peek(1)) { i += 1 }
                let next = Tokenizer.isWhitespace(peek()) ? peek(1) : peek()
                if next == "\"" || next == "'" { return .function(name) }
                return consumeURL()
            }
            return .function(name)
        }
        return .ident(name)
    }

    private mutating func consumeURL() -> CSSToken {
        var value = String.UnicodeScalarView()
        while Tokenizer.isWhitespace(peek()) { i += 1 }
        while i < s.count {
            let c = s[i]
            if c == ")" {
                i += 1
                return .url(String(value))
            }
            if Tokenizer.isWhitespace(c) {
                while Tokenizer.isWhitespace(peek()) { i += 1 }
                if peek() == ")" || peek() == nil {
                    if peek() == ")" { i += 1 }
                    return .url(String(value))
                }
                consumeBadURLRemnants()
                return .badURL
            }
            if c == "\"" || c == "'" || c == "(" || (c.value < 0x20 && c != "\t") || c.value == 0x7F {
                consumeBadURLRemnants()
                return .badURL
            }
            if c == "\\" {
                if validEscape() {
                    i += 1
                    value.append(consumeEscape())
                    continue
                }
                consumeBadURLRemnants()
                return .badURL
            }
            value.append(c)
            i += 1
        }
        return .url(String(value))
    }

    private mutating func consumeBadURLRemnants() {
        while i < s.count {
            if s[i] == ")" {
                i += 1
                return
            }
            if validEscape() {
                i += 1
                _ = consumeEscape()
            } else {
                i += 1
            }
        }
    }
}
