import CGLib
import CQuireDelayLoad
import Glibc
import QuireCore
import QuireImages

/// One outline (bookmarks) entry: `page` is the 1-based source page, nil when it points nowhere.
public struct PDFOutlineItem: Sendable, Equatable {
    public var title: String
    public var page: Int?
    public var children: [PDFOutlineItem]

    public init(title: String, page: Int?, children: [PDFOutlineItem] = []) {
        self.title = title
        self.page = page
        self.children = children
    }

    /// Entries in the whole tree.
    public var count: Int { 1 + children.reduce(0) { $0 + $1.count } }
}

public struct PDFMetadata: Sendable, Equatable {
    public var title: String?
    public var author: String?
    public var subject: String?
    public var creator: String?
    public var producer: String?
    /// ISO 8601.
    public var creationDate: String?
}

/// A page as a reader sees it: the crop box in points with /Rotate applied.
public struct PDFPageInfo: Sendable, Equatable {
    public var width: Double
    public var height: Double
    /// The page label (/PageLabels), nil when the document has none.
    public var label: String?
}

/// Everything `quire info` and the position map need, read once. Plain values: safe to share.
public struct PDFInfo: Sendable {
    public var pages: [PDFPageInfo]
    public var metadata: PDFMetadata
    public var outline: [PDFOutlineItem]
    public var hasLabels: Bool
    public var warnings: [Warning]

    public var pageCount: Int { pages.count }
    public var outlineCount: Int { outline.reduce(0) { $0 + $1.count } }
}

/// A poppler document. Not thread-safe (poppler's documents aren't): each worker opens its own.
public final class PDFDocument {
    /// Outline trees deeper or larger than this are cut (hostile files can nest without end).
    public static let maximumOutlineDepth = 64
    public static let maximumOutlineEntries = 100_000

    let document: OpaquePointer
    public let path: String

