import QuireCore
import QuireDocument

/// A Readium Locator: a resource (`href`) and where in it (`locations`), with the text around the
/// spot. Quire's own precise forms ride along in `locations`: the EPUB CFI, the KOReader XPointer
/// and the UTF-16 offset into the resource's text. Komga and the Readium toolkits read the
/// standard members and ignore the rest.
public struct Locator: Sendable, Hashable {
    public var href: String
    /// The resource's media type.
    public var type: String
    public var title: String?
    public var locations: Locations
    public var text: Text?

    public struct Locations: Sendable, Hashable {
        public var fragments: [String] = []
        /// 0…1 within the resource.
        public var progression: Double?
        /// 1-based, in the publication's positions list.
        public var position: Int?
        /// 0…1 within the publication.
        public var totalProgression: Double?
        public var cssSelector: String?
        public var partialCfi: String?
        /// Quire's: the full EPUB CFI of the spot.
        public var cfi: String?
        /// Quire's: the KOReader XPointer of the spot.
        public var xpointer: String?
        /// Quire's: UTF-16 units into the resource's text content.
        public var offset: Int?

        public init(
            fragments: [String] = [], progression: Double? = nil, position: Int? = nil, totalProgression: Double? = nil,
            cssSelector: String? = nil, partialCfi: String? = nil, cfi: String? = nil, xpointer: String? = nil, offset: Int? = nil
        ) {
            self.fragments = fragments
            self.progression = progression
            self.position = position
            self.totalProgression = totalProgression
            self.cssSelector = cssSelector
            self.partialCfi = partialCfi
            self.cfi = cfi
            self.xpointer = xpointer
            self.offset = offset
        }
    }

    /// The text before, at and after the spot.
    public typealias Text = PositionMap.TextContext

    public init(href: String, type: String, title: String? = nil, locations: Locations = Locations(), text: Text? = nil) {
        self.href = href
        self.type = type
        self.title = title
        self.locations = locations
        self.text = text
    }

    /// Reads a Locator from its JSON object. `href` is required unless `totalProgression` says
    /// where to go; a `position` that is not a whole number is left out, as Readium does.
    public init(json object: [String: Any]) throws {
        func invalid(_ reason: String) -> QuireError { QuireError.usage("invalid locator: \(reason)") }
        let locations = object["locations"] as? [String: Any] ?? [:]
        if let value = object["locations"], !(value is [String: Any]) { throw invalid("locations is not an object") }
        href = object["href"] as? String ?? ""
        type = object["type"] as? String ?? ""
        title = object["title"] as? String
        var parsed = Locations()
        if let fragments = locations["fragments"] {
            guard let list = fragments as? [Any], list.allSatisfy({ $0 is String }) else { throw invalid("fragments is not a list of strings") }
            parsed.fragments = list.compactMap { $0 as? String }
        }
        parsed.progression = JSONReader.double(locations["progression"])
        parsed.totalProgression = JSONReader.double(locations["totalProgression"])
        if let number = JSONReader.double(locations["position"]), number.rounded() == number, abs(number) < 1e15 { parsed.position = Int(number) }
        parsed.cssSelector = locations["cssSelector"] as? String
        parsed.partialCfi = locations["partialCfi"] as? String
        parsed.cfi = locations["cfi"] as? String
        parsed.xpointer = locations["xpointer"] as? String
        parsed.offset = locations["offset"] as? Int
        self.locations = parsed
        if let text = object["text"] as? [String: Any] {
            self.text = Text(
                before: text["before"] as? String ?? "", highlight: text["highlight"] as? String ?? "", after: text["after"] as? String ?? "")
        }
    }

    /// Reads a Locator from JSON text.
    public init(jsonString: String) throws {
        guard let object = (try? JSONReader.parse(jsonString)) as? [String: Any] else {
            throw QuireError.usage("a locator must be a JSON object")
        }
        try self.init(json: object)
    }

    /// Readium's member order: href, type, title, locations (fragments, progression, position,
    /// totalProgression, then the rest), text. Absent members are left out.
    public var json: JSON {
        var members: [(String, JSON)] = [("href", .string(href)), ("type", .string(type))]
        if let title { members.append(("title", .string(title))) }
        members.append(("locations", locations.json))
        if let text {
            members.append(("text", .object([("before", .string(text.before)), ("highlight", .string(text.highlight)), ("after", .string(text.after))])))
        }
        return .object(members)
    }
}

extension Locator.Locations {
    var json: JSON {
        var members: [(String, JSON)] = []
        if !fragments.isEmpty { members.append(("fragments", .array(fragments.map(JSON.string)))) }
        if let progression { members.append(("progression", .double(progression))) }
        if let position { members.append(("position", .int(position))) }
        if let totalProgression { members.append(("totalProgression", .double(totalProgression))) }
        if let cssSelector { members.append(("cssSelector", .string(cssSelector))) }
        if let partialCfi { members.append(("partialCfi", .string(partialCfi))) }
        if let cfi { members.append(("cfi", .string(cfi))) }
        if let xpointer { members.append(("xpointer", .string(xpointer))) }
        if let offset { members.append(("offset", .int(offset))) }
        return .object(members)
    }
}
