// CSS values: lengths (with calc()), colours, and the context that resolves them.

enum Unit: UInt8, Hashable, Sendable {
    case px, pt, pc, inch, cm, mm, q, em, rem, ex, ch, vw, vh, vmin, vmax, percent

    static func parse(_ text: String) -> Unit? {
        switch text.lowercased() {
        case "px": return .px
        case "pt": return .pt
        case "pc": return .pc
        case "in": return .inch
        case "cm": return .cm
        case "mm": return .mm
        case "q": return .q
        case "em": return .em
        case "rem": return .rem
        case "ex": return .ex
        case "ch": return .ch
        case "vw": return .vw
        case "vh": return .vh
        case "vmin": return .vmin
        case "vmax": return .vmax
        default: return nil
        }
    }

    var isAbsolute: Bool {
        switch self {
        case .px, .pt, .pc, .inch, .cm, .mm, .q: return true
        default: return false
        }
    }
}

/// What relative units resolve against.
struct LengthContext {
    var fontSize: Double
    var rootFontSize: Double
    var viewportWidth: Double
    var viewportHeight: Double
}

indirect enum CalcNode: Hashable, Sendable {
    case dimension(Double, Unit)
    case number(Double)
    case sum(CalcNode, CalcNode)
    case difference(CalcNode, CalcNode)
    case product(CalcNode, CalcNode)
    case quotient(CalcNode, CalcNode)
    case minimum([CalcNode])
    case maximum([CalcNode])
    case clamp(CalcNode, CalcNode, CalcNode)
}

/// A linear value px + % (numbers are kept apart so `2 * 3px` works).
struct CalcValue {
    var px: Double = 0
    var percent: Double = 0
    var number: Double = 0
    var isNumber: Bool
}

/// A specified length: a single dimension or a calc() expression.
enum SpecifiedLength: Hashable, Sendable {
    case dimension(Double, Unit)
    case calc(CalcNode)

    static let zero = SpecifiedLength.dimension(0, .px)

    var isPercent: Bool { if case .dimension(_, .percent) = self { return true } else { return false } }
    var isZero: Bool { if case .dimension(0, _) = self { return true } else { return false } }

    static func px(_ value: Double, _ unit: Unit, _ context: LengthContext) -> Double {
        switch unit {
        case .px: return value
        case .pt: return value * 96 / 72
        case .pc: return value * 16
        case .inch: return value * 96
        case .cm: return value * 96 / 2.54
        case .mm: return value * 96 / 25.4
        case .q: return value * 96 / 101.6
        case .em: return value * context.fontSize
        case .rem: return value * context.rootFontSize
        case .ex, .ch: return value * context.fontSize * 0.5
        case .vw: return value * context.viewportWidth / 100
        case .vh: return value * context.viewportHeight / 100
        case .vmin: return value * min(context.viewportWidth, context.viewportHeight) / 100
        case .vmax: return value * max(context.viewportWidth, context.viewportHeight) / 100
        case .percent: return value  // handled by callers
        }
    }

    /// Resolves to px or percent. A calc() mixing both is approximated against the viewport width
    /// (ComputedStyle's Length has no mixed form).
    func resolve(_ context: LengthContext, percentBase: Double? = nil) -> Length {
        switch self {
        case .dimension(let value, .percent):
            if let percentBase { return .px(percentBase * value / 100) }
            return .percent(value)
        case .dimension(let value, let unit):
            return .px(SpecifiedLength.px(value, unit, context))
        case .calc(let node):
            guard let value = SpecifiedLength.evaluate(node, context) else { return .zero }
            if value.isNumber { return .px(value.number) }
            if value.percent == 0 { return .px(value.px) }
            if let percentBase { return .px(value.px + percentBase * value.percent / 100) }
            if value.px == 0 { return .percent(value.percent) }
            return .px(value.px + context.viewportWidth * value.percent / 100)
        }
    }

    func resolvePx(_ context: LengthContext, percentBase: Double) -> Double {
        resolve(context, percentBase: percentBase).resolve(against: percentBase)
    }

