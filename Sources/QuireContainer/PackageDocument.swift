import QuireCore
import QuireXML

/// Reads an EPUB 2 or EPUB 3 package document (OPF).
struct PackageDocumentParser {
    let tree: XMLTree
    let packagePath: String
    var warnings: [Warning] = []

    init(tree: XMLTree, packagePath: String) {
        self.tree = tree
        self.packagePath = packagePath
    }

    /// OPF elements are matched by local name in the OPF namespace or none (some books omit it).
    private static func isOPF(_ element: XMLElement, _ local: String) -> Bool {
        element.localName == local && (element.namespace == Namespace.opf || element.namespace.isEmpty)
    }

    mutating func parse() throws -> (
        version: String, metadata: Metadata, manifest: [ManifestItem], spine: [SpineItem],
        progression: ReadingProgression, ncxID: String?, guide: [NavPoint], spineStep: Int
    ) {
        guard let package = tree.root, Self.isOPF(package, "package") else {
            throw QuireError.invalidPackageDocument("\(packagePath): the document element is not <package>")
        }
        let version = package.attribute("version")?.trimmingWhitespace() ?? ""
        guard let metadataElement = package.elementChildren.first(where: { Self.isOPF($0, "metadata") }) else {
            throw QuireError.invalidPackageDocument("\(packagePath): no <metadata>")
        }
        guard let manifestElement = package.elementChildren.first(where: { Self.isOPF($0, "manifest") }) else {
            throw QuireError.invalidPackageDocument("\(packagePath): no <manifest>")
        }
        guard let spineElement = package.elementChildren.first(where: { Self.isOPF($0, "spine") }) else {
            throw QuireError.invalidPackageDocument("\(packagePath): no <spine>")
        }
        var metadata = parseMetadata(metadataElement, uniqueIdentifierID: package.attribute("unique-identifier"))
        let manifest = parseManifest(manifestElement)
        let spine = try parseSpine(spineElement, manifest: manifest, bookLayout: metadata.layout)
        let progression: ReadingProgression
        switch spineElement.attribute("page-progression-direction")?.trimmingWhitespace() {
        case "rtl": progression = .rtl
        case "ltr": progression = .ltr
        default: progression = .auto
        }
        if metadata.title == nil { warnings.append(Warning("no-title", "the package document has no dc:title")) }
        if metadata.languages.isEmpty {
            warnings.append(Warning("no-language", "the package document has no dc:language"))
        }
        if metadata.uniqueIdentifier == nil && !metadata.identifiers.isEmpty {
            metadata.uniqueIdentifier = metadata.identifiers[0].value
            warnings.append(
                Warning("unique-identifier", "unique-identifier does not name a dc:identifier; using the first identifier"))
        }
        let guide = package.elementChildren.first(where: { Self.isOPF($0, "guide") }).map(parseGuide) ?? []
        // The CFI step of <spine>: element children count in twos, whatever their namespace.
        let spineStep = ((package.elementChildren.firstIndex { $0.localName == "spine" } ?? 2) + 1) * 2
        return (version, metadata, manifest, spine, progression, spineElement.attribute("toc"), guide, spineStep)
    }

    /// `<meta refines="#id" property="…">` refinements, keyed by the refined id.
    private func refinements(in metadata: XMLElement) -> [String: [(property: String, value: String, language: String?)]] {
        var result: [String: [(property: String, value: String, language: String?)]] = [:]
        for meta in metadata.descendants("meta") {
            guard let refines = meta.attribute("refines"), let property = meta.attribute("property") else { continue }
            let id = refines.hasPrefix("#") ? String(refines.dropFirst()) : refines
            result[id, default: []].append(
                (property.trimmingWhitespace(), meta.textContent.collapsingWhitespace(), meta.attribute("lang", namespace: Namespace.xml)))
        }
        return result
    }

