import QuireCore
import QuireDocument
import QuireLayout

// The position map as Swift values. `json` writes exactly the bytes positions.json has always had
// (members in the documented order, `null` for what is absent), and `init(json:)` reads them back,
// so a map read and written again is byte-identical. docs/position-map.md describes each member.

extension PositionMap {
    /// The engine that made the map.
    public struct Engine: Sendable, Equatable {
        public var name: String
        public var version: String
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// The book the map describes. `language`, `pageProgression` and `spineStep` are EPUB-only.
    public struct BookEntry: Sendable, Equatable {
        public var title: String?
        public var identifier: String?
        public var language: String?
        public var mediaType: String
        public var sha256: String
        public var partialMD5: String
        public var layout: String
        public var pageProgression: String?
        /// The direction pages follow each other: `pageProgression` when the spine sets one, else
        /// from the book's language (right to left for Arabic, Hebrew, Persian, Urdu…).
        public var readingProgression: String?
        public var spineStep: Int?
        public var isPDF: Bool { mediaType == "application/pdf" }

        public init(title: String? = nil, identifier: String? = nil, language: String? = nil, mediaType: String, sha256: String, partialMD5: String, layout: String, pageProgression: String? = nil, readingProgression: String? = nil, spineStep: Int? = nil) {
            self.title = title
            self.identifier = identifier
            self.language = language
            self.mediaType = mediaType
            self.sha256 = sha256
            self.partialMD5 = partialMD5
            self.layout = layout
            self.pageProgression = pageProgression
            self.readingProgression = readingProgression
            self.spineStep = spineStep
        }
    }

    /// What the pages were laid out for: reflowable settings (EPUB) or a PDF's render geometry.
    public enum Profile: Sendable, Equatable {
        case reflowable(ReflowableProfile)
        case pdf(PDFProfile)
    }

    /// A PDF's render geometry as asked for (`dpi`, or a box to fit) and its page preparation.
    public struct PDFProfile: Sendable, Equatable {
        public var name: String?
        public var width: Int?
        public var height: Int?
        public var dpi: Double?
        public var gray: Bool
        public var dither: Bool
        /// Degrees clockwise: 0, 90, 180, 270.
        public var rotate: Int
        public var crop: Bool
        /// `none`, `ltr` or `rtl`.
        public var split: String

        public init(name: String?, width: Int?, height: Int?, dpi: Double?, gray: Bool, dither: Bool, rotate: Int, crop: Bool, split: String) {
            self.name = name
            self.width = width
            self.height = height
            self.dpi = dpi
            self.gray = gray
            self.dither = dither
            self.rotate = rotate
            self.crop = crop
            self.split = split
        }
    }

    /// Everything that changes an EPUB's pagination, and a short hash of it.
    public struct ReflowableProfile: Sendable, Equatable {
        public var name: String?
        public var width: Int
        public var height: Int
        public var dpi: Double
        public var fontSize: Double
        public var margin: Double
        public var lineHeight: Double?
        public var fontFamily: String?
        public var textAlign: String?
        public var hyphenation: Bool
        public var publisherStyles: Bool
        /// The first 16 hex digits of the user stylesheet's SHA-256.
        public var userCSS: String?
        /// `scrolled` when reflowable items were laid out as scrolled documents (else absent).
        public var flow: String? = nil
        /// `horizontal` when vertical text was set in horizontal lines by request (else absent).
        public var writingMode: String? = nil
        /// Maps with equal hashes paginate alike.
        public var profileHash: String

        public init(name: String? = nil, width: Int, height: Int, dpi: Double, fontSize: Double, margin: Double, lineHeight: Double? = nil, fontFamily: String? = nil, textAlign: String? = nil, hyphenation: Bool, publisherStyles: Bool, userCSS: String? = nil, profileHash: String) {
            self.name = name
            self.width = width
            self.height = height
            self.dpi = dpi
            self.fontSize = fontSize
            self.margin = margin
            self.lineHeight = lineHeight
            self.fontFamily = fontFamily
            self.textAlign = textAlign
            self.hyphenation = hyphenation
            self.publisherStyles = publisherStyles
            self.userCSS = userCSS
            self.profileHash = profileHash
        }
    }

    /// One spine item of an EPUB.
    public struct SpineEntry: Sendable, Equatable {
        public var index: Int
        public var href: String
        public var path: String?
        public var mediaType: String?
        public var linear: Bool
        public var itemref: String?
        public var layout: String
        public var firstPage: Int
        public var pageCount: Int
        /// UTF-16 units of the item's text content.
        public var length: Int

