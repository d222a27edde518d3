import Glibc
import QuireCore
import QuireXML

/// An opened EPUB: the archive plus its parsed publication. Resources are read on demand, with
/// obfuscated fonts de-obfuscated on the way out.
public final class EPUBContainer: Sendable {
    public static let containerPath = "META-INF/container.xml"
    public static let encryptionPath = "META-INF/encryption.xml"
    public static let epubMediaType = "application/epub+zip"
    public static let packageMediaType = "application/oebps-package+xml"

    public let archive: ZipArchive
    public let publication: Publication
    private let idpfKey: [UInt8]?
    private let adobeKey: [UInt8]?

    /// Opens and validates a book. Throws a `QuireError` for anything that stops the book; recoverable
    /// problems end up in `publication.warnings`.
    /// Opens the EPUB at `path`. `metadataRead` is called as soon as the package document is
    /// parsed, before the navigation is read, so a caller can start work that needs only the
    /// metadata (loading the language's hyphenation dictionary) while the rest is opened.
    public static func open(path: String, limits: Limits = .standard, metadataRead: (Metadata) -> Void = { _ in }) throws -> EPUBContainer {
        try InputFile.checkReadable(path)
        switch try InputFile.sniff(path) {
        case .pdf: throw QuireError.unsupported("PDF input is not yet supported: \(path)")
        case .zip: break
        case .empty: throw QuireError.notAnEPUB("\(path) is empty")
        case .other:
            // A later part of a split zip starts with another part's data, not a zip header.
            if let disk = ZipArchive.multiPartDisk(path) { throw ZipArchive.multiPartError(path, disk: disk) }
            throw QuireError.notAnEPUB("\(path) is not a zip archive")
        }
        let archive = try ZipArchive(path: path, limits: limits)
        return try EPUBContainer(archive: archive, limits: limits, metadataRead: metadataRead)
    }