    private mutating func parseMetadata(_ element: XMLElement, uniqueIdentifierID: String?) -> Metadata {
        var metadata = Metadata()
        let refines = refinements(in: element)
        func refined(_ id: String?, _ property: String) -> [String] {
            guard let id else { return [] }
            return refines[id]?.filter { $0.property == property }.map(\.value) ?? []
        }
        func alternates(_ id: String?) -> [AlternateScript] {
            guard let id else { return [] }
            return refines[id]?.filter { $0.property == "alternate-script" }.map {
                AlternateScript(language: $0.language, value: $0.value)
            } ?? []
        }
        let packageDirection = tree.root?.attribute("dir")
        func contributor(_ dc: XMLElement) -> Contributor {
            var roles = refined(dc.attribute("id"), "role")
            if let role = dc.attribute("role", namespace: Namespace.opf) ?? dc.attribute("role") {
                roles.insert(role.trimmingWhitespace(), at: 0)
            }
            let fileAs =
                dc.attribute("file-as", namespace: Namespace.opf) ?? dc.attribute("file-as")
                ?? refined(dc.attribute("id"), "file-as").first
            var contributor = Contributor(
                name: dc.textContent.collapsingWhitespace(), roles: roles, fileAs: fileAs,
                alternateScripts: alternates(dc.attribute("id")))
            contributor.direction = MetadataDirection.resolve(own: dc.attribute("dir"), package: packageDirection, text: contributor.name)
            return contributor
        }
        for dc in element.descendants(nil, Namespace.dc) {
            let value = dc.textContent.collapsingWhitespace()
            switch dc.localName {
            case "title":
                guard !value.isEmpty else { continue }
                var title = Title(
                    value: value, type: refined(dc.attribute("id"), "title-type").first, language: dc.language,
                    alternateScripts: alternates(dc.attribute("id")))
                title.direction = MetadataDirection.resolve(own: dc.attribute("dir"), package: packageDirection, text: value)
                metadata.titles.append(title)
            case "creator": metadata.creators.append(contributor(dc))
            case "contributor": metadata.contributors.append(contributor(dc))
            case "language": if !value.isEmpty { metadata.languages.append(value) }
            case "identifier":
                let id = dc.attribute("id")
                let scheme =
                    dc.attribute("scheme", namespace: Namespace.opf) ?? refined(id, "identifier-type").first
                metadata.identifiers.append(Identifier(id: id, value: value, scheme: scheme))
                if let id, id == uniqueIdentifierID { metadata.uniqueIdentifier = value }
            case "publisher": if !value.isEmpty { metadata.publishers.append(value) }
            case "date":
                metadata.dates.append(
                    DateEntry(value: value, event: dc.attribute("event", namespace: Namespace.opf)))
            case "description":
                if metadata.description == nil { metadata.description = value }
            case "subject": if !value.isEmpty { metadata.subjects.append(value) }
            case "rights": if metadata.rights == nil { metadata.rights = value }
            default: break
            }
        }
        // EPUB 3 display-seq orders titles and creators when present.
        func sequence(_ id: String?) -> Int { refined(id, "display-seq").first.flatMap { Int($0) } ?? Int.max }
        let titleIDs = element.descendants(nil, Namespace.dc).filter { $0.localName == "title" && !$0.textContent.collapsingWhitespace().isEmpty }.map { $0.attribute("id") }
        if titleIDs.count == metadata.titles.count {
            metadata.titles = zip(metadata.titles, titleIDs).enumerated().sorted {
                (sequence($0.element.1), $0.offset) < (sequence($1.element.1), $1.offset)
            }.map(\.element.0)
        }
        let creatorIDs = element.descendants("creator", Namespace.dc).map { $0.attribute("id") }
        if creatorIDs.count == metadata.creators.count {
            metadata.creators = zip(metadata.creators, creatorIDs).enumerated().sorted {
                (sequence($0.element.1), $0.offset) < (sequence($1.element.1), $1.offset)
            }.map(\.element.0)
        }
        for meta in element.descendants("meta") {
            if meta.attribute("property")?.trimmingWhitespace() == "rendition:layout" {
                metadata.layoutDeclarations.append(Metadata.LayoutDeclaration(value: meta.textContent, refines: meta.attribute("refines") != nil))
            }
            if meta.attribute("name") == "fixed-layout", metadata.fixedLayoutMeta == nil { metadata.fixedLayoutMeta = meta.attribute("content") ?? "" }
            if let property = meta.attribute("property"), meta.attribute("refines") == nil {
                let value = meta.textContent.trimmingWhitespace()
                switch property.trimmingWhitespace() {
                case "dcterms:modified": metadata.modified = value
                case "rendition:layout":
                    if let layout = Layout(rawValue: value) {
                        metadata.layout = layout
                    } else {
                        warnings.append(Warning("rendition", "unknown rendition:layout '\(value)'"))
                    }
                case "rendition:orientation": metadata.orientation = value
                case "rendition:spread": metadata.spread = value
                case "rendition:flow": metadata.flow = value
                default: break
                }
            } else if meta.attribute("name") == "cover", let content = meta.attribute("content") {
                metadata.coverItemID = content.trimmingWhitespace()
            }
        }
        return metadata
    }

