import QuireContainer
import QuireCore
import QuireLayout

// Synthetic spreads: two pages side by side on a landscape screen, as a reading system shows a
// book on a tablet turned sideways (EPUB 3.3, rendition:spread and page-spread-*).
//
// Whether there are spreads is decided once per book and page box (`SpreadPlan`): the reader's
// `--spreads` choice, the book's `rendition:spread`, and the page box's orientation after
// `rendition:orientation` has turned it. With spreads, every page is laid out at half the
// device's width and the pages are then paired (`SpreadPairing`): in the reading progression,
// each page fills the next free side, a page-spread-left/right item goes to its side, a
// page-spread-center item stands alone, and a reflowable spine item starts a spread of its own
// (its pages are columns of one document, as Readium shows them).

/// The reader's choice: `auto` follows the book on a landscape page box, `both` composes spreads
/// on any page box (unless the book says `none`), `none` never does.
public enum SpreadMode: String, Sendable, Hashable, CaseIterable {
    case auto, none, both
}

/// How a book's pages are arranged on the device: its orientation and whether pages are paired.
public struct SpreadPlan: Sendable, Hashable {
    public var mode: SpreadMode
    /// The device page after `rendition:orientation` (pixels).
    public var deviceWidth: Int
    public var deviceHeight: Int
    /// True when the book's orientation turned the device page.
    public var rotated: Bool
    public var active: Bool
    /// Why, in words (recorded in the map).
    public var reason: String

    /// `orientation`, `spread`: the book's rendition:orientation and rendition:spread.
    public init(mode: SpreadMode, width: Int, height: Int, orientation: String?, spread: String?, scrolled: Bool = false) {
        self.mode = mode
        let wantsLandscape = orientation == "landscape", wantsPortrait = orientation == "portrait"
        rotated = (wantsLandscape && height > width) || (wantsPortrait && width > height)
        deviceWidth = rotated ? height : width
        deviceHeight = rotated ? width : height
        let landscape = deviceWidth > deviceHeight
        let box = "\(landscape ? "landscape" : "portrait") page box \(deviceWidth)×\(deviceHeight)\(rotated ? " (turned for rendition:orientation \(orientation!))" : "")"
        let declared = spread ?? "auto"
        switch (mode, declared) {
        case _ where scrolled:
            active = false
            reason = "scrolled flow: each document is one tall image, never paired"
        case (.none, _):
            active = false
            reason = "--spreads none"
        case (_, "none"):
            active = false
            reason = "the book's rendition:spread is none"
        case (.both, _):
            active = true
            reason = "--spreads both, \(box)"
        case (.auto, "both"), (.auto, "portrait"):
            active = true
            reason = "the book's rendition:spread is \(declared), \(box)"
        default:
            active = landscape
            reason = "--spreads auto and rendition:spread \(declared), \(box)"
        }
    }

    /// The page box each page is laid out in: half the device's width with spreads.
    public var pageWidth: Int { active ? deviceWidth / 2 : deviceWidth }
}

/// One screen: a left and a right page, or one page in the centre (1-based page numbers).
public struct Spread: Sendable, Hashable {
    public var left: Int?
    public var right: Int?
    public var center: Int?

    public init(left: Int? = nil, right: Int? = nil, center: Int? = nil) {
        self.left = left
        self.right = right
        self.center = center
    }

    public var pages: [Int] { [left, center, right].compactMap { $0 } }
}

public enum SpreadPairing {
    /// What pairing needs to know of a page.
    public struct PageFacts: Sendable {
        /// The spine item's page-spread property (`page-spread-left`…), on its first page only.
        public var property: String?
        /// The first page of a reflowable spine item.
        public var startsReflowableItem: Bool

        public init(property: String?, startsReflowableItem: Bool) {
            self.property = property
            self.startsReflowableItem = startsReflowableItem
        }
    }

    /// The spreads of pages in reading order, for a left-to-right or right-to-left progression.
    public static func pair(_ pages: [PageFacts], rightToLeft: Bool) -> [Spread] {
        var spreads: [Spread] = []
        var first: Int?  // the side a spread starts on: left for ltr, right for rtl
        var second: Int?
        func flush() {
            if first != nil || second != nil {
                spreads.append(rightToLeft ? Spread(left: second, right: first) : Spread(left: first, right: second))
            }
            first = nil
            second = nil
        }
        for (index, facts) in pages.enumerated() {
            let number = index + 1
            let startSide = rightToLeft ? "page-spread-right" : "page-spread-left"
            let endSide = rightToLeft ? "page-spread-left" : "page-spread-right"
            switch facts.property {
            case "page-spread-center"?:
                flush()
                spreads.append(Spread(center: number))
            case startSide?:
                flush()
                first = number
            case endSide?:
                if second != nil || (facts.startsReflowableItem && first != nil) { flush() }
                second = number
                flush()
            default:
                if facts.startsReflowableItem { flush() }
                if first == nil && second == nil {
                    first = number
                } else {
                    second = number
                    flush()
                }
            }
        }
        flush()
        return spreads
    }
}

extension PositionMap {
    /// The map's `spreads` member (EPUB): what was decided, and the spreads when there are some.
    public struct Spreads: Sendable, Equatable {
        public var mode: String
        public var active: Bool
        public var reason: String
        /// The device page (a spread image's size), after rendition:orientation.
        public var width: Int
        public var height: Int
        public var list: [Entry]

        public struct Entry: Sendable, Equatable {
            public var spread: Int
            public var left: Int?
            public var right: Int?
            public var center: Int?
            /// `spreads/NNNN.png`, or nil when no images were written.
            public var image: String?
        }

        public init(plan: SpreadPlan, spreads: [Spread], withImages: Bool) {
            mode = plan.mode.rawValue
            active = plan.active
            reason = plan.reason
            width = plan.deviceWidth
            height = plan.deviceHeight
            let digits = PositionMap.digits(forPageCount: spreads.count)
            list = spreads.enumerated().map { index, spread in
                Entry(
                    spread: index + 1, left: spread.left, right: spread.right, center: spread.center,
                    image: withImages ? Self.imageName(forSpread: index + 1, digits: digits) : nil)
            }
        }

        init(reading reader: MapReader) throws {
            mode = try reader.string("mode")
            active = try reader.bool("active")
            reason = try reader.string("reason")
            width = try reader.int("width")
            height = try reader.int("height")
            list = try reader.objects("list") { entry in
                Entry(
                    spread: try entry.int("spread"), left: try entry.optionalInt("left"), right: try entry.optionalInt("right"),
                    center: try entry.optionalInt("center"), image: try entry.optionalString("image"))
            }
        }

        init(mode: String, active: Bool, reason: String, width: Int, height: Int, list: [Entry]) {
            self.mode = mode
            self.active = active
            self.reason = reason
            self.width = width
            self.height = height
            self.list = list
        }

        public static func imageName(forSpread number: Int, digits: Int) -> String {
            "spreads/" + String(repeating: "0", count: max(0, digits - String(number).count)) + String(number) + ".png"
        }

        var json: JSON {
            func page(_ number: Int?) -> JSON { number.map(JSON.int) ?? .null }
            return .object([
                ("mode", .string(mode)), ("active", .bool(active)), ("reason", .string(reason)), ("width", .int(width)), ("height", .int(height)),
                ("list", .array(list.map { entry in
                    .object([
                        ("spread", .int(entry.spread)), ("left", page(entry.left)), ("right", page(entry.right)),
                        ("center", page(entry.center)), ("image", .optional(entry.image)),
                    ])
                })),
            ])
        }
    }
}
