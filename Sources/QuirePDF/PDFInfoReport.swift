import Glibc
import QuireCore

/// `quire info` for a PDF: JSON ("format": "quire-info") and text.
public enum PDFInfoReport {
    /// Distinct page sizes in points (2 decimals), in order of first appearance, with counts.
    public static func sizes(_ info: PDFInfo) -> [(width: Double, height: Double, count: Int)] {
        var order: [String] = []
        var groups: [String: (width: Double, height: Double, count: Int)] = [:]
        for page in info.pages {
            let width = (page.width * 100).rounded() / 100, height = (page.height * 100).rounded() / 100
            let key = "\(width)x\(height)"
            if groups[key] == nil { order.append(key) }
            groups[key, default: (width, height, 0)].count += 1
        }
        return order.map { groups[$0]! }
    }

    public static func json(_ info: PDFInfo, file: String) -> JSON {
        let metadata = info.metadata
        func outline(_ items: [PDFOutlineItem]) -> JSON {
            .array(
                items.map {
                    .object([("title", .string($0.title)), ("page", $0.page.map(JSON.int) ?? .null), ("children", outline($0.children))])
                })
        }
        return .object([
            ("format", .string("quire-info")), ("version", .int(1)), ("file", .string(file)), ("mediaType", .string("application/pdf")),
            ("title", .optional(metadata.title)), ("author", .optional(metadata.author)), ("subject", .optional(metadata.subject)),
            ("creator", .optional(metadata.creator)), ("producer", .optional(metadata.producer)),
            ("creationDate", .optional(metadata.creationDate)),
            ("pageCount", .int(info.pageCount)),
            (
                "pageSizes",
                .array(sizes(info).map { .object([("width", .double($0.width)), ("height", .double($0.height)), ("pages", .int($0.count))]) })
            ),
            ("pageLabels", .bool(info.hasLabels)),
            ("labels", info.hasLabels ? .array(info.pages.map { .optional($0.label) }) : .null),
            ("outlineCount", .int(info.outlineCount)),
            ("outline", outline(info.outline)),
            ("warnings", .array(info.warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })),
        ])
    }

    public static func text(_ info: PDFInfo) -> String {
        var lines: [String] = []
        func field(_ label: String, _ value: String) { lines.append(label.padded(toLength: 14) + value) }
        let metadata = info.metadata
        field("Title:", metadata.title ?? "(none)")
        field("Author:", metadata.author ?? "(none)")
        if let subject = metadata.subject { field("Subject:", subject) }
        if let creator = metadata.creator { field("Creator:", creator) }
        if let producer = metadata.producer { field("Producer:", producer) }
        if let date = metadata.creationDate { field("Created:", date) }
        field("Format:", "PDF, \(info.pageCount) page\(info.pageCount == 1 ? "" : "s")")
        let sizes = sizes(info)
        for (index, size) in sizes.prefix(8).enumerated() {
            field(index == 0 ? "Page sizes:" : "", "\(JSON.double(size.width).serialized()) x \(JSON.double(size.height).serialized()) pt (\(size.count) page\(size.count == 1 ? "" : "s"))")
        }
        if sizes.count > 8 { field("", "… and \(sizes.count - 8) more sizes") }
        if info.hasLabels {
            let first = info.pages.prefix(5).compactMap(\.label).joined(separator: ", ")
            field("Page labels:", "yes (\(first)\(info.pageCount > 5 ? ", …" : ""))")
        } else {
            field("Page labels:", "none")
        }
        field("Outline:", "\(info.outlineCount) entr\(info.outlineCount == 1 ? "y" : "ies")")
        func walk(_ items: [PDFOutlineItem], depth: Int) {
            for item in items {
                guard lines.count < 200 else { return }
                lines.append(String(repeating: "  ", count: depth + 1) + item.title + (item.page.map { "  (p. \($0))" } ?? ""))
                walk(item.children, depth: depth + 1)
            }
        }
        walk(info.outline, depth: 0)
        if !info.warnings.isEmpty {
            lines.append("Warnings:")
            for warning in info.warnings.prefix(50) { lines.append("  \(warning)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