    static func evaluate(_ node: CalcNode, _ context: LengthContext) -> CalcValue? {
        switch node {
        case .number(let n): return CalcValue(number: n, isNumber: true)
        case .dimension(let v, .percent): return CalcValue(percent: v, isNumber: false)
        case .dimension(let v, let unit): return CalcValue(px: px(v, unit, context), isNumber: false)
        case .sum(let l, let r), .difference(let l, let r):
            guard let a = evaluate(l, context), let b = evaluate(r, context), a.isNumber == b.isNumber else { return nil }
            let sign: Double
            if case .sum = node { sign = 1 } else { sign = -1 }
            return CalcValue(
                px: a.px + sign * b.px, percent: a.percent + sign * b.percent, number: a.number + sign * b.number,
                isNumber: a.isNumber)
        case .product(let l, let r):
            guard let a = evaluate(l, context), let b = evaluate(r, context) else { return nil }
            if a.isNumber {
                return CalcValue(px: b.px * a.number, percent: b.percent * a.number, number: b.number * a.number, isNumber: b.isNumber)
            }
            guard b.isNumber else { return nil }
            return CalcValue(px: a.px * b.number, percent: a.percent * b.number, number: 0, isNumber: false)
        case .quotient(let l, let r):
            guard let a = evaluate(l, context), let b = evaluate(r, context), b.isNumber, b.number != 0 else { return nil }
            return CalcValue(px: a.px / b.number, percent: a.percent / b.number, number: a.number / b.number, isNumber: a.isNumber)
        case .minimum(let items), .maximum(let items):
            let values = items.compactMap { evaluate($0, context) }
            guard values.count == items.count, let first = values.first else { return nil }
            // Percentages cannot be compared without layout; compare their viewport approximation.
            func key(_ v: CalcValue) -> Double { v.isNumber ? v.number : v.px + v.percent * context.viewportWidth / 100 }
            let isMin: Bool
            if case .minimum = node { isMin = true } else { isMin = false }
            return values.dropFirst().reduce(first) { best, v in (isMin ? key(v) < key(best) : key(v) > key(best)) ? v : best }
        case .clamp(let lo, let mid, let hi):
            return evaluate(.maximum([lo, .minimum([mid, hi])]), context)
        }
    }
}

enum CalcParser {
    static let maxDepth = 32

    /// `calc()`, `min()`, `max()`, `clamp()` arguments → a node; nil when invalid.
    static func parse(function name: String, _ args: [CV], depth: Int = 0) -> CalcNode? {
        guard depth < maxDepth else { return nil }
        switch name.lowercased() {
        case "calc", "-webkit-calc", "-moz-calc": return sum(args.significant, depth: depth)
        case "min", "max":
            let items = args.splitCommas().map { sum($0.significant, depth: depth) }
            guard !items.isEmpty, items.allSatisfy({ $0 != nil }) else { return nil }
            return name.lowercased() == "min" ? .minimum(items.map { $0! }) : .maximum(items.map { $0! })
        case "clamp":
            let items = args.splitCommas().map { sum($0.significant, depth: depth) }
            guard items.count == 3, let a = items[0], let b = items[1], let c = items[2] else { return nil }
            return .clamp(a, b, c)
        default: return nil
        }
    }

    private static func sum(_ values: [CV], depth: Int) -> CalcNode? {
        // Split on top-level + and - (delims, or signed numbers following an operand are not operators in CSS).
        var terms: [(Bool, [CV])] = []
        var current: [CV] = []
        var negative = false
        for v in values {
            if case .token(.delim(let d)) = v, d == "+" || d == "-", !current.isEmpty {
                terms.append((negative, current))
                current = []
                negative = d == "-"
                continue
            }
            current.append(v)
        }
        guard !current.isEmpty else { return nil }
        terms.append((negative, current))
        var result: CalcNode? = nil
        for (isNegative, term) in terms {
            guard let node = product(term, depth: depth) else { return nil }
            if let left = result {
                result = isNegative ? .difference(left, node) : .sum(left, node)
            } else {
                result = node
            }
        }
        return result
    }

