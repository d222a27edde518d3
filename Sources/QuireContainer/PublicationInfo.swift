import QuireCore

/// The stable description of a book that `quire info` prints (as JSON or as text).
public enum PublicationInfo {
    public static let formatVersion = 1

    public static func json(_ container: EPUBContainer, file: String) -> JSON {
        let publication = container.publication
        let metadata = publication.metadata
        func alternates(_ list: [AlternateScript]) -> JSON {
            .array(list.map { .object([("language", .optional($0.language)), ("value", .string($0.value))]) })
        }
        func contributors(_ list: [Contributor]) -> JSON {
            .array(
                list.map {
                    .object([
                        ("name", .string($0.name)), ("roles", .array($0.roles.map(JSON.string))),
                        ("fileAs", .optional($0.fileAs)),
                        ("alternateScripts", alternates($0.alternateScripts)), ("direction", .optional($0.direction)),
                    ])
                })
        }
        let spineItems: [JSON] = publication.spine.map { spineItem in
            let item = publication.item(for: spineItem)
            return .object([
                ("index", .int(spineItem.index)), ("idref", .string(spineItem.idref)),
                ("href", .optional(item?.href)), ("path", .optional(item?.path)),
                ("mediaType", .optional(item?.mediaType)), ("linear", .bool(spineItem.linear)),
                ("layout", .string(spineItem.layout.rawValue)),
                ("pageSpread", .optional(spineItem.pageSpread)),
                ("properties", .array(spineItem.properties.map(JSON.string))),
            ])
        }
        var byMediaType: [String: Int] = [:]
        for item in publication.manifest { byMediaType[item.mediaType, default: 0] += 1 }
        let navigation = publication.navigation
        var members: [(String, JSON)] = []
        members.append(("format", .string("quire-info")))
        members.append(("version", .int(formatVersion)))
        members.append(("file", .string(file)))
        members.append(("mediaType", .string(EPUBContainer.epubMediaType)))
        members.append(("epubVersion", .string(publication.version)))
        members.append(("packagePath", .string(publication.packagePath)))
        members.append(("title", .optional(metadata.title)))
        members.append((
                "titles",
                .array(
                    metadata.titles.map {
                        .object([("value", .string($0.value)), ("type", .optional($0.type)), ("language", .optional($0.language)),
                            ("alternateScripts", alternates($0.alternateScripts)), ("direction", .optional($0.direction)),
                        ])
                    })
            ))
        members.append(("creators", contributors(metadata.creators)))
        members.append(("contributors", contributors(metadata.contributors)))
        members.append(("languages", .array(metadata.languages.map(JSON.string))))
        members.append(("uniqueIdentifier", .optional(metadata.uniqueIdentifier)))
        members.append((
                "identifiers",
                .array(
                    metadata.identifiers.map {
                        .object([("id", .optional($0.id)), ("value", .string($0.value)), ("scheme", .optional($0.scheme))])
                    })
            ))
        members.append(("publishers", .array(metadata.publishers.map(JSON.string))))
        members.append(("dates", .array(metadata.dates.map { .object([("value", .string($0.value)), ("event", .optional($0.event))]) })))
        members.append(("modified", .optional(metadata.modified)))
        members.append(("description", .optional(metadata.description)))
        members.append(("subjects", .array(metadata.subjects.map(JSON.string))))
        members.append(("rights", .optional(metadata.rights)))
        members.append(("layout", .string(metadata.layout.rawValue)))
        members.append(("orientation", .optional(metadata.orientation)))
        members.append(("spread", .optional(metadata.spread)))
        members.append(("flow", .optional(metadata.flow)))
        members.append(("pageProgression", .string(publication.pageProgression.rawValue)))
        members.append(("readingProgression", .string(publication.readingProgression.rawValue)))
        members.append((
                "spine",
                .object([
                    ("count", .int(publication.spine.count)),
                    ("linear", .int(publication.spine.filter(\.linear).count)),
                    ("prePaginated", .int(publication.spine.filter { $0.layout == .prePaginated }.count)),
                    ("items", .array(spineItems)),
                ])
            ))
        members.append((
                "toc",
                .object([
                    ("source", .string(navigation.source.rawValue)),
                    ("count", .int(Navigation.total(navigation.toc))),
                    ("depth", .int(Navigation.depth(navigation.toc))),
                    ("entries", .array(navigation.toc.map(json))),
                ])
            ))
        members.append((
                "pageList",
                .object([
                    ("count", .int(Navigation.total(navigation.pageList))),
                    ("entries", .array(navigation.pageList.map(json))),
                ])
            ))
        members.append((
                "landmarks",
                .object([
                    ("count", .int(Navigation.total(navigation.landmarks))),
                    ("entries", .array(navigation.landmarks.map(json))),
                ])
            ))
        members.append((
                "resources",
                .object([
                    ("count", .int(publication.manifest.count)),
                    ("byMediaType", .object(byMediaType.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
                ])
            ))
        members.append((
                "encryption",
                .array(
                    publication.encryption.sorted { $0.key < $1.key }.map { path, algorithm in
                        .object([("path", .string(path)), ("algorithm", .string(name(of: algorithm)))])
                    })
            ))
        members.append(("warnings", .array(publication.warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })))
        return .object(members)
    }

    static func json(_ point: NavPoint) -> JSON {
        .object([
            ("title", .string(point.title)),
            ("href", .optional(point.href)),
            ("path", .optional(point.target?.path)),
            ("fragment", .optional(point.target?.fragment)),
            ("type", .optional(point.type)),
            ("children", .array(point.children.map(json))),
        ])
    }

    static func name(of algorithm: EncryptionAlgorithm) -> String {
        switch algorithm {
        case .idpfObfuscation: return "idpf-obfuscation"
        case .adobeObfuscation: return "adobe-obfuscation"
        case .other(let name): return name
        }
    }

    /// The human-readable summary.
    public static func text(_ container: EPUBContainer) -> String {
        let publication = container.publication
        let metadata = publication.metadata
        var lines: [String] = []
        func field(_ label: String, _ value: String) {
            lines.append(label.padded(toLength: 14) + value)
        }
        // Text in its declared direction: wrapped in a bidi isolate (U+2067 RLI or U+2066 LRI … U+2069
        // PDI), so a terminal that does bidi shows an RTL title right to left, whatever is around it.
        func isolated(_ text: String, _ direction: String?) -> String {
            switch direction {
            case "rtl"?: return "\u{2067}\(text)\u{2069}"
            case "ltr"?: return "\u{2066}\(text)\u{2069}"
            default: return text
            }
        }
        func people(_ list: [Contributor]) -> String {
            list.map { person in
                let name = isolated(person.name, person.direction)
                return person.roles.isEmpty ? name : "\(name) (\(person.roles.joined(separator: ", ")))"
            }.joined(separator: "; ")
        }
        let mainTitle = metadata.titles.first { $0.value == metadata.title }
        field("Title:", metadata.title.map { isolated($0, mainTitle?.direction) } ?? "(none)")
        if let main = metadata.titles.first(where: { $0.value == metadata.title }) {
            for alternate in main.alternateScripts { field("", "\(alternate.value)\(alternate.language.map { " [\($0)]" } ?? "")") }
        }
        for title in metadata.titles.dropFirst() where title.value != metadata.title {
            field("", "\(title.value)\(title.type.map { " (\($0))" } ?? "")")
        }
        field("Authors:", metadata.creators.isEmpty ? "(none)" : people(metadata.creators))
        if !metadata.contributors.isEmpty { field("Contributors:", people(metadata.contributors)) }
        field("Language:", metadata.languages.isEmpty ? "(none)" : metadata.languages.joined(separator: ", "))
        field("Identifier:", metadata.uniqueIdentifier ?? "(none)")
        if !metadata.publishers.isEmpty { field("Publisher:", metadata.publishers.joined(separator: "; ")) }
        if let date = metadata.dates.first { field("Date:", date.value) }
        field("Layout:", "\(metadata.layout.rawValue), page progression \(publication.pageProgression.rawValue)\(publication.pageProgression == .auto ? " (\(publication.readingProgression.rawValue))" : "")")
        field("Package:", "EPUB \(publication.version) (\(publication.packagePath))")
        let linear = publication.spine.filter(\.linear).count
        let fixed = publication.spine.filter { $0.layout == .prePaginated }.count
        field(
            "Spine:",
            "\(publication.spine.count) items (\(linear) linear\(fixed > 0 && fixed < publication.spine.count ? ", \(fixed) pre-paginated" : ""))")
        let navigation = publication.navigation
        field(
            "TOC:",
            "\(Navigation.total(navigation.toc)) entries, depth \(Navigation.depth(navigation.toc)) (from \(navigation.source == .ncx ? "NCX" : navigation.source == .navDocument ? "nav document" : "nowhere"))"
        )
        func tree(_ points: [NavPoint], level: Int) {
            for point in points {
                lines.append(String(repeating: "  ", count: level + 1) + "- " + (point.title.isEmpty ? "(untitled)" : point.title))
                tree(point.children, level: level + 1)
            }
        }
        tree(navigation.toc, level: 0)
        field("Page list:", "\(Navigation.total(navigation.pageList)) entries")
        field("Landmarks:", navigation.landmarks.map { $0.type ?? $0.title }.joined(separator: ", "))
        var byMediaType: [String: Int] = [:]
        for item in publication.manifest { byMediaType[item.mediaType, default: 0] += 1 }
        field("Resources:", "\(publication.manifest.count)")
        for (mediaType, count) in byMediaType.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            lines.append("  \(String(count).leftPad(5))  \(mediaType)")
        }
        if !publication.encryption.isEmpty {
            field("Obfuscated:", "\(publication.encryption.count) fonts")
        }
        field("Warnings:", "\(publication.warnings.count)")
        for warning in publication.warnings { lines.append("  - \(warning)") }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