        public init(index: Int, href: String, path: String? = nil, mediaType: String? = nil, linear: Bool, itemref: String? = nil, layout: String, firstPage: Int, pageCount: Int, length: Int) {
            self.index = index
            self.href = href
            self.path = path
            self.mediaType = mediaType
            self.linear = linear
            self.itemref = itemref
            self.layout = layout
            self.firstPage = firstPage
            self.pageCount = pageCount
            self.length = length
        }
    }

    /// A page boundary: its offset in the spine item, progressions, CFI and KOReader XPointer.
    public struct Boundary: Sendable, Equatable {
        public var offset: Int
        public var progression: Double
        public var totalProgression: Double
        public var cfi: String?
        public var xpointer: String?

        public init(offset: Int, progression: Double, totalProgression: Double, cfi: String? = nil, xpointer: String? = nil) {
            self.offset = offset
            self.progression = progression
            self.totalProgression = totalProgression
            self.cfi = cfi
            self.xpointer = xpointer
        }
    }

    /// Text around a page's start, the way Readium Locators carry it.
    public struct TextContext: Sendable, Equatable, Hashable {
        public var before: String
        public var highlight: String
        public var after: String
        public init(before: String, highlight: String, after: String) {
            self.before = before
            self.highlight = highlight
            self.after = after
        }
    }

    /// One page of the book (or one output image of a PDF).
    public struct Page: Sendable, Equatable {
        /// 1-based.
        public var page: Int
        /// `pages/NNNN.png`, or nil in a map-only render.
        public var image: String?
        public var label: String?
        public var content: Content

        public enum Content: Sendable, Equatable {
            case text(TextPage)
            case pdf(PDFPage)
        }

        public var text: TextPage? { if case .text(let value) = content { return value } else { return nil } }
        public var pdf: PDFPage? { if case .pdf(let value) = content { return value } else { return nil } }

        public init(page: Int, image: String? = nil, label: String? = nil, content: Content) {
            self.page = page
            self.image = image
            self.label = label
            self.content = content
        }
    }

    /// Where an EPUB page sits in the text.
    public struct TextPage: Sendable, Equatable {
        public var spineIndex: Int
        public var href: String
        public var path: String?
        public var start: Boundary
        public var end: Boundary
        public var excerpt: TextContext?
        /// `left`, `right` or `center` (the spine item's page-spread property).
        public var spread: String?
        /// A scrolled document (flow `scrolled`): its height, image tiles and line positions.
        public var scroll: ScrollPage? = nil

        public init(spineIndex: Int, href: String, path: String? = nil, start: Boundary, end: Boundary, excerpt: TextContext? = nil, spread: String? = nil) {
            self.spineIndex = spineIndex
            self.href = href
            self.path = path
            self.start = start
            self.end = end
            self.excerpt = excerpt
            self.spread = spread
        }
    }

    /// Which page of a PDF an output image shows.
    public struct PDFPage: Sendable, Equatable {
        public var sourcePage: Int
        /// `whole`, `left` or `right` (a split spread).
        public var half: String
        public var locator: Locator

        public init(sourcePage: Int, half: String, locator: Locator) {
            self.sourcePage = sourcePage
            self.half = half
            self.locator = locator
        }
    }

    /// A TOC or landmarks entry, resolved to a page. PDF outlines carry only title, page, children.
    public struct NavigationEntry: Sendable, Equatable {
        public var title: String
        public var href: String?
        public var path: String?
        public var fragment: String?
        public var type: String?
        public var page: Int?
        public var offset: Int?
        public var level: Int?
        public var children: [NavigationEntry]

        public init(title: String, href: String? = nil, path: String? = nil, fragment: String? = nil, type: String? = nil, page: Int? = nil, offset: Int? = nil, level: Int? = nil, children: [NavigationEntry]) {
            self.title = title
            self.href = href
            self.path = path
            self.fragment = fragment
            self.type = type
            self.page = page
            self.offset = offset
            self.level = level
            self.children = children
        }
    }

    public struct PageLabel: Sendable, Equatable {
        public var label: String
        public var page: Int

        public init(label: String, page: Int) {
            self.label = label
            self.page = page
        }
    }

    /// A Readium or Komga positions list, each position tied to a page.
    public struct PositionsEntry: Sendable, Equatable {
        public var rule: String
        public var list: [Item]

