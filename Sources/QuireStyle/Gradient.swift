// CSS gradients (CSS Images 3): linear-gradient, radial-gradient and their repeating forms, as
// background images. Parsed once per declaration; positions resolve against the box at layout.

/// A gradient as the style gives it; `GradientFill` (layout) is one placed in a box.
public struct Gradient: Sendable, Hashable {
    public enum Shape: Sendable, Hashable {
        /// CSS degrees: 0 points up, 90 right, 180 (the default) down.
        case linear(degrees: Double)
        /// `to top right` and the like: +1 right or down, -1 left or up; the angle follows the box.
        case linearToCorner(horizontal: Int, vertical: Int)
        /// Centred, to the farthest corner: a circle, or an ellipse with the box's proportions.
        case radial(circle: Bool)
    }

    public struct Stop: Sendable, Hashable {
        public var color: Color
        /// A fraction of the gradient line, or CSS px along it; nil spreads it between its neighbours.
        public var fraction: Double?
        public var px: Double?

        public init(color: Color, fraction: Double?, px: Double?) {
            self.color = color
            self.fraction = fraction
            self.px = px
        }
    }

    public var shape: Shape
    public var stops: [Stop]
    public var repeating: Bool

    public init(shape: Shape, stops: [Stop], repeating: Bool) {
        self.shape = shape
        self.stops = stops
        self.repeating = repeating
    }

    /// The stops' positions as fractions of a gradient line `length` px long (CSS Images 3 §3.5.3:
    /// the first defaults to 0, the last to 1, missing ones spread evenly, none goes back).
    public func resolvedStops(length: Double) -> [(color: Color, position: Double)] {
        var positions: [Double?] = stops.map { stop in stop.fraction ?? stop.px.map { length > 0 ? $0 / length : 0 } }
        if positions.first == nil || positions[0] == nil { positions[0] = 0 }
        if positions[positions.count - 1] == nil { positions[positions.count - 1] = 1 }
        var highest = -Double.infinity
        for index in positions.indices {
            if let value = positions[index] {
                highest = max(highest, value)
                positions[index] = highest
            }
        }
        var index = 0
        while index < positions.count {
            guard positions[index] == nil else { index += 1; continue }
            var end = index
            while positions[end] == nil { end += 1 }
            let from = positions[index - 1]!, to = positions[end]!
            for step in index..<end { positions[step] = from + (to - from) * Double(step - index + 1) / Double(end - index + 1) }
            index = end
        }
        return zip(stops, positions).map { ($0.color, $1!) }
    }
}

enum GradientParser {
    /// A gradient function, or nil if `value` is not one this engine draws.
    static func parse(_ value: CV) -> Gradient? {
        guard case .function(let rawName, let arguments) = value else { return nil }
        var name = rawName.lowercased()
        for prefix in ["-webkit-", "-moz-", "-o-"] where name.hasPrefix(prefix) { name.removeFirst(prefix.count) }
        let repeating = name.hasPrefix("repeating-")
        if repeating { name.removeFirst("repeating-".count) }
        guard name == "linear-gradient" || name == "radial-gradient" else { return nil }
        var parts = arguments.splitCommas().map { $0.filter { !$0.isWhitespace } }
        guard !parts.isEmpty else { return nil }
        var shape: Gradient.Shape = name == "linear-gradient" ? .linear(degrees: 180) : .radial(circle: false)
        if name == "linear-gradient", let first = parts.first, let direction = linearDirection(first) {
            shape = direction
            parts.removeFirst()
        } else if name == "radial-gradient", let first = parts.first, first.contains(where: { ["circle", "ellipse", "at", "closest-side", "closest-corner", "farthest-side", "farthest-corner"].contains($0.lowerIdent ?? "") }) {
            // The shape; its size and position keywords are read as the default (farthest corner, centred).
            shape = .radial(circle: first.contains { $0.lowerIdent == "circle" })
            parts.removeFirst()
        }
        var stops: [Gradient.Stop] = []
        for part in parts {
            guard let first = part.first, let colour = ColorParser.parse(first) else { return nil }
            var positions: [(fraction: Double?, px: Double?)] = []
            for token in part.dropFirst() {
                switch token {
                case .token(.percentage(let p)): positions.append((p / 100, nil))
                case .token(.number(0, _)): positions.append((0, nil))
                case .token(.dimension(let n, let unit)) where unit.lowercased() == "px": positions.append((nil, n))
                case .token(.dimension(let n, let unit)) where unit.lowercased() == "em" || unit.lowercased() == "rem": positions.append((nil, n * 16))
                default: return nil
                }
            }
            guard positions.count <= 2 else { return nil }
            if positions.isEmpty { stops.append(Gradient.Stop(color: colour ?? Color(red: 0, green: 0, blue: 0), fraction: nil, px: nil)) }
            for position in positions {
                stops.append(Gradient.Stop(color: colour ?? Color(red: 0, green: 0, blue: 0), fraction: position.fraction, px: position.px))
            }
        }
        guard stops.count >= 2 else { return nil }
        return Gradient(shape: shape, stops: stops, repeating: repeating)
    }

    /// `to <side or corner>` or an angle.
    static func linearDirection(_ part: [CV]) -> Gradient.Shape? {
        if part.count == 1, case .token(.dimension(let n, let unit)) = part[0] {
            switch unit.lowercased() {
            case "deg": return .linear(degrees: n)
            case "grad": return .linear(degrees: n * 0.9)
            case "rad": return .linear(degrees: n * 180 / .pi)
            case "turn": return .linear(degrees: n * 360)
            default: return nil
            }
        }
        if part.count == 1, case .token(.number(0, _)) = part[0] { return .linear(degrees: 0) }
        guard part.first?.lowerIdent == "to", (2...3).contains(part.count) else { return nil }
        var horizontal = 0, vertical = 0
        for word in part.dropFirst().compactMap(\.lowerIdent) {
            switch word {
            case "left": horizontal = -1
            case "right": horizontal = 1
            case "top": vertical = -1
            case "bottom": vertical = 1
            default: return nil
            }
        }
        switch (horizontal, vertical) {
        case (0, -1): return .linear(degrees: 0)
        case (1, 0): return .linear(degrees: 90)
        case (0, 1): return .linear(degrees: 180)
        case (-1, 0): return .linear(degrees: 270)
        case (0, 0): return nil
        default: return .linearToCorner(horizontal: horizontal, vertical: vertical)
        }
    }
}