    private static func product(_ values: [CV], depth: Int) -> CalcNode? {
        var result: CalcNode? = nil
        var pendingOperator: Unicode.Scalar? = nil
        for v in values {
            if case .token(.delim(let d)) = v, d == "*" || d == "/" {
                guard result != nil, pendingOperator == nil else { return nil }
                pendingOperator = d
                continue
            }
            guard let operand = operand(v, depth: depth) else { return nil }
            if let left = result {
                guard let op = pendingOperator else { return nil }
                result = op == "*" ? .product(left, operand) : .quotient(left, operand)
                pendingOperator = nil
            } else {
                result = operand
            }
        }
        return pendingOperator == nil ? result : nil
    }

    private static func operand(_ v: CV, depth: Int) -> CalcNode? {
        switch v {
        case .token(.number(let n, _)): return .number(n)
        case .token(.percentage(let p)): return .dimension(p, .percent)
        case .token(.dimension(let n, let unit)):
            guard let u = Unit.parse(unit) else { return nil }
            return .dimension(n, u)
        case .block("(", let contents): return sum(contents.significant, depth: depth + 1)
        case .function(let name, let args): return parse(function: name, args, depth: depth + 1)
        default: return nil
        }
    }
}

enum ColorParser {
    /// A colour value; `currentColor` is nil inside `.some(nil)`.
    static func parse(_ v: CV) -> Color?? {
        switch v {
        case .token(.ident(let name)):
            let lower = name.lowercased()
            if lower == "currentcolor" { return .some(nil) }
            if lower == "transparent" { return .some(.transparent) }
            if let rgb = namedColors[lower] {
                return .some(Color(red: UInt8(rgb >> 16), green: UInt8((rgb >> 8) & 0xFF), blue: UInt8(rgb & 0xFF)))
            }
            return nil
        case .token(.hash(let hex, _)):
            return hexColor(hex).map { .some($0) }
        case .function(let name, let args):
            return functionColor(name.lowercased(), args).map { .some($0) }
        default:
            return nil
        }
    }

    static func hexColor(_ hex: String) -> Color? {
        let digits = hex.unicodeScalars.compactMap { s -> UInt8? in
            guard let v = UInt8(String(s), radix: 16) else { return nil }
            return v
        }
        guard digits.count == hex.unicodeScalars.count else { return nil }
        switch digits.count {
        case 3, 4:
            let a = digits.count == 4 ? digits[3] * 17 : 255
            return Color(red: digits[0] * 17, green: digits[1] * 17, blue: digits[2] * 17, alpha: a)
        case 6, 8:
            let a = digits.count == 8 ? digits[6] << 4 | digits[7] : 255
            return Color(red: digits[0] << 4 | digits[1], green: digits[2] << 4 | digits[3], blue: digits[4] << 4 | digits[5], alpha: a)
        default:
            return nil
        }
    }