        public struct Item: Sendable, Equatable {
            public var position: Int
            public var href: String
            /// The resource's media type, as the toolkit writes the Locator's `type`.
            public var type: String?
            public var progression: Double
            public var totalProgression: Double
            public var page: Int?

            public init(position: Int, href: String, type: String? = nil, progression: Double, totalProgression: Double, page: Int? = nil) {
                self.position = position
                self.href = href
                self.type = type
                self.progression = progression
                self.totalProgression = totalProgression
                self.page = page
            }
        }

        public init(rule: String, list: [Item]) {
            self.rule = rule
            self.list = list
        }
    }

    /// What settling did in one chapter.
    public struct SettleEntry: Sendable, Equatable {
        public var spineIndex: Int
        public var images: Int
        public var measured: Int
        public var passes: Int
        public var unresolved: [SettleRecord.Unresolved]

        public init(spineIndex: Int, images: Int, measured: Int, passes: Int, unresolved: [SettleRecord.Unresolved]) {
            self.spineIndex = spineIndex
            self.images = images
            self.measured = measured
            self.passes = passes
            self.unresolved = unresolved
        }
    }
}

// MARK: - Writing

extension PositionMap {
    /// The map as JSON, members in the documented order.
    public var json: JSON {
        var members: [(String, JSON)] = [
            ("format", .string(PositionMap.format)), ("version", .int(version)),
            ("engine", .object([("name", .string(engine.name)), ("version", .string(engine.version))])),
            ("book", book.json), ("profile", profile.json), ("pageCount", .int(pageCount)),
        ]
        if let length { members.append(("length", .int(length))) }
        if let spine { members.append(("spine", .array(spine.map(\.json)))) }
        // Pages are written one at a time (a 15,000-page map is never a whole tree in memory).
        members.append(("pages", .generated(count: pages.count) { [pages] in pages[$0].json }))
        members.append(("toc", .array(toc.map(\.json))))
        if let pageList { members.append(("pageList", .array(pageList.map { .object([("label", .string($0.label)), ("page", .int($0.page))]) }))) }
        if let landmarks { members.append(("landmarks", .array(landmarks.map(\.json)))) }
        if let positions {
            members.append(("positions", .object(PositionsConvention.allCases.compactMap { convention in positions[convention].map { (convention.rawValue, $0.json) } })))
        }
        if let settle { members.append(("settle", .array(settle.map(\.json)))) }
        if let flow { members.append(("flow", flow.json)) }
        if let spreads { members.append(("spreads", spreads.json)) }
        members.append(("warnings", .array(warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })))
        return .object(members)
    }
}

extension PositionMap.BookEntry {
    var json: JSON {
        var members: [(String, JSON)] = [("title", .optional(title)), ("identifier", .optional(identifier))]
        if !isPDF { members.append(("language", .optional(language))) }
        members += [("mediaType", .string(mediaType)), ("sha256", .string(sha256)), ("partialMD5", .string(partialMD5)), ("layout", .string(layout))]
        if let pageProgression { members.append(("pageProgression", .string(pageProgression))) }
        if let readingProgression { members.append(("readingProgression", .string(readingProgression))) }
        if let spineStep { members.append(("spineStep", .int(spineStep))) }
        return .object(members)
    }
}

extension PositionMap.Profile {
    var json: JSON {
        switch self {
        case .reflowable(let profile):
            var members: [(String, JSON)] = [
                ("name", .optional(profile.name)), ("width", .int(profile.width)), ("height", .int(profile.height)), ("dpi", .double(profile.dpi)),
                ("fontSize", .double(profile.fontSize)), ("margin", .double(profile.margin)),
                ("lineHeight", profile.lineHeight.map(JSON.double) ?? .null), ("fontFamily", .optional(profile.fontFamily)),
                ("textAlign", .optional(profile.textAlign)), ("hyphenation", .bool(profile.hyphenation)),
                ("publisherStyles", .bool(profile.publisherStyles)), ("userCSS", .optional(profile.userCSS)),
            ]
            if let flow = profile.flow { members.append(("flow", .string(flow))) }
            if let writingMode = profile.writingMode { members.append(("writingMode", .string(writingMode))) }
            return .object(members + [("profileHash", .string(profile.profileHash))])
        case .pdf(let profile):
            return .object([
                ("name", .optional(profile.name)), ("width", profile.width.map(JSON.int) ?? .null),
                ("height", profile.height.map(JSON.int) ?? .null), ("dpi", profile.dpi.map(JSON.double) ?? .null),
                ("gray", .bool(profile.gray)), ("dither", .bool(profile.dither)),
                ("rotate", .int(profile.rotate)), ("crop", .bool(profile.crop)), ("split", .string(profile.split)),
            ])
        }
    }
}