    private mutating func parseManifest(_ element: XMLElement) -> [ManifestItem] {
        var items: [ManifestItem] = []
        var seen = Set<String>()
        for item in element.elementChildren where Self.isOPF(item, "item") {
            guard let id = item.attribute("id")?.trimmingWhitespace(), let href = item.attribute("href") else {
                warnings.append(Warning("manifest", "a manifest item lacks id or href; skipped"))
                continue
            }
            guard seen.insert(id).inserted else {
                warnings.append(Warning("manifest", "duplicate manifest id '\(id)'; the first is used"))
                continue
            }
            let path = Href.resolve(href, relativeTo: packagePath)?.path
            items.append(
                ManifestItem(
                    id: id, href: href, path: Href.isExternal(href) ? nil : path,
                    mediaType: item.attribute("media-type")?.trimmingWhitespace() ?? "",
                    properties: item.attribute("properties")?.whitespaceTokens() ?? [],
                    fallback: item.attribute("fallback")?.trimmingWhitespace(),
                    mediaOverlay: item.attribute("media-overlay")?.trimmingWhitespace()))
        }
        return items
    }

    private mutating func parseSpine(_ element: XMLElement, manifest: [ManifestItem], bookLayout: Layout) throws
        -> [SpineItem]
    {
        let ids = Set(manifest.map(\.id))
        var spine: [SpineItem] = []
        for itemref in element.elementChildren where Self.isOPF(itemref, "itemref") {
            guard let idref = itemref.attribute("idref")?.trimmingWhitespace() else {
                throw QuireError.invalidPackageDocument("\(packagePath): a spine itemref has no idref")
            }
            guard ids.contains(idref) else {
                throw QuireError.invalidPackageDocument(
                    "\(packagePath): spine itemref '\(idref)' names no manifest item")
            }
            let properties = itemref.attribute("properties")?.whitespaceTokens() ?? []
            var layout = bookLayout
            if properties.contains("rendition:layout-pre-paginated") { layout = .prePaginated }
            if properties.contains("rendition:layout-reflowable") { layout = .reflowable }
            let spread = properties.first { $0.hasSuffix("page-spread-left") || $0.hasSuffix("page-spread-right") || $0.hasSuffix("page-spread-center") }
                .map { String($0.split(separator: ":").last!) }
            spine.append(
                SpineItem(
                    index: spine.count, idref: idref, id: itemref.attribute("id"),
                    linear: itemref.attribute("linear")?.trimmingWhitespace() != "no", linearAttribute: itemref.attribute("linear"),
                    properties: properties, layout: layout, pageSpread: spread))
        }
        guard !spine.isEmpty else {
            throw QuireError.invalidPackageDocument("\(packagePath): the spine is empty")
        }
        return spine
    }

    /// The EPUB 2 guide, used as landmarks when there is no nav document.
    private func parseGuide(_ element: XMLElement) -> [NavPoint] {
        element.elementChildren.filter { Self.isOPF($0, "reference") }.compactMap { reference in
            guard let href = reference.attribute("href") else { return nil }
            let type = reference.attribute("type")?.trimmingWhitespace()
            return NavPoint(
                title: reference.attribute("title")?.collapsingWhitespace() ?? type ?? "",
                href: href, target: Href.resolve(href, relativeTo: packagePath), type: type)
        }
    }
}
