import QuireCore
import QuirePositions
import QuirePDF
import QuirePreparation

/// positions.json for a PDF: one entry per output image (a page, or half of a split spread),
/// tied to its source page with a Readium PDF locator (`#page=N`).
enum PDFPositionMap {
    /// `rendered` holds the output indexes that have images; nil means all of them.
    static func map(
        info: PDFInfo, plan: [PDFOutputPage], identity: PositionMap.BookIdentity, profile: PositionMap.PDFProfile, rendered: Set<Int>?
    ) -> PositionMap {
        let total = plan.count
        let digits = PositionMap.digits(forPageCount: total)
        var firstOutput: [Int: Int] = [:]
        for page in plan where firstOutput[page.sourcePage] == nil { firstOutput[page.sourcePage] = page.index }
        let pages: [PositionMap.Page] = plan.map { page in
            let hasImage = rendered.map { $0.contains(page.index) } ?? true
            let locator = Locator(
                href: "#page=\(page.sourcePage)", type: "application/pdf",
                locations: Locator.Locations(position: page.index, totalProgression: total == 0 ? 0 : Double(page.index - 1) / Double(total)))
            return PositionMap.Page(
                page: page.index, image: hasImage ? PositionMap.imageName(forPage: page.index, digits: digits) : nil,
                label: info.pages[page.sourcePage - 1].label,
                content: .pdf(PositionMap.PDFPage(sourcePage: page.sourcePage, half: page.half.rawValue, locator: locator)))
        }
        func toc(_ items: [PDFOutlineItem]) -> [PositionMap.NavigationEntry] {
            items.map { item in
                PositionMap.NavigationEntry(
                    title: item.title, href: nil, path: nil, fragment: nil, type: nil, page: item.page.flatMap { firstOutput[$0] }, offset: nil,
                    level: nil, children: toc(item.children))
            }
        }
        let book = PositionMap.BookEntry(
            title: info.metadata.title, identifier: nil, language: nil, mediaType: "application/pdf", sha256: identity.sha256,
            partialMD5: identity.partialMD5, layout: "pre-paginated", pageProgression: nil, spineStep: nil)
        return PositionMap(
            book: book,
            profile: .pdf(profile),
            pageCount: total, pages: pages, toc: toc(info.outline), warnings: info.warnings)
    }
}