    init(archive: ZipArchive, limits: Limits, metadataRead: (Metadata) -> Void = { _ in }) throws {
        self.archive = archive
        var warnings: [Warning] = []
        guard !archive.entries.isEmpty else { throw QuireError.notAnEPUB("\(archive.path) is an empty archive") }

        if let mimetype = archive.entry(named: "mimetype") {
            let bytes = try archive.read(mimetype)
            let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
            guard text == Self.epubMediaType else {
                throw QuireError.notAnEPUB("the mimetype entry says '\(text.prefix(80))'")
            }
            if mimetype.index != 0 { warnings.append(Warning("ocf", "the mimetype entry is not the first in the archive")) }
        } else {
            warnings.append(Warning("ocf", "the archive has no mimetype entry"))
        }

        // DRM first: an encrypted book is refused before anything else is read.
        var encryption: [String: EncryptionAlgorithm] = [:]
        if archive.contains(Self.encryptionPath) {
            let tree = try XMLParser.parse(archive.read(Self.encryptionPath), path: Self.encryptionPath, mode: .recover, limits: limits)
            encryption = FontObfuscation.parse(tree)
            for (path, algorithm) in encryption.sorted(by: { $0.key < $1.key }) {
                if case .other(let name) = algorithm {
                    throw QuireError.drmProtected("\(path) is encrypted with \(name.isEmpty ? "an unnamed algorithm" : name)")
                }
            }
        }
        if let encrypted = archive.entries.first(where: \.isEncrypted) {
            throw QuireError.drmProtected("archive entry \(encrypted.name) is encrypted")
        }

        guard archive.contains(Self.containerPath) else { throw QuireError.missingContainer }
        let containerTree = try XMLParser.parse(
            archive.read(Self.containerPath), path: Self.containerPath, mode: .recover, limits: limits)
        warnings += containerTree.warnings
        let rootfiles = (containerTree.root?.descendants("rootfile") ?? []).filter {
            ($0.attribute("media-type") ?? Self.packageMediaType).trimmingWhitespace() == Self.packageMediaType
        }.compactMap { $0.attribute("full-path").flatMap { Href.resolve($0, relativeTo: "")?.path } }
        guard let packagePath = rootfiles.first else {
            throw QuireError.invalidPackageDocument("container.xml names no package document")
        }
        guard archive.contains(packagePath) else {
            throw QuireError.invalidPackageDocument("\(packagePath) (named in container.xml) is not in the archive")
        }
        if rootfiles.count > 1 {
            warnings.append(Warning("ocf", "\(rootfiles.count) renditions; using the first, \(packagePath)"))
        }

        let packageTree: XMLTree
        do {
            packageTree = try XMLParser.parse(archive.read(packagePath), path: packagePath, mode: .recover, limits: limits)
        } catch let error as QuireError {
            if case .invalidXML(_, let reason) = error { throw QuireError.invalidPackageDocument("\(packagePath): \(reason)") }
            throw error
        }
        warnings += packageTree.warnings
        var parser = PackageDocumentParser(tree: packageTree, packagePath: packagePath)
        var package = try parser.parse()
        warnings += parser.warnings
        metadataRead(package.metadata)
        Self.repairBrokenHrefs(&package.manifest, archive: archive, warnings: &warnings)

        // Spine documents are required; every other missing resource is only a warning.
        var shownInPlaceOf: [String: String] = [:]
        let manifestByID = Dictionary(package.manifest.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, spineItem) in package.spine.enumerated() {
            let item = manifestByID[spineItem.idref]!
            guard let path = item.path else {
                throw QuireError.missingResource(href: item.href, context: "spine item '\(item.id)' is a remote resource, not in the container")
            }
            guard !archive.contains(path) else { continue }
            // A missing spine resource with a manifest fallback shows the first fallback that is there.
            let present = Publication.fallbacks(of: item) { manifestByID[$0] }.first { $0.path.map(archive.contains) == true }
            guard let fallback = present, let fallbackPath = fallback.path else {
                throw QuireError.missingResource(href: item.href, context: "spine item '\(item.id)' is not in the archive")
            }
            warnings.append(Warning("missing-resource", "spine item '\(item.id)' (\(item.href)) is not in the archive; its fallback '\(fallback.id)' (\(fallback.href)) is shown"))
            package.spine[index].idref = fallback.id
            shownInPlaceOf[path] = fallbackPath
        }
        Self.showFallbacks(&package.spine, manifest: manifestByID, archive: archive, shownInPlaceOf: &shownInPlaceOf, warnings: &warnings)
        let spineIDs = Set(package.spine.map(\.idref))
        for item in package.manifest where !spineIDs.contains(item.id) {
            if let path = item.path, !archive.contains(path) {
                warnings.append(Warning("missing-resource", "manifest item '\(item.id)' (\(item.href)) is not in the archive"))
            }
        }
        for (path, _) in encryption.sorted(by: { $0.key < $1.key }) {
            let mediaType = package.manifest.first { $0.path == path }?.mediaType ?? ""
            if !mediaType.contains("font") && !path.lowercased().hasSuffix(".otf") && !path.lowercased().hasSuffix(".ttf")
                && !path.lowercased().hasSuffix(".woff") && !path.lowercased().hasSuffix(".woff2")
            {
                warnings.append(Warning("obfuscation", "\(path) is obfuscated but is not a font"))
            }
        }

        let navigation = Self.readNavigation(
            archive: archive, package: package, packagePath: packagePath, limits: limits, warnings: &warnings)

        var publication = Publication(
            packagePath: packagePath, version: package.version, metadata: package.metadata,
            manifest: package.manifest, spine: package.spine, pageProgression: package.progression,
            navigation: navigation, encryption: encryption, rootfiles: rootfiles, warnings: [])
        publication.spineStep = package.spineStep
        publication.shownInPlaceOf = shownInPlaceOf
        if publication.navigation.landmarks.isEmpty && !package.guide.isEmpty {
            publication.navigation.landmarks = package.guide
        }
        Self.checkTargets(publication.navigation, archive: archive, warnings: &warnings)
        publication.warnings = warnings
        self.publication = publication

        let uniqueIdentifier = package.metadata.uniqueIdentifier ?? ""
        idpfKey = encryption.values.contains(.idpfObfuscation) ? FontObfuscation.idpfKey(uniqueIdentifier: uniqueIdentifier) : nil
        adobeKey =
            encryption.values.contains(.adobeObfuscation)
            ? FontObfuscation.adobeKey(identifiers: [uniqueIdentifier] + package.metadata.identifiers.map(\.value)) : nil
    }

