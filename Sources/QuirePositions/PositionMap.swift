import Foundation
import QuireContainer
import QuireCore
import QuireLayout

/// positions.json: every page tied to semantic positions (spine index + UTF-16 offset into the
/// spine item's text content). Documented in docs/position-map.md.
public enum PositionMap {
    public static let format = "quire-position-map"
    public static let version = 1

    public struct BookIdentity: Sendable {
        public var sha256: String
        public init(sha256: String) { self.sha256 = sha256 }
    }

    /// SHA-256 of a file, streamed.
    public static func sha256(ofFile path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw QuireError.cannotOpen(path: path, reason: "cannot be read") }
        defer { try? handle.close() }
        var hash = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { hash.update($0) }
        }
        return hexString(hash.finalize())
    }

    public static func imageName(forPage number: Int, digits: Int) -> String {
        let text = String(number)
        return "pages/" + String(repeating: "0", count: max(0, digits - text.count)) + text + ".png"
    }

    public static func digits(forPageCount count: Int) -> Int { max(4, String(count).count) }

    public static func json(
        layout: BookLayout, result: BookLayout.Result, identity: BookIdentity, profileName: String?, withImages: Bool,
        extraWarnings: [Warning] = []
    ) -> JSON {
        let publication = layout.container.publication
        let settings = layout.settings
        let total = result.pageCount
        let digits = digits(forPageCount: total)
        var spine: [JSON] = []
        var pages: [JSON] = []
        var pageNumber = 1
        var warnings: [Warning] = publication.warnings + extraWarnings
        for chapter in result.chapters {
            spine.append(
                .object([
                    ("index", .int(chapter.spineIndex)), ("href", .string(chapter.href)),
                    ("linear", .bool(publication.spine[chapter.spineIndex].linear)),
                    ("firstPage", .int(pageNumber)), ("pageCount", .int(chapter.pages.count)), ("length", .int(chapter.textLength)),
                ]))
            warnings += chapter.warnings
            for page in chapter.pages {
                pages.append(
                    .object([
                        ("page", .int(pageNumber)),
                        ("image", withImages ? .string(imageName(forPage: pageNumber, digits: digits)) : .null),
                        ("spineIndex", .int(chapter.spineIndex)), ("href", .string(chapter.href)),
                        ("start", .object([("offset", .int(page.start))])), ("end", .object([("offset", .int(page.end))])),
                    ]))
                pageNumber += 1
            }
        }
        let profile: [(String, JSON)] = [
            ("name", .optional(profileName)), ("width", .int(settings.profile.width)), ("height", .int(settings.profile.height)),
            ("dpi", .double(settings.profile.dpi)), ("fontSize", .double(settings.fontSizePt)), ("margin", .double(settings.marginPixels / settings.profile.pixelsPerPoint)),
            ("lineHeight", settings.lineHeight.map(JSON.double) ?? .null), ("fontFamily", .optional(settings.fontFamily)),
            ("textAlign", .optional(settings.textAlign?.rawValue)), ("hyphenation", .bool(settings.hyphenation)),
            ("publisherStyles", .bool(settings.publisherStyles)),
        ]
        return .object([
            ("format", .string(format)), ("version", .int(version)),
            ("engine", .object([("name", .string("quire")), ("version", .string(engineVersion))])),
            (
                "book",
                .object([
                    ("title", .optional(publication.metadata.title)), ("identifier", .optional(publication.metadata.uniqueIdentifier)),
                    ("language", .optional(publication.metadata.languages.first)), ("sha256", .string(identity.sha256)),
                ])
            ),
            ("profile", .object(profile)),
            ("pageCount", .int(total)),
            ("spine", .array(spine)),
            ("pages", .array(pages)),
            ("warnings", .array(warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })),
        ])
    }

    public static let engineVersion = "0.2.0"
}
