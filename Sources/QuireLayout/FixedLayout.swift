import QuireContainer
import QuireCore
import QuireDocument
import QuireImages
import QuireStyle
import QuireXML

/// Fixed-layout (pre-paginated) spine items: one page each, at the item's viewport size scaled to
/// fit the device page. Image-only pages and SVG documents become a single image; other pages are
/// laid out at their viewport width and scaled.
extension BookLayout {
    func fixedLayoutChapter(_ spineIndex: Int, item: ManifestItem, path: String, worker: LayoutWorker) -> ChapterLayout {
        let profile = settings.profile
        var warnings: [Warning] = []
        let href = item.href
        func page(items: [DisplayItem], textLength: Int, document: ContentDocument?, images: [String]) -> ChapterLayout {
            var page = Page(spineIndex: spineIndex, indexInChapter: 0, width: profile.width, height: profile.height, items: items, lines: [], start: 0, end: textLength)
            // A page that is one picture shows only it (a spread puts it against its neighbour).
            if items.count == 1, case .image(let box, _) = items[0] { page.clip = box.rect }
            var chapter = ChapterLayout(spineIndex: spineIndex, href: href, pages: [page], textLength: textLength, imageCount: images.count, warnings: warnings, document: document, imagePaths: images)
            chapter.settle = SettleRecord(images: images.count, measured: images.count, passes: 1)
            return chapter
        }
        /// The viewport scaled and centred on the device page.
        func placement(width: Double, height: Double) -> Rect {
            let scale = min(Double(profile.width) / max(width, 1), Double(profile.height) / max(height, 1))
            let w = width * scale
            let h = height * scale
            return Rect(x: ((Double(profile.width) - w) / 2).rounded(), y: ((Double(profile.height) - h) / 2).rounded(), width: w.rounded(), height: h.rounded())
        }
        guard let bytes = try? container.read(path: path) else {
            warnings.append(Warning("chapter", "\(href): cannot read"))
            return page(items: [], textLength: 0, document: nil, images: [])
        }
        // An SVG document that only frames a bitmap (`<svg><image xlink:href>`): the bitmap, since
        // librsvg reading from memory cannot follow the relative link.
        if item.mediaType == "image/svg+xml", let tree = try? XMLParser.parse(bytes, path: path, mode: .recover), let root = tree.root {
            let drawn = root.elementChildren.filter { !["title", "desc", "metadata", "defs", "style"].contains($0.localName) }
            if drawn.count == 1, drawn[0].localName == "image",
                let source = drawn[0].attribute("href", namespace: Namespace.xlink) ?? drawn[0].attribute("href"),
                let resource = Href.resolve(source, relativeTo: path).flatMap({ container.publication.shownResource($0.path) })
            {
                let size = Self.viewBox(root) ?? (Double(profile.width), Double(profile.height))
                let rect = placement(width: size.0, height: size.1)
                return page(items: [.image(ImageBox(rect: rect, resource: resource, alt: "", state: .image), altText: nil)], textLength: 0, document: nil, images: [resource])
            }
        }
        // An SVG document or an image in the spine: the page is that image.
        if item.mediaType == "image/svg+xml" || item.mediaType.hasPrefix("image/") {
            guard let info = try? ImageInfo.measure(bytes) else {
                warnings.append(Warning("image", "\(href): cannot be measured; blank page"))
                return page(items: [], textLength: 0, document: nil, images: [])
            }
            let rect = placement(width: Double(info.width), height: Double(info.height))
            return page(items: [.image(ImageBox(rect: rect, resource: path, alt: "", state: .image), altText: nil)], textLength: 0, document: nil, images: [path])
        }
        guard let document = try? ContentDocument.parse(bytes, path: path, mediaType: item.mediaType, limits: container.archive.limits),
            let root = document.tree.root
        else {
            warnings.append(Warning("chapter", "\(href): cannot parse"))
            return page(items: [], textLength: 0, document: nil, images: [])
        }
        warnings += document.warnings
        var viewport = Self.viewport(root, device: deviceViewport)
        let body = document.body
        let replaced = (body?.descendants() ?? []).filter { ["img", "svg", "image"].contains($0.localName) }
        // Text drawn by the page itself (text inside an SVG picture is part of the picture).
        let svgText = replaced.filter { $0.localName == "svg" }.map(\.textContent).joined()
        let pageText = (body?.textContent ?? "").unicodeScalars.filter { !$0.isXMLWhitespace && !$0.properties.isWhitespace }.count
        let pictureText = svgText.unicodeScalars.filter { !$0.isXMLWhitespace && !$0.properties.isWhitespace }.count
        let hasText = pageText > pictureText
        // A page that is one picture (the usual manga and comic page).
        if !hasText, let first = replaced.first {
            if first.localName == "svg", first.descendants("image").isEmpty {
                let data = Array(XMLSerializer.serialize(first).utf8)
                if viewport == nil, let info = try? ImageInfo.measure(data) { viewport = (Double(info.width), Double(info.height)) }
                let rect = placement(width: viewport?.0 ?? Double(profile.width), height: viewport?.1 ?? Double(profile.height))
                var box = ImageBox(rect: rect, resource: nil, alt: "", state: .image)
                box.inlineData = data
                return page(items: [.image(box, altText: nil)], textLength: document.textLength, document: document, images: [])
            }
            let target = first.localName == "svg" ? first.descendants("image").first! : first
            let source = target.attribute("src") ?? target.attribute("href", namespace: Namespace.xlink) ?? target.attribute("href") ?? ""
            if let resource = Href.resolve(source, relativeTo: path).flatMap({ container.publication.shownResource($0.path) }) {
                if viewport == nil, let data = try? container.read(path: resource), let info = try? ImageInfo.measure(data) {
                    viewport = (Double(info.width), Double(info.height))
                }
                let rect = placement(width: viewport?.0 ?? Double(profile.width), height: viewport?.1 ?? Double(profile.height))
                return page(items: [.image(ImageBox(rect: rect, resource: resource, alt: target.attribute("alt") ?? "", state: .image), altText: nil)], textLength: document.textLength, document: document, images: [resource])
            }
        }
        // Anything else: lay the page out at its viewport, scaled to the device, on one page.
        let size = viewport ?? (Double(profile.width) / profile.pixelsPerCSSPixel, Double(profile.height) / profile.pixelsPerCSSPixel)
        let rect = placement(width: size.0, height: size.1)
        var inner = settings
        inner.profile = PageProfile(name: "fixed-layout", width: Int(rect.width), height: Int(rect.height), dpi: 96 * rect.width / size.0)
        inner.marginPt = 0
        inner.scrolled = false  // a fixed page is a page, whatever the book's flow
        guard
            let nested = try? BookLayout(
                container: container, settings: inner, services: services, settleLimits: settleLimits, measurer: measurer, clipsToViewport: true)
        else {
            return page(items: [], textLength: document.textLength, document: document, images: [])
        }
        var chapter = nested.settleChapter(spineIndex, worker: worker, buildItems: true, fixedLayoutAsFlow: true)
        if chapter.pages.count > 1 {
            chapter.warnings.append(Warning("fixed-layout", "\(href): content overflows its fixed-layout page; only the first page is shown"))
            chapter.pages = [chapter.pages[0]]
            chapter.pages[0].end = chapter.textLength
        }
        chapter.pages = chapter.pages.map { page in
            var placed = page
            placed.items = page.items.map { translate($0, dx: rect.x, dy: rect.y) }
            placed.lines = page.lines.map { $0.moved(dx: rect.x, dy: rect.y) }
            placed.width = profile.width
            placed.height = profile.height
            // Nothing is drawn outside the viewport (EPUB 3.3 §8.2.2.3: the ICB clips).
            // The content is scaled by rect.width / size.0, and the rounded rect can be a fraction
            // of a pixel taller than the scaled viewport: clip to the scaled viewport itself.
            placed.clip = Rect(x: rect.x, y: rect.y, width: rect.width, height: min(rect.height, size.1 * rect.width / size.0))
            return placed
        }
        return chapter
    }