    private static func clampByte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }

    private static func functionColor(_ name: String, _ args: [CV]) -> Color? {
        // Accept both `rgb(1, 2, 3)` and `rgb(1 2 3 / 50%)`.
        var items: [CV] = []
        var alphaItem: CV? = nil
        var sawSlash = false
        for v in args {
            switch v {
            case .token(.whitespace), .token(.comma): continue
            case .token(.delim("/")): sawSlash = true
            default:
                if sawSlash { alphaItem = v } else { items.append(v) }
            }
        }
        if alphaItem == nil, items.count == 4 { alphaItem = items.removeLast() }
        guard items.count == 3 else { return nil }
        var alpha: UInt8 = 255
        if let alphaItem {
            switch alphaItem {
            case .token(.number(let n, _)): alpha = clampByte(n * 255)
            case .token(.percentage(let p)): alpha = clampByte(p / 100 * 255)
            default: return nil
            }
        }
        switch name {
        case "rgb", "rgba":
            var channels: [UInt8] = []
            for item in items {
                switch item {
                case .token(.number(let n, _)): channels.append(clampByte(n))
                case .token(.percentage(let p)): channels.append(clampByte(p / 100 * 255))
                case .token(.ident(let s)) where s.lowercased() == "none": channels.append(0)
                default: return nil
                }
            }
            return Color(red: channels[0], green: channels[1], blue: channels[2], alpha: alpha)
        case "hsl", "hsla", "hwb":
            var hue: Double
            switch items[0] {
            case .token(.number(let n, _)): hue = n
            case .token(.dimension(let n, let unit)):
                switch unit.lowercased() {
                case "deg": hue = n
                case "rad": hue = n * 180 / .pi
                case "grad": hue = n * 0.9
                case "turn": hue = n * 360
                default: return nil
                }
            default: return nil
            }
            func fraction(_ v: CV) -> Double? {
                switch v {
                case .token(.percentage(let p)): return max(0, min(100, p)) / 100
                case .token(.number(let n, _)): return max(0, min(100, n)) / 100
                default: return nil
                }
            }
            guard let second = fraction(items[1]), let third = fraction(items[2]) else { return nil }
            hue = hue.truncatingRemainder(dividingBy: 360)
            if hue < 0 { hue += 360 }
            var (r, g, b): (Double, Double, Double)
            if name == "hwb" {
                // Whiteness and blackness mixed into the pure hue (CSS Color 4 §8).
                let (white, black) = (second, third)
                if white + black >= 1 {
                    let gray = white / (white + black)
                    (r, g, b) = (gray, gray, gray)
                } else {
                    let pure = hslToRGB(hue / 360, 1, 0.5)
                    let scale = 1 - white - black
                    (r, g, b) = (pure.0 * scale + white, pure.1 * scale + white, pure.2 * scale + white)
                }
            } else {
                (r, g, b) = hslToRGB(hue / 360, second, third)
            }
            return Color(red: clampByte(r * 255), green: clampByte(g * 255), blue: clampByte(b * 255), alpha: alpha)
        default:
            return nil
        }
    }

    static func hslToRGB(_ h: Double, _ s: Double, _ l: Double) -> (Double, Double, Double) {
        let t2 = l <= 0.5 ? l * (s + 1) : l + s - l * s
        let t1 = l * 2 - t2
        func hue(_ h0: Double) -> Double {
            var h = h0
            if h < 0 { h += 1 }
            if h > 1 { h -= 1 }
            if h * 6 < 1 { return t1 + (t2 - t1) * h * 6 }
            if h * 2 < 1 { return t2 }
            if h * 3 < 2 { return t1 + (t2 - t1) * (2.0 / 3 - h) * 6 }
            return t1
        }
        return (hue(h + 1.0 / 3), hue(h), hue(h - 1.0 / 3))
    }

    static let namedColors: [String: UInt32] = [
        "aliceblue": 0xF0F8FF, "antiquewhite": 0xFAEBD7, "aqua": 0x00FFFF, "aquamarine": 0x7FFFD4, "azure": 0xF0FFFF,
        "beige": 0xF5F5DC, "bisque": 0xFFE4C4, "black": 0x000000, "blanchedalmond": 0xFFEBCD, "blue": 0x0000FF,
        "blueviolet": 0x8A2BE2, "brown": 0xA52A2A, "burlywood": 0xDEB887, "cadetblue": 0x5F9EA0,
        "chartreuse": 0x7FFF00, "chocolate": 0xD2691E, "coral": 0xFF7F50, "cornflowerblue": 0x6495ED,
        "cornsilk": 0xFFF8DC, "crimson": 0xDC143C, "cyan": 0x00FFFF, "darkblue": 0x00008B, "darkcyan": 0x008B8B,
        "darkgoldenrod": 0xB8860B, "darkgray": 0xA9A9A9, "darkgreen": 0x006400, "darkgrey": 0xA9A9A9,
        "darkkhaki": 0xBDB76B, "darkmagenta": 0x8B008B, "darkolivegreen": 0x556B2F, "darkorange": 0xFF8C00,
        "darkorchid": 0x9932CC, "darkred": 0x8B0000, "darksalmon": 0xE9967A, "darkseagreen": 0x8FBC8F,
        "darkslateblue": 0x483D8B, "darkslategray": 0x2F4F4F, "darkslategrey": 0x2F4F4F, "darkturquoise": 0x00CED1,
        "darkviolet": 0x9400D3, "deeppink": 0xFF1493, "deepskyblue": 0x00BFFF, "dimgray": 0x696969,
        "dimgrey": 0x696969, "dodgerblue": 0x1E90FF, "firebrick": 0xB22222, "floralwhite": 0xFFFAF0,
        "forestgreen": 0x228B22, "fuchsia": 0xFF00FF, "gainsboro": 0xDCDCDC, "ghostwhite": 0xF8F8FF, "gold": 0xFFD700,
        "goldenrod": 0xDAA520, "gray": 0x808080, "green": 0x008000, "greenyellow": 0xADFF2F, "grey": 0x808080,
        "honeydew": 0xF0FFF0, "hotpink": 0xFF69B4, "indianred": 0xCD5C5C, "indigo": 0x4B0082, "ivory": 0xFFFFF0,
        "khaki": 0xF0E68C, "lavender": 0xE6E6FA, "lavenderblush": 0xFFF0F5, "lawngreen": 0x7CFC00,
        "lemonchiffon": 0xFFFACD, "lightblue": 0xADD8E6, "lightcoral": 0xF08080, "lightcyan": 0xE0FFFF,
        "lightgoldenrodyellow": 0xFAFAD2, "lightgray": 0xD3D3D3, "lightgreen": 0x90EE90, "lightgrey": 0xD3D3D3,
        "lightpink": 0xFFB6C1, "lightsalmon": 0xFFA07A, "lightseagreen": 0x20B2AA, "lightskyblue": 0x87CEFA,
        "lightslategray": 0x778899, "lightslategrey": 0x778899, "lightsteelblue": 0xB0C4DE, "lightyellow": 0xFFFFE0,
        "lime": 0x00FF00, "limegreen": 0x32CD32, "linen": 0xFAF0E6, "magenta": 0xFF00FF, "maroon": 0x800000,
        "mediumaquamarine": 0x66CDAA, "mediumblue": 0x0000CD, "mediumorchid": 0xBA55D3, "mediumpurple": 0x9370DB,
        "mediumseagreen": 0x3CB371, "mediumslateblue": 0x7B68EE, "mediumspringgreen": 0x00FA9A,
        "mediumturquoise": 0x48D1CC, "mediumvioletred": 0xC71585, "midnightblue": 0x191970, "mintcream": 0xF5FFFA,
        "mistyrose": 0xFFE4E1, "moccasin": 0xFFE4B5, "navajowhite": 0xFFDEAD, "navy": 0x000080, "oldlace": 0xFDF5E6,
        "olive": 0x808000, "olivedrab": 0x6B8E23, "orange": 0xFFA500, "orangered": 0xFF4500, "orchid": 0xDA70D6,
        "palegoldenrod": 0xEEE8AA, "palegreen": 0x98FB98, "paleturquoise": 0xAFEEEE, "palevioletred": 0xDB7093,
        "papayawhip": 0xFFEFD5, "peachpuff": 0xFFDAB9, "peru": 0xCD853F, "pink": 0xFFC0CB, "plum": 0xDDA0DD,
        "powderblue": 0xB0E0E6, "purple": 0x800080, "rebeccapurple": 0x663399, "red": 0xFF0000,
        "rosybrown": 0xBC8F8F, "royalblue": 0x4169E1, "saddlebrown": 0x8B4513, "salmon": 0xFA8072,
        "sandybrown": 0xF4A460, "seagreen": 0x2E8B57, "seashell": 0xFFF5EE, "sienna": 0xA0522D, "silver": 0xC0C0C0,
        "skyblue": 0x87CEEB, "slateblue": 0x6A5ACD, "slategray": 0x708090, "slategrey": 0x708090, "snow": 0xFFFAFA,
        "springgreen": 0x00FF7F, "steelblue": 0x4682B4, "tan": 0xD2B48C, "teal": 0x008080, "thistle": 0xD8BFD8,
        "tomato": 0xFF6347, "turquoise": 0x40E0D0, "violet": 0xEE82EE, "wheat": 0xF5DEB3, "white": 0xFFFFFF,
        "whitesmoke": 0xF5F5F5, "yellow": 0xFFFF00, "yellowgreen": 0x9ACD32,
        // CSS2 system colours, still seen in old books.
        "windowtext": 0x000000, "window": 0xFFFFFF, "buttontext": 0x000000, "buttonface": 0xF0F0F0,
        "canvas": 0xFFFFFF, "canvastext": 0x000000, "graytext": 0x808080, "linktext": 0x0000EE,
    ]
}
