import QuireCore
import QuirePDF
import QuirePreparation

/// positions.json for a PDF: one entry per output image (a page, or half of a split spread),
/// tied to its source page with a Readium PDF locator (`#page=N`).
public enum PDFPositionMap {
    /// What the profile member records: the geometry asked for and the page preparation.
    public struct Profile: Sendable {
        public var name: String?
        public var width: Int?
        public var height: Int?
        public var dpi: Double?
        public var gray: Bool
        public var dither: Bool

        public init(name: String?, width: Int?, height: Int?, dpi: Double?, gray: Bool, dither: Bool) {
            self.name = name
            self.width = width
            self.height = height
            self.dpi = dpi
            self.gray = gray
            self.dither = dither
        }
    }

    /// `rendered` holds the output indexes that have images; nil means all of them.
    public static func json(
        info: PDFInfo, plan: [PDFOutputPage], identity: PositionMap.BookIdentity, profile: Profile, preparation: PagePreparation,
        rendered: Set<Int>?
    ) -> JSON {
        let total = plan.count
        let digits = PositionMap.digits(forPageCount: total)
        var firstOutput: [Int: Int] = [:]
        for page in plan where firstOutput[page.sourcePage] == nil { firstOutput[page.sourcePage] = page.index }
        let pages: [JSON] = plan.map { page in
            let hasImage = rendered.map { $0.contains(page.index) } ?? true
            return .object([
                ("page", .int(page.index)),
                ("image", hasImage ? .string(PositionMap.imageName(forPage: page.index, digits: digits)) : .null),
                ("sourcePage", .int(page.sourcePage)),
                ("half", .string(page.half.rawValue)),
                ("label", .optional(info.pages[page.sourcePage - 1].label)),
                (
                    "locator",
                    .object([
                        ("href", .string("#page=\(page.sourcePage)")), ("type", .string("application/pdf")),
                        (
                            "locations",
                            .object([
                                ("position", .int(page.index)),
                                ("totalProgression", .double(total == 0 ? 0 : Double(page.index - 1) / Double(total))),
                            ])
                        ),
                    ])
                ),
            ])
        }
        func toc(_ items: [PDFOutlineItem]) -> JSON {
            .array(
                items.map { item in
                    .object([
                        ("title", .string(item.title)), ("page", item.page.flatMap { firstOutput[$0] }.map(JSON.int) ?? .null),
                        ("children", toc(item.children)),
                    ])
                })
        }
        return .object([
            ("format", .string(PositionMap.format)), ("version", .int(PositionMap.version)),
            ("engine", .object([("name", .string("quire")), ("version", .string(PositionMap.engineVersion))])),
            (
                "book",
                .object([
                    ("title", .optional(info.metadata.title)), ("identifier", .null), ("mediaType", .string("application/pdf")),
                    ("sha256", .string(identity.sha256)), ("partialMD5", .string(identity.partialMD5)), ("layout", .string("pre-paginated")),
                ])
            ),
            (
                "profile",
                .object([
                    ("name", .optional(profile.name)), ("width", profile.width.map(JSON.int) ?? .null),
                    ("height", profile.height.map(JSON.int) ?? .null), ("dpi", profile.dpi.map(JSON.double) ?? .null),
                    ("gray", .bool(profile.gray)), ("dither", .bool(profile.dither)),
                    ("rotate", .int(preparation.rotation.rawValue)), ("crop", .bool(preparation.crop)),
                    ("split", .string(preparation.split.rawValue)),
                ])
            ),
            ("pageCount", .int(total)),
            ("pages", .array(pages)),
            ("toc", toc(info.outline)),
            ("warnings", .array(info.warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })),
        ])
    }
}