    /// The device page in CSS px: what `device-width` and `device-height` mean.
    var deviceViewport: (Double, Double) {
        (Double(settings.profile.width) / settings.profile.pixelsPerCSSPixel, Double(settings.profile.height) / settings.profile.pixelsPerCSSPixel)
    }

    static func viewBox(_ svg: XMLElement) -> (Double, Double)? {
        let numbers = (svg.attribute("viewBox") ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
        return numbers.count == 4 && numbers[2] > 0 && numbers[3] > 0 ? (numbers[2], numbers[3]) : nil
    }

    /// `<meta name="viewport" content="width=1200, height=1600">`, or an SVG root's size.
    static func viewport(_ root: XMLElement, device: (Double, Double)) -> (Double, Double)? {
        // Only the first viewport meta counts (EPUB 3.3, fixed layouts: later ones are ignored).
        guard let meta = root.descendants("meta").first(where: { $0.attribute("name")?.trimmingWhitespace().lowercased() == "viewport" }) else {
            return nil
        }
        let size = viewportSize(meta.attribute("content") ?? "", device: device)
        guard let width = size.width, let height = size.height, width > 0, height > 0 else { return nil }
        return (width, height)
    }

    /// The width and height of a viewport meta's `content`, read as EPUB's algorithm reads it:
    /// properties split on commas and semicolons, the first value of a repeated property wins,
    /// a unit after the number is ignored (values are CSS px: `1000px` and `600mm` are 1000 and
    /// 600), `device-width` and `device-height` are the device's, and anything else is skipped.
    static func viewportSize(_ content: String, device: (Double, Double)) -> (width: Double?, height: Double?) {
        var width: Double?
        var height: Double?
        for part in content.split(whereSeparator: { $0 == "," || $0 == ";" }) {
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0).trimmingWhitespace().lowercased() }
            guard pair.count == 2, let value = viewportValue(pair[1], device: device) else { continue }
            if pair[0] == "width", width == nil { width = value }
            if pair[0] == "height", height == nil { height = value }
        }
        return (width, height)
    }

    private static func viewportValue(_ text: String, device: (Double, Double)) -> Double? {
        if text == "device-width" { return device.0 }
        if text == "device-height" { return device.1 }
        let number = text.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        return Double(number)
    }
}

