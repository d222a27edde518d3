import QuireCore
import QuireLayout

// Scrolled flow (rendition:flow scrolled-doc and scrolled-continuous). A reading system shows such
// a book as documents that scroll, not pages that turn; what someone pre-rendering it wants is
// each document as one tall image (in tiles of at most `Page.maxTileHeight` px) and a map that
// says where in that image each position is: every line's text offset and y.

/// The reader's choice: `auto` follows the book's rendition:flow.
public enum FlowMode: String, Sendable, Hashable, CaseIterable {
    case auto, paginated, scrolled
}

/// Whether reflowable spine items are paginated or scrolled, and why.
public struct FlowPlan: Sendable, Hashable {
    public var mode: FlowMode
    /// The book's rendition:flow, as written.
    public var declared: String?
    public var scrolled: Bool
    public var reason: String

    public init(mode: FlowMode, declared: String?) {
        self.mode = mode
        self.declared = declared
        let asked = declared ?? "auto"
        switch mode {
        case .paginated:
            scrolled = false
            reason = "--flow paginated"
        case .scrolled:
            scrolled = true
            reason = "--flow scrolled"
        case .auto:
            scrolled = asked == "scrolled-doc" || asked == "scrolled-continuous"
            reason = "--flow auto and rendition:flow \(asked)"
        }
    }
}

extension PositionMap {
    /// The map's `flow` member (EPUB, `quire render`).
    public struct FlowEntry: Sendable, Equatable {
        public var mode: String
        public var declared: String?
        /// `paginated` or `scrolled`: what was done with reflowable items (fixed-layout ones are pages).
        public var layout: String
        public var reason: String
        public var tileHeight: Int

        public init(plan: FlowPlan) {
            mode = plan.mode.rawValue
            declared = plan.declared
            layout = plan.scrolled ? "scrolled" : "paginated"
            reason = plan.reason
            tileHeight = QuireLayout.Page.maxTileHeight
        }

        init(reading reader: MapReader) throws {
            mode = try reader.string("mode")
            declared = try reader.optionalString("declared")
            layout = try reader.string("layout")
            reason = try reader.string("reason")
            tileHeight = try reader.int("tileHeight")
        }

        var json: JSON {
            .object([
                ("mode", .string(mode)), ("declared", .optional(declared)), ("layout", .string(layout)), ("reason", .string(reason)),
                ("tileHeight", .int(tileHeight)),
            ])
        }
    }

    /// A scrolled document's page: its height, its image tiles, and where each line is.
    public struct ScrollPage: Sendable, Equatable {
        public var height: Int
        public var tiles: [Tile]
        /// `[offset, y]` for each line: the UTF-16 offset the line starts at and its top in px.
        public var lines: [[Int]]

        public struct Tile: Sendable, Equatable {
            public var image: String?
            public var y: Int
            public var height: Int
        }

        init(_ page: QuireLayout.Page, number: Int, digits: Int, withImages: Bool) {
            height = page.height
            tiles = page.tiles.enumerated().map { index, band in
                Tile(image: withImages ? PositionMap.imageName(forPage: number, digits: digits, tile: index) : nil, y: band.top, height: band.height)
            }
            var lines: [[Int]] = []
            for line in page.lines.sorted(by: { ($0.rect.y, $0.start) < ($1.rect.y, $1.start) }) where lines.last?[0] != line.start {
                lines.append([line.start, Int(line.rect.y.rounded())])
            }
            self.lines = lines
        }

        init(reading reader: MapReader) throws {
            height = try reader.int("height")
            tiles = try reader.objects("tiles") { Tile(image: try $0.optionalString("image"), y: try $0.int("y"), height: try $0.int("height")) }
            lines = try reader.array("lines").map { ($0 as? [Any] ?? []).compactMap { ($0 as? Int) ?? ($0 as? Double).map { Int($0) } } }
        }

        var json: JSON {
            .object([
                ("height", .int(height)),
                ("tiles", .array(tiles.map { .object([("image", .optional($0.image)), ("y", .int($0.y)), ("height", .int($0.height))]) })),
                ("lines", .array(lines.map { .array($0.map(JSON.int)) })),
            ])
        }
    }
}
