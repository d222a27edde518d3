import QuireCore
import QuirePDF
import QuirePaint
import QuirePositions
import QuirePreparation

/// A PDF's pages at one geometry: every page is known up front (nothing to settle). Output pages
/// follow the page preparation (a split spread gives two).
final class PDFPages: Sendable {
    let path: String
    let info: PDFInfo
    let options: PDFRenderOptions
    let plan: [PDFOutputPage]
    let settings: PaginationSettings
    private let identity: @Sendable () throws -> PositionMap.BookIdentity
    /// One poppler document for painting single pages (poppler documents are not shared between threads).
    private let document = LockedValue<PDFDocument?>(nil)

    init(path: String, info: PDFInfo, password: String?, settings: PaginationSettings, identity: @escaping @Sendable () throws -> PositionMap.BookIdentity) {
        self.path = path
        self.info = info
        self.settings = settings
        self.identity = identity
        var options = PDFRenderOptions()
        let profile = settings.layout.profile
        options.scale = settings.pdfScale ?? .fit(width: profile.width, height: profile.height)
        options.preparation = settings.pdfPreparation
        options.password = password
        self.options = options
        plan = PDFRenderer.plan(info, options: options)
    }

    func check(_ address: PageAddress) throws {
        guard address.spineIndex == 0, address.index >= 0, address.index < plan.count else {
            throw QuireError.unresolvable("page \(address) is not in the PDF's \(plan.count) pages")
        }
    }

    func locator(_ address: PageAddress) throws -> Locator {
        try check(address)
        let page = plan[address.index]
        return Locator(
            href: "#page=\(page.sourcePage)", type: "application/pdf",
            locations: Locator.Locations(position: page.index, totalProgression: Double(page.index - 1) / Double(plan.count)))
    }

    private func address(outputIndex index: Int) -> PageAddress { PageAddress(spineIndex: 0, index: index) }

    private func address(sourcePage: Int) throws -> PageAddress {
        guard let page = plan.first(where: { $0.sourcePage == sourcePage }) else {
            throw QuireError.unresolvable("page \(sourcePage) is outside the PDF's \(info.pageCount) pages")
        }
        return address(outputIndex: page.index - 1)
    }

    func resolve(_ target: Target) throws -> PageAddress {
        switch target {
        case .page(let number):
            guard number >= 1, number <= plan.count else { throw QuireError.unresolvable("page \(number) is outside 1…\(plan.count)") }
            return address(outputIndex: number - 1)
        case .lastPage:
            return address(outputIndex: plan.count - 1)
        case .locator(let locator):
            if let fragment = locator.href.split(separator: "#", maxSplits: 1).dropFirst().first, fragment.hasPrefix("page="),
                let number = Int(fragment.dropFirst(5))
            {
                return try address(sourcePage: number)
            }
            if let position = locator.locations.position { return try resolve(.page(position)) }
            if let total = locator.locations.totalProgression { return try resolve(.totalProgression(total)) }
            throw QuireError.unresolvable("a PDF locator needs #page=N, a position or a totalProgression")
        case .totalProgression(let fraction):
            guard fraction >= 0, fraction <= 1 else { throw QuireError.unresolvable("totalProgression \(fraction) is outside 0…1") }
            return address(outputIndex: min(plan.count - 1, Int((fraction * Double(plan.count)).rounded(.down))))
        case .position(let number, _):
            return try resolve(.page(number))
        case .label(let label):
            guard let index = info.pages.firstIndex(where: { $0.label == label }) else { throw QuireError.unresolvable("no page labelled '\(label)'") }
            return try address(sourcePage: index + 1)
        case .tocTitle(let title):
            func flatten(_ items: [PDFOutlineItem]) -> [PDFOutlineItem] { items.flatMap { [$0] + flatten($0.children) } }
            let items = flatten(info.outline)
            guard let item = items.first(where: { $0.title == title }) ?? items.first(where: { $0.title.lowercased() == title.lowercased() }) else {
                throw QuireError.unresolvable("no outline entry titled '\(title)'")
            }
            guard let page = item.page else { throw QuireError.unresolvable("outline entry '\(title)' points to no page") }
            return try address(sourcePage: page)
        case .cfi, .xpointer, .progression:
            throw QuireError.unresolvable("a PDF has no text positions (CFI, XPointer, progression within a resource)")
        }
    }

    /// Paints one output page; `emit` gets its pixels.
    private func withPixels<T>(_ address: PageAddress, _ body: (PDFRenderer.Pixels) throws -> T) throws -> T {
        try check(address)
        let output = plan[address.index]
        return try document.withLock { cached in
            if cached == nil { cached = try PDFDocument(path: path, password: options.password) }
            var result: T?
            let outputs = plan.filter { $0.sourcePage == output.sourcePage }
            try PDFRenderer.renderPage(
                cached!, number: output.sourcePage, info: info.pages[output.sourcePage - 1], outputs: outputs, options: options,
                surfaces: SurfaceCache()
            ) { page, pixels in
                if page == output { result = try body(pixels) }
            }
            return result!
        }
    }

    func render(_ address: PageAddress, paint: PaintSettings) throws -> Bitmap {
        try withPixels(address) { pixels in
            PNGWriter.bitmap(xrgb: pixels.data, width: pixels.width, height: pixels.height, stride: pixels.stride, gray: paint.gray, dither16: paint.dither16)
        }
    }

    func png(_ address: PageAddress, paint: PaintSettings) throws -> [UInt8] {
        try withPixels(address) { pixels in
            try PNGWriter.encode(
                xrgb: pixels.data, width: pixels.width, height: pixels.height, stride: pixels.stride, gray: paint.gray, dither16: paint.dither16,
                level: options.compressionLevel)
        }
    }

    /// What the map's profile records: the geometry asked for and the page preparation.
    func mapProfile(paint: PaintSettings) -> PositionMap.PDFProfile {
        let preparation = options.preparation
        let (name, width, height, dpi): (String?, Int?, Int?, Double?) = {
            switch options.scale {
            case .dpi(let dpi): return (nil, nil, nil, dpi)
            case .fit(let width, let height): return (settings.profileName, width, height, nil)
            }
        }()
        return PositionMap.PDFProfile(
            name: name, width: width, height: height, dpi: dpi, gray: paint.gray, dither: paint.dither16, rotate: preparation.rotation.rawValue,
            crop: preparation.crop, split: preparation.split.rawValue)
    }

    /// The map; `rendered` holds the output page numbers that have images (nil: all of them).
    func map(rendered: Set<Int>?, paint: PaintSettings) throws -> PositionMap {
        PDFPositionMap.map(info: info, plan: plan, identity: try identity(), profile: mapProfile(paint: paint), rendered: rendered)
    }
}