/// Writes an element subtree back out as XML (for inline SVG handed to librsvg).
enum XMLSerializer {
    /// `styleSheet`, when given, goes in a `<style>` first inside the root: the CSS of the
    /// document around an inline picture, which librsvg would not otherwise see.
    static func serialize(_ element: XMLElement, styleSheet: String? = nil) -> String {
        var out = ""
        write(element, root: true, styleSheet: styleSheet, to: &out)
        return out
    }

    private static func prefix(for namespace: String) -> String? {
        switch namespace {
        case Namespace.xlink: return "xlink"
        case Namespace.xml: return "xml"
        default: return nil
        }
    }

    private static func write(_ element: XMLElement, root: Bool, styleSheet: String? = nil, to out: inout String) {
        let name = element.localName
        out += "<" + name
        if root { out += " xmlns=\"\(Namespace.svg)\" xmlns:xlink=\"\(Namespace.xlink)\"" }
        for attribute in element.attributes {
            if !attribute.name.namespace.isEmpty && prefix(for: attribute.name.namespace) == nil { continue }
            let qualified = prefix(for: attribute.name.namespace).map { "\($0):\(attribute.name.local)" } ?? attribute.name.local
            out += " \(qualified)=\"\(escape(attribute.value, attribute: true))\""
        }
        out += ">"
        if let styleSheet { out += "<style type=\"text/css\">" + escape(styleSheet, attribute: false) + "</style>" }
        for child in element.tree.childIDs(of: element.id) {
            if let childElement = element.tree.element(child) {
                write(childElement, root: false, to: &out)
            } else {
                out += escape(element.tree.text(of: child), attribute: false)
            }
        }
        out += "</" + name + ">"
    }

    private static func escape(_ text: String, attribute: Bool) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