extension PositionMap.SpineEntry {
    var json: JSON {
        .object([
            ("index", .int(index)), ("href", .string(href)), ("path", .optional(path)), ("mediaType", .optional(mediaType)),
            ("linear", .bool(linear)), ("itemref", .optional(itemref)), ("layout", .string(layout)),
            ("firstPage", .int(firstPage)), ("pageCount", .int(pageCount)), ("length", .int(length)),
        ])
    }
}

extension PositionMap.Boundary {
    var json: JSON {
        .object([
            ("offset", .int(offset)), ("progression", .double(progression)), ("totalProgression", .double(totalProgression)),
            ("cfi", .optional(cfi)), ("xpointer", .optional(xpointer)),
        ])
    }
}

extension PositionMap.Page {
    var json: JSON {
        var members: [(String, JSON)] = [("page", .int(page)), ("image", .optional(image))]
        switch content {
        case .text(let text):
            members += [
                ("spineIndex", .int(text.spineIndex)), ("href", .string(text.href)), ("path", .optional(text.path)),
                ("start", text.start.json), ("end", text.end.json), ("label", .optional(label)),
            ]
            if let excerpt = text.excerpt {
                members.append(("text", .object([("before", .string(excerpt.before)), ("highlight", .string(excerpt.highlight)), ("after", .string(excerpt.after))])))
            }
            if let spread = text.spread { members.append(("spread", .string(spread))) }
            if let scroll = text.scroll { members.append(("scroll", scroll.json)) }
        case .pdf(let pdf):
            members += [
                ("sourcePage", .int(pdf.sourcePage)), ("half", .string(pdf.half)), ("label", .optional(label)), ("locator", pdf.locator.json),
            ]
        }
        return .object(members)
    }
}

extension PositionMap.NavigationEntry {
    var json: JSON {
        guard let level else {
            // A PDF outline entry.
            return .object([("title", .string(title)), ("page", page.map(JSON.int) ?? .null), ("children", .array(children.map(\.json)))])
        }
        return .object([
            ("title", .string(title)), ("href", .optional(href)), ("path", .optional(path)), ("fragment", .optional(fragment)),
            ("type", .optional(type)), ("page", page.map(JSON.int) ?? .null), ("offset", offset.map(JSON.int) ?? .null),
            ("level", .int(level)), ("children", .array(children.map(\.json))),
        ])
    }
}

extension PositionMap.PositionsEntry {
    var json: JSON {
        .object([
            ("rule", .string(rule)), ("count", .int(list.count)),
            (
                "list",
                .generated(count: list.count) { [list] index in
                    let item = list[index]
                    return .object([
                        ("position", .int(item.position)), ("href", .string(item.href)), ("type", .optional(item.type)),
                        ("progression", .double(item.progression)),
                        ("totalProgression", .double(item.totalProgression)), ("page", item.page.map(JSON.int) ?? .null),
                    ])
                }
            ),
        ])
    }
}

extension PositionMap.SettleEntry {
    var json: JSON {
        .object([
            ("spineIndex", .int(spineIndex)), ("images", .int(images)), ("measured", .int(measured)), ("passes", .int(passes)),
            ("unresolved", .array(unresolved.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })),
        ])
    }
}

// MARK: - Reading

/// Reads members of a JSON object, throwing one clear error for a member that is missing or of the
/// wrong type.
struct MapReader {
    let object: [String: Any]
    let context: String

    init(_ value: Any?, _ context: String) throws {
        guard let object = value as? [String: Any] else { throw QuireError.invalidPackageDocument("position map: \(context) is not an object") }
        self.object = object
        self.context = context
    }

