/// The one error model for the whole toolkit. Each case maps to a sysexits-style exit code
/// so the CLI, batch tools and scripts can tell bad input from unsupported input from I/O trouble.
public enum QuireError: Error, Equatable, Sendable, CustomStringConvertible {
    case usage(String)
    case notFound(path: String)
    case cannotOpen(path: String, reason: String)
    case notAnEPUB(String)
    case corruptArchive(String)
    case missingContainer
    case invalidPackageDocument(String)
    case invalidXML(document: String, reason: String)
    /// An image whose header or data is corrupt or truncated.
    case invalidImage(String)
    case missingResource(href: String, context: String)
    case unsafeEntryName(String)
    case drmProtected(String)
    case limitExceeded(limit: String, detail: String)
    case unsupported(String)
    /// An encrypted PDF opened without its password, or with a wrong one.
    case passwordRequired(String)
    /// A PDF that is damaged, truncated or not a PDF at all.
    case invalidPDF(String)
    case cannotCreateOutput(path: String, reason: String)
    case io(String)
    /// A position (page, Locator, CFI, XPointer, label…) that names nothing in the book.
    case unresolvable(String)

    /// 3 for a position that resolves to nothing (like grep's 1 for no match), then
    /// sysexits(3) conventions: 64 usage, 65 bad data, 66 cannot open input,
    /// 69 unsupported, 73 cannot create output, 74 I/O error.
    public var exitCode: Int32 {
        switch self {
        case .unresolvable: return 3
        case .usage: return 64
        case .notAnEPUB, .corruptArchive, .missingContainer, .invalidPackageDocument, .invalidXML,
            .invalidImage, .missingResource, .unsafeEntryName, .limitExceeded, .invalidPDF:
            return 65
        case .notFound, .cannotOpen: return 66
        case .drmProtected, .unsupported, .passwordRequired: return 69
        case .cannotCreateOutput: return 73
        case .io: return 74
        }
    }

    /// A short stable name for JSON output and tests.
    public var kind: String {
        switch self {
        case .usage: return "usage"
        case .notFound: return "not-found"
        case .cannotOpen: return "cannot-open"
        case .notAnEPUB: return "not-an-epub"
        case .corruptArchive: return "corrupt-archive"
        case .missingContainer: return "missing-container"
        case .invalidPackageDocument: return "invalid-package-document"
        case .invalidXML: return "invalid-xml"
        case .invalidImage: return "invalid-image"
        case .missingResource: return "missing-resource"
        case .unsafeEntryName: return "unsafe-entry-name"
        case .drmProtected: return "drm-protected"
        case .limitExceeded: return "limit-exceeded"
        case .unsupported: return "unsupported"
        case .passwordRequired: return "password-required"
        case .invalidPDF: return "invalid-pdf"
        case .cannotCreateOutput: return "cannot-create-output"
        case .io: return "io"
        case .unresolvable: return "unresolvable"
        }
    }

    public var description: String {
        switch self {
        case .usage(let message): return message
        case .notFound(let path): return "not found: \(path)"
        case .cannotOpen(let path, let reason): return "cannot open \(path): \(reason)"
        case .notAnEPUB(let detail): return "not an EPUB: \(detail)"
        case .corruptArchive(let detail): return "corrupt archive: \(detail)"
        case .missingContainer: return "missing container: META-INF/container.xml is not in the archive"
        case .invalidPackageDocument(let detail): return "invalid package document: \(detail)"
        case .invalidXML(let document, let reason): return "invalid XML in \(document): \(reason)"
        case .invalidImage(let detail): return "invalid image: \(detail)"
        case .missingResource(let href, let context): return "missing resource href: \(href) (\(context))"
        case .unsafeEntryName(let name): return "unsafe archive entry name (escapes the container root): \(name)"
        case .drmProtected(let detail): return "DRM-protected: \(detail)"
        case .limitExceeded(let limit, let detail): return "limit exceeded (\(limit)): \(detail)"
        case .unsupported(let detail): return "unsupported: \(detail)"
        case .passwordRequired(let detail): return "password required: \(detail)"
        case .invalidPDF(let detail): return "invalid PDF: \(detail)"
        case .cannotCreateOutput(let path, let reason): return "cannot create output \(path): \(reason)"
        case .io(let detail): return "I/O error: \(detail)"
        case .unresolvable(let detail): return "unresolvable: \(detail)"
        }
    }
}

/// A recoverable problem: recorded, reported, never fatal.
public struct Warning: Hashable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