    /// Opens `path` (a file name; poppler wants a file:// URI, made here). Missing or wrong
    /// passwords are `.passwordRequired` (exit 69); damaged or non-PDF files are `.invalidPDF` (65).
    public init(path: String, password: String? = nil) throws {
        try DelayLoad.requireCairo()
        try DelayLoad.requirePoppler()
        PopplerQuiet.install()
        self.path = path
        let absolute = path.hasPrefix("/") ? path : FileSystem.currentDirectory + "/" + path
        var uriError: UnsafeMutablePointer<GError>?
        guard let uri = g_filename_to_uri(absolute, nil, &uriError) else {
            let message = uriError.map { String(cString: $0.pointee.message) } ?? "bad file name"
            if let uriError { g_error_free(uriError) }
            throw QuireError.cannotOpen(path: path, reason: message)
        }
        defer { g_free(uri) }
        var error: UnsafeMutablePointer<GError>?
        guard let document = poppler_document_new_from_file(uri, password, &error) else {
            let encrypted = quire_poppler_error_is_encrypted(error)
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "cannot be read"
            if let error { g_error_free(error) }
            if encrypted {
                throw QuireError.passwordRequired(
                    password == nil
                        ? "\(path) is encrypted; give its password with --password"
                        : "the password given does not open \(path)")
            }
            throw QuireError.invalidPDF("\(path): \(message.lowercased().hasSuffix("damaged") ? "the document is damaged or truncated" : message)")
        }
        self.document = document
        // Every stored property is set: deinit runs for the throw and releases the document.
        guard pageCount > 0 else {
            throw QuireError.invalidPDF("\(path): the document has no pages")
        }
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(document)) }

    public var pageCount: Int { Int(poppler_document_get_n_pages(document)) }

    /// Runs `body` with the page (0-based `index`), released afterwards.
    func withPage<T>(_ index: Int, _ body: (OpaquePointer) throws -> T) throws -> T {
        guard let page = poppler_document_get_page(document, Int32(index)) else {
            throw QuireError.invalidPDF("\(path): page \(index + 1) cannot be read")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(page)) }
        return try body(page)
    }

    public func info() throws -> PDFInfo {
        var pages: [PDFPageInfo] = []
        var labels: [String?] = []
        for index in 0..<pageCount {
            try withPage(index) { page in
                var width = 0.0, height = 0.0
                poppler_page_get_size(page, &width, &height)
                pages.append(PDFPageInfo(width: width, height: height, label: nil))
                labels.append(Self.take(poppler_page_get_label(page)))
            }
        }
        // Without /PageLabels poppler answers "1", "2", …: only real labels are reported.
        let hasLabels = labels.enumerated().contains { $0.element != nil && $0.element != String($0.offset + 1) }
        if hasLabels { for index in pages.indices { pages[index].label = labels[index] } }
        var warnings: [Warning] = []
        var entries = 0
        var outline: [PDFOutlineItem] = []
        if let iterator = poppler_index_iter_new(document) {
            outline = readOutline(iterator, depth: 0, entries: &entries, warnings: &warnings)
            poppler_index_iter_free(iterator)
        }
        return PDFInfo(pages: pages, metadata: metadata(), outline: outline, hasLabels: hasLabels, warnings: warnings)
    }

    private func readOutline(_ iterator: OpaquePointer, depth: Int, entries: inout Int, warnings: inout [Warning]) -> [PDFOutlineItem] {
        var items: [PDFOutlineItem] = []
        repeat {
            entries += 1
            guard entries <= Self.maximumOutlineEntries else {
                if !warnings.contains(where: { $0.code == "outline" }) {
                    warnings.append(Warning("outline", "the outline has more than \(Self.maximumOutlineEntries) entries; the rest is ignored"))
                }
                return items
            }
            let title = Self.take(quire_outline_title(iterator)) ?? ""
            let page = Int(quire_outline_page(document, iterator))
            var item = PDFOutlineItem(title: title, page: page > 0 && page <= pageCount ? page : nil)
            if page == 0 || page > pageCount {
                warnings.append(Warning("outline", "the outline entry '\(title.prefix(60))' points to no page of this document"))
            }
            if let child = poppler_index_iter_get_child(iterator) {
                if depth + 1 < Self.maximumOutlineDepth {
                    item.children = readOutline(child, depth: depth + 1, entries: &entries, warnings: &warnings)
                } else {
                    warnings.append(Warning("outline", "the outline is nested deeper than \(Self.maximumOutlineDepth) levels; deeper entries are ignored"))
                }
                poppler_index_iter_free(child)
            }
            items.append(item)
        } while poppler_index_iter_next(iterator) != 0
        return items
    }

    public func metadata() -> PDFMetadata {
        var date: String?
        if let value = poppler_document_get_creation_date_time(document) {
            date = Self.take(g_date_time_format_iso8601(value))
            g_date_time_unref(value)
        }
        return PDFMetadata(
            title: Self.clean(Self.take(poppler_document_get_title(document))), author: Self.clean(Self.take(poppler_document_get_author(document))),
            subject: Self.clean(Self.take(poppler_document_get_subject(document))),
            creator: Self.clean(Self.take(poppler_document_get_creator(document))),
            producer: Self.clean(Self.take(poppler_document_get_producer(document))), creationDate: date)
    }

    /// A glib string as a Swift string, freed.
    static func take(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
        guard let pointer else { return nil }
        defer { g_free(pointer) }
        return String(cString: pointer)
    }

    static func clean(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingUnicodeWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}

/// Poppler prints syntax warnings about damaged files on stderr; Quire reports its own one-line
/// errors instead, so glib's log handler for poppler is silenced once.
enum PopplerQuiet {
    static let installed: Bool = {
        g_log_set_handler("Poppler", GLogLevelFlags(rawValue: ~0), { _, _, _, _ in }, nil)
        return true
    }()

    static func install() { _ = installed }
}