    func fail(_ key: String, _ expected: String) -> QuireError {
        QuireError.invalidPackageDocument("position map: \(context).\(key) is not \(expected)")
    }
    func has(_ key: String) -> Bool { object[key] != nil }
    func string(_ key: String) throws -> String {
        guard let value = object[key] as? String else { throw fail(key, "a string") }
        return value
    }
    func optionalString(_ key: String) throws -> String? {
        guard let value = object[key], !(value is JSONNull) else { return nil }
        guard let string = value as? String else { throw fail(key, "a string or null") }
        return string
    }
    func int(_ key: String) throws -> Int {
        guard let value = object[key] as? Int else { throw fail(key, "an integer") }
        return value
    }
    func optionalInt(_ key: String) throws -> Int? {
        guard let value = object[key], !(value is JSONNull) else { return nil }
        guard let int = value as? Int else { throw fail(key, "an integer or null") }
        return int
    }
    func double(_ key: String) throws -> Double {
        guard let value = JSONReader.double(object[key]) else { throw fail(key, "a number") }
        return value
    }
    func optionalDouble(_ key: String) throws -> Double? {
        guard let value = object[key], !(value is JSONNull) else { return nil }
        guard let double = JSONReader.double(value) else { throw fail(key, "a number or null") }
        return double
    }
    func bool(_ key: String) throws -> Bool {
        guard let value = object[key] as? Bool else { throw fail(key, "true or false") }
        return value
    }
    func array(_ key: String) throws -> [Any] {
        guard let value = object[key] as? [Any] else { throw fail(key, "an array") }
        return value
    }
    func objects<T>(_ key: String, _ make: (MapReader) throws -> T) throws -> [T] {
        try array(key).enumerated().map { index, value in try make(MapReader(value, "\(context).\(key)[\(index)]")) }
    }
    func child(_ key: String) throws -> MapReader { try MapReader(object[key], "\(context).\(key)") }
}

extension PositionMap {
    /// Reads positions.json bytes. A file that is not a Quire map, or of another format version,
    /// is refused with one clear error.
    public init(bytes: [UInt8], source: String = "positions.json") throws {
        let root: Any
        do {
            root = try JSONReader.parse(bytes)
        } catch {
            throw QuireError.invalidPackageDocument("\(source) is not a Quire position map (\(error))")
        }
        guard let object = root as? [String: Any], object["format"] as? String == PositionMap.format else {
            throw QuireError.invalidPackageDocument("\(source) is not a Quire position map")
        }
        guard object["version"] as? Int == PositionMap.version else {
            throw QuireError.unsupported("\(source) is a position map of format version \(object["version"].map { "\($0)" } ?? "?"); this Quire reads version \(PositionMap.version)")
        }
        try self.init(json: object)
    }

