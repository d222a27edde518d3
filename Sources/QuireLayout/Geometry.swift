import QuireStyle

public struct Point: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

public struct Rect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }

    /// The part between `top` and `bottom` (a page's slice of the flow), or nil when none is.
    public func clipped(top: Double, bottom: Double) -> Rect? {
        let y0 = max(y, top), y1 = min(maxY, bottom)
        return y1 > y0 ? Rect(x: x, y: y0, width: width, height: y1 - y0) : nil
    }

    /// The rectangle inside `edges` (a border box less its borders is the padding box).
    public func inset(by edges: Edges<Double>) -> Rect {
        Rect(x: x + edges.left, y: y + edges.top, width: max(0, width - edges.left - edges.right), height: max(0, height - edges.top - edges.bottom))
    }

    /// The rectangle around this one by `edges` (a content box with its padding and border).
    public func outset(by edges: Edges<Double>) -> Rect {
        Rect(x: x - edges.left, y: y - edges.top, width: width + edges.horizontal, height: height + edges.vertical)
    }

    /// The part both share, or nil when they do not meet.
    public func intersection(_ other: Rect) -> Rect? {
        let left = max(x, other.x), top = max(y, other.y), right = min(maxX, other.maxX), bottom = min(maxY, other.maxY)
        return right > left && bottom > top ? Rect(x: left, y: top, width: right - left, height: bottom - top) : nil
    }

    /// The smallest rectangle holding both.
    public func union(_ other: Rect) -> Rect {
        let left = min(x, other.x), top = min(y, other.y)
        return Rect(x: left, y: top, width: max(maxX, other.maxX) - left, height: max(maxY, other.maxY) - top)
    }
}

/// A device: its screen in pixels and its pixel density. Point sizes (fonts, margins) become pixels
/// through `dpi`, so 12 pt text is the same physical size on every profile.
public struct PageProfile: Sendable, Hashable {
    public var name: String
    public var width: Int
    public var height: Int
    public var dpi: Double
    public var description: String

    public init(name: String, width: Int, height: Int, dpi: Double, description: String = "") {
        self.name = name
        self.width = width
        self.height = height
        self.dpi = dpi
        self.description = description
    }

    public static let all: [PageProfile] = [
        PageProfile(name: "kindle-paperwhite", width: 1236, height: 1648, dpi: 300, description: "Kindle Paperwhite (11th/12th gen), 6.8\" e-ink"),
        PageProfile(name: "kobo-clara", width: 1072, height: 1448, dpi: 300, description: "Kobo Clara HD/2E/BW, 6\" e-ink"),
        PageProfile(name: "eink-6", width: 758, height: 1024, dpi: 212, description: "classic 6\" e-ink reader (Kindle 4–10, Kobo Touch)"),
        PageProfile(name: "phone", width: 1080, height: 2340, dpi: 420, description: "a 6.1\" phone in portrait"),
        PageProfile(name: "tablet", width: 1640, height: 2360, dpi: 264, description: "an 10.9\" tablet in portrait"),
    ]

    public static func named(_ name: String) -> PageProfile? { all.first { $0.name == name } }

    /// Device pixels per point and per CSS px.
    public var pixelsPerPoint: Double { dpi / 72 }
    public var pixelsPerCSSPixel: Double { dpi / 96 }
}

/// Whether vertical books are set in columns.
public enum WritingModeChoice: String, Sendable, Hashable, CaseIterable {
    case auto, horizontal
}

/// Every input that changes pagination.
public struct LayoutSettings: Sendable, Hashable {
    public var profile: PageProfile
    public var fontSizePt: Double = 12
    /// Page margin on every side; nil picks 6% of the page width, at most 36 pt.
    public var marginPt: Double? = nil
    public var lineHeight: Double? = nil
    public var fontFamily: String? = nil
    public var textAlign: TextAlign? = nil
    public var hyphenation = true
    public var publisherStyles = true
    public var userCSS: String? = nil
    /// Scrolled flow (`rendition:flow` scrolled-doc or scrolled-continuous): each reflowable
    /// spine item is one page as tall as its content, the device page its viewport.
    public var scrolled = false
    /// `auto` sets a chapter in columns when the book asks for `writing-mode: vertical-rl`;
    /// `horizontal` sets every chapter in horizontal lines (`--writing-mode horizontal`).
    public var writingMode: WritingModeChoice = .auto

    public init(profile: PageProfile) { self.profile = profile }

    public var marginPixels: Double {
        let points = marginPt ?? min(36, Double(profile.width) / profile.pixelsPerPoint * 0.06)
        return (points * profile.pixelsPerPoint).rounded()
    }

    /// The content box: the page less its margins.
    public var contentRect: Rect {
        let margin = marginPixels
        return Rect(x: margin, y: margin, width: Double(profile.width) - 2 * margin, height: Double(profile.height) - 2 * margin)
    }
}

extension Edges where Value == Double {
    /// Left and right together, and top and bottom.
    public var horizontal: Double { left + right }
    public var vertical: Double { top + bottom }

    /// Two sets of edges one inside the other (a border and the padding inside it).
    public static func + (outer: Edges, inner: Edges) -> Edges {
        Edges(top: outer.top + inner.top, right: outer.right + inner.right, bottom: outer.bottom + inner.bottom, left: outer.left + inner.left)
    }
}