    /// A manifest href that names no archive entry, where exactly one entry has its file name and
    /// no manifest item lists that entry, is taken to mean it (W3C lay-pp-spine-overrides_image-*
    /// list `page_2.png` for `images/page_2.png`): the content that uses the file is then using a
    /// listed resource, and an image the manifest truly leaves out is still not shown.
    private static func repairBrokenHrefs(_ manifest: inout [ManifestItem], archive: ZipArchive, warnings: inout [Warning]) {
        let listed = Set(manifest.compactMap(\.path))
        var byFileName: [String: [String]] = [:]
        for entry in archive.entries where !entry.name.hasSuffix("/") && !listed.contains(entry.name) {
            byFileName[String(entry.name.split(separator: "/").last ?? ""), default: []].append(entry.name)
        }
        for index in manifest.indices {
            guard let path = manifest[index].path, !archive.contains(path) else { continue }
            let name = String(path.split(separator: "/").last ?? "")
            guard let candidates = byFileName[name], candidates.count == 1 else { continue }
            warnings.append(Warning(
                "manifest", "item '\(manifest[index].id)' (\(manifest[index].href)) is not in the archive; \(candidates[0]), the only entry of that name, is taken for it"))
            manifest[index].path = candidates[0]
            byFileName[name] = nil
        }
    }

    /// Foreign spine items (JSON, plain XML, a disk image) are shown through the first content
    /// document of their manifest fallback chain, and so are scripted documents that have one:
    /// Quire runs no scripts, and a fallback is what EPUB gives reading systems that do not.
    private static func showFallbacks(
        _ spine: inout [SpineItem], manifest: [String: ManifestItem], archive: ZipArchive, shownInPlaceOf: inout [String: String],
        warnings: inout [Warning]
    ) {
        let spinePaths = Set(spine.compactMap { manifest[$0.idref]?.path })
        for index in spine.indices {
            guard let item = manifest[spine[index].idref], item.fallback != nil else { continue }
            let chain = Publication.fallbacks(of: item) { manifest[$0] }
            let foreign = !Publication.isContentType(item.mediaType)
            let scripted = item.hasProperty("scripted")
            if foreign || scripted {
                let shown = chain.first {
                    Publication.isContentType($0.mediaType) && !$0.hasProperty("scripted") && $0.path.map(archive.contains) == true
                }
                let described = "spine item '\(item.id)' (\(item.href), \(item.mediaType)\(scripted ? ", scripted" : ""))"
                if let shown {
                    warnings.append(Warning("fallback", "\(described) is shown through its fallback '\(shown.id)' (\(shown.href))"))
                    spine[index].idref = shown.id
                    if let from = item.path, let to = shown.path { shownInPlaceOf[from] = to }
                } else if foreign {
                    let tried = chain.map { "\($0.id): \($0.mediaType)" }.joined(separator: ", ")
                    warnings.append(Warning("fallback", "\(described) is foreign content and no item of its fallback chain (\(tried)) can be shown; its page is blank"))
                }
            }
            // A link or TOC entry naming a fallback of the item shown lands on that item.
            guard let shownPath = manifest[spine[index].idref]?.path else { continue }
            for fallback in chain {
                if let path = fallback.path, path != shownPath, !spinePaths.contains(path), shownInPlaceOf[path] == nil {
                    shownInPlaceOf[path] = shownPath
                }
            }
        }
    }