    /// Reads a parsed map (the `[String: Any]` JSONReader gives).
    public init(json object: [String: Any]) throws {
        let root = try MapReader(object, "map")
        version = try root.int("version")
        let engineReader = try root.child("engine")
        engine = Engine(name: try engineReader.string("name"), version: try engineReader.string("version"))
        let bookReader = try root.child("book")
        book = BookEntry(
            title: try bookReader.optionalString("title"), identifier: try bookReader.optionalString("identifier"),
            language: try bookReader.optionalString("language"), mediaType: try bookReader.string("mediaType"),
            sha256: try bookReader.string("sha256"), partialMD5: try bookReader.string("partialMD5"), layout: try bookReader.string("layout"),
            pageProgression: try bookReader.optionalString("pageProgression"),
            readingProgression: try bookReader.optionalString("readingProgression"), spineStep: try bookReader.optionalInt("spineStep"))
        let profileReader = try root.child("profile")
        if book.isPDF {
            profile = .pdf(
                PDFProfile(
                    name: try profileReader.optionalString("name"), width: try profileReader.optionalInt("width"),
                    height: try profileReader.optionalInt("height"), dpi: try profileReader.optionalDouble("dpi"),
                    gray: try profileReader.bool("gray"), dither: try profileReader.bool("dither"), rotate: try profileReader.int("rotate"),
                    crop: try profileReader.bool("crop"), split: try profileReader.string("split")))
        } else {
            var reflowable = ReflowableProfile(
                name: try profileReader.optionalString("name"), width: try profileReader.int("width"), height: try profileReader.int("height"),
                dpi: try profileReader.double("dpi"), fontSize: try profileReader.double("fontSize"), margin: try profileReader.double("margin"),
                lineHeight: try profileReader.optionalDouble("lineHeight"), fontFamily: try profileReader.optionalString("fontFamily"),
                textAlign: try profileReader.optionalString("textAlign"), hyphenation: try profileReader.bool("hyphenation"),
                publisherStyles: try profileReader.bool("publisherStyles"), userCSS: try profileReader.optionalString("userCSS"),
                profileHash: try profileReader.string("profileHash"))
            reflowable.flow = try profileReader.optionalString("flow")
            reflowable.writingMode = try profileReader.optionalString("writingMode")
            profile = .reflowable(reflowable)
        }
        pageCount = try root.int("pageCount")
        length = try root.optionalInt("length")
        spine = root.has("spine")
            ? try root.objects("spine") { entry in
                SpineEntry(
                    index: try entry.int("index"), href: try entry.string("href"), path: try entry.optionalString("path"),
                    mediaType: try entry.optionalString("mediaType"), linear: try entry.bool("linear"), itemref: try entry.optionalString("itemref"),
                    layout: try entry.string("layout"), firstPage: try entry.int("firstPage"), pageCount: try entry.int("pageCount"),
                    length: try entry.int("length"))
            } : nil
        let isPDF = book.isPDF
        pages = try root.objects("pages") { entry in
            func boundary(_ key: String) throws -> Boundary {
                let reader = try entry.child(key)
                return Boundary(
                    offset: try reader.int("offset"), progression: try reader.double("progression"),
                    totalProgression: try reader.double("totalProgression"), cfi: try reader.optionalString("cfi"),
                    xpointer: try reader.optionalString("xpointer"))
            }
            let content: Page.Content
            if isPDF {
                content = .pdf(
                    PDFPage(
                        sourcePage: try entry.int("sourcePage"), half: try entry.string("half"),
                        locator: try Locator(json: entry.child("locator").object)))
            } else {
                var excerpt: TextContext?
                if entry.has("text") {
                    let text = try entry.child("text")
                    excerpt = TextContext(before: try text.string("before"), highlight: try text.string("highlight"), after: try text.string("after"))
                }
                var text = TextPage(
                    spineIndex: try entry.int("spineIndex"), href: try entry.string("href"), path: try entry.optionalString("path"),
                    start: try boundary("start"), end: try boundary("end"), excerpt: excerpt, spread: try entry.optionalString("spread"))
                if entry.has("scroll") { text.scroll = try ScrollPage(reading: try entry.child("scroll")) }
                content = .text(text)
            }
            return Page(page: try entry.int("page"), image: try entry.optionalString("image"), label: try entry.optionalString("label"), content: content)
        }
        func navigation(_ reader: MapReader) throws -> NavigationEntry {
            NavigationEntry(
                title: try reader.string("title"), href: try reader.optionalString("href"), path: try reader.optionalString("path"),
                fragment: try reader.optionalString("fragment"), type: try reader.optionalString("type"), page: try reader.optionalInt("page"),
                offset: try reader.optionalInt("offset"), level: try reader.optionalInt("level"), children: try reader.objects("children", navigation))
        }
        toc = try root.objects("toc", navigation)
        pageList = root.has("pageList") ? try root.objects("pageList") { PageLabel(label: try $0.string("label"), page: try $0.int("page")) } : nil
        landmarks = root.has("landmarks") ? try root.objects("landmarks", navigation) : nil
        if root.has("positions") {
            let lists = try root.child("positions")
            var positions: [PositionsConvention: PositionsEntry] = [:]
            for convention in PositionsConvention.allCases where lists.has(convention.rawValue) {
                let list = try lists.child(convention.rawValue)
                positions[convention] = PositionsEntry(
                    rule: try list.string("rule"),
                    list: try list.objects("list") { item in
                        PositionsEntry.Item(
                            position: try item.int("position"), href: try item.string("href"), type: try item.optionalString("type"),
                            progression: try item.double("progression"),
                            totalProgression: try item.double("totalProgression"), page: try item.optionalInt("page"))
                    })
            }
            self.positions = positions
        } else {
            positions = nil
        }
        settle = root.has("settle")
            ? try root.objects("settle") { entry in
                SettleEntry(
                    spineIndex: try entry.int("spineIndex"), images: try entry.int("images"), measured: try entry.int("measured"),
                    passes: try entry.int("passes"),
                    unresolved: try entry.objects("unresolved") { SettleRecord.Unresolved(path: try $0.string("path"), reason: try $0.string("reason")) })
            } : nil
        flow = root.has("flow") ? try FlowEntry(reading: try root.child("flow")) : nil
        spreads = root.has("spreads") ? try Spreads(reading: try root.child("spreads")) : nil
        warnings = try root.objects("warnings") { Warning(try $0.string("code"), try $0.string("message")) }
    }

    /// Reads a positions.json file.
    public init(path: String) throws {
        guard let data = FileSystem.read(path) else { throw QuireError.notFound(path: path) }
        try self.init(bytes: data, source: path)
    }

    /// The bytes of positions.json: the JSON, pretty-printed, and a final newline.
    public func serializedBytes() -> [UInt8] { json.serializedBytes() + [0x0A] }
}