    private static func readNavigation(
        archive: ZipArchive, package: (
            version: String, metadata: Metadata, manifest: [ManifestItem], spine: [SpineItem],
            progression: ReadingProgression, ncxID: String?, guide: [NavPoint], spineStep: Int
        ), packagePath: String, limits: Limits, warnings: inout [Warning]
    ) -> Navigation {
        if let navItem = package.manifest.first(where: { $0.hasProperty("nav") }), let path = navItem.path {
            do {
                let bytes = try archive.read(path)
                let tree: XMLTree
                do {
                    // An external entity is left out, as in content documents: the TOC around it stays.
                    tree = try XMLParser.parse(bytes, path: path, mode: .recover, limits: limits, externalEntities: .skip)
                } catch QuireError.invalidXML {
                    tree = try XMLParser.parse(bytes, path: path, mode: .html, limits: limits)
                }
                warnings += tree.warnings
                let navigation = NavigationParser.parseNavDocument(tree, path: path)
                if !navigation.toc.isEmpty { return navigation }
                warnings.append(Warning("navigation", "the nav document \(path) has no toc; trying the NCX"))
            } catch {
                warnings.append(Warning("navigation", "cannot read the nav document \(path): \(error)"))
            }
        }
        let ncxItem =
            package.ncxID.flatMap { id in package.manifest.first { $0.id == id } }
            ?? package.manifest.first { $0.mediaType == "application/x-dtbncx+xml" }
        if let ncxItem, let path = ncxItem.path {
            do {
                let tree = try XMLParser.parse(archive.read(path), path: path, mode: .recover, limits: limits)
                warnings += tree.warnings
                return NavigationParser.parseNCX(tree, path: path)
            } catch {
                warnings.append(Warning("navigation", "cannot read the NCX \(path): \(error)"))
            }
        }
        warnings.append(Warning("navigation", "the book has no table of contents"))
        return Navigation()
    }

    private static func checkTargets(_ navigation: Navigation, archive: ZipArchive, warnings: inout [Warning]) {
        func check(_ points: [NavPoint], _ kind: String) {
            for point in points {
                if let href = point.href, point.target == nil, !Href.isExternal(href) {
                    warnings.append(Warning("navigation", "\(kind) entry '\(point.title)' points outside the book: \(href)"))
                } else if let target = point.target, !archive.contains(target.path) {
                    warnings.append(Warning("navigation", "\(kind) entry '\(point.title)' points to a missing resource: \(target.path)"))
                }
                check(point.children, kind)
            }
        }
        check(navigation.toc, "toc")
        check(navigation.pageList, "page-list")
        check(navigation.landmarks, "landmarks")
    }

    /// Reads a resource by archive path, de-obfuscating fonts.
    public func read(path: String) throws -> [UInt8] {
        var bytes = try archive.read(path)
        switch publication.encryption[path] {
        case .idpfObfuscation:
            FontObfuscation.apply(key: idpfKey ?? [], length: FontObfuscation.idpfLength, to: &bytes)
        case .adobeObfuscation:
            guard let adobeKey else {
                throw QuireError.invalidPackageDocument("\(path) uses Adobe obfuscation but the book has no UUID identifier")
            }
            FontObfuscation.apply(key: adobeKey, length: FontObfuscation.adobeLength, to: &bytes)
        case .other(let algorithm):
            throw QuireError.drmProtected("\(path) is encrypted with \(algorithm)")
        case nil:
            break
        }
        return bytes
    }

    public func read(_ item: ManifestItem) throws -> [UInt8] {
        guard let path = item.path else {
            throw QuireError.missingResource(href: item.href, context: "outside the container")
        }
        return try read(path: path)
    }
}

/// What kind of file a path holds, from its first bytes.
public enum InputFile {
    public enum Kind: Sendable { case zip, pdf, empty, other }

    public static func checkReadable(_ path: String) throws {
        guard FileSystem.exists(path) else { throw QuireError.notFound(path: path) }
        if FileSystem.isDirectory(path) { throw QuireError.cannotOpen(path: path, reason: "it is a directory") }
        guard access(path, R_OK) == 0 else { throw QuireError.cannotOpen(path: path, reason: "permission denied") }
    }

    public static func sniff(_ path: String) throws -> Kind {
        guard let file = fopen(path, "rb") else { throw QuireError.cannotOpen(path: path, reason: "cannot be read") }
        defer { fclose(file) }
        var head = [UInt8](repeating: 0, count: 1024)
        head.removeSubrange(head.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }...)
        if head.isEmpty { return .empty }
        if head.starts(with: Array("PK".utf8)) { return .zip }
        // PDF headers may follow a little garbage; readers accept %PDF- within the first KiB.
        let pdf = Array("%PDF-".utf8)
        if head.count >= pdf.count, (0...(head.count - pdf.count)).contains(where: { head[$0..<($0 + pdf.count)].elementsEqual(pdf) }) {
            return .pdf
        }
        return .other
    }
}
