import QuireCore
import QuireXML

/// Reads the EPUB 3 navigation document (toc, page-list, landmarks) and the EPUB 2 NCX.
enum NavigationParser {
    /// `nav` elements by their `epub:type` (or ARIA role) token.
    static func parseNavDocument(_ tree: XMLTree, path: String) -> Navigation {
        var navigation = Navigation()
        navigation.source = .navDocument
        guard let root = tree.root else { return navigation }
        for nav in root.descendants("nav", Namespace.xhtml) {
            let types = (nav.attribute("type", namespace: Namespace.ops) ?? "").whitespaceTokens()
            let role = nav.attribute("role") ?? ""
            let points = list(in: nav, documentPath: path)
            if (types.contains("toc") || role == "doc-toc") && navigation.toc.isEmpty {
                navigation.toc = points
            } else if (types.contains("page-list") || role == "doc-pagelist") && navigation.pageList.isEmpty {
                navigation.pageList = points
            } else if types.contains("landmarks") && navigation.landmarks.isEmpty {
                navigation.landmarks = points
            }
        }
        return navigation
    }

    private static func list(in nav: XMLElement, documentPath: String) -> [NavPoint] {
        guard let ol = nav.firstChild("ol", Namespace.xhtml) ?? nav.descendants("ol", Namespace.xhtml).first else {
            return []
        }
        return items(of: ol, documentPath: documentPath)
    }

    private static func items(of list: XMLElement, documentPath: String) -> [NavPoint] {
        list.children("li", Namespace.xhtml).map { li in
            let label = li.elementChildren.first { $0.is("a", Namespace.xhtml) || $0.is("span", Namespace.xhtml) }
            var title = label?.textContent.collapsingWhitespace() ?? ""
            if title.isEmpty, let label {
                title = label.attribute("title") ?? label.descendants("img").first?.attribute("alt") ?? ""
            }
            let href = label.flatMap { $0.is("a", Namespace.xhtml) ? $0.attribute("href") : nil }
            let children = li.firstChild("ol", Namespace.xhtml).map { items(of: $0, documentPath: documentPath) } ?? []
            return NavPoint(
                title: title, href: href, target: href.flatMap { Href.resolve($0, relativeTo: documentPath) },
                type: label?.attribute("type", namespace: Namespace.ops), children: children)
        }
    }

    /// NCX elements are matched by local name: some EPUB 2 books omit the namespace.
    static func parseNCX(_ tree: XMLTree, path: String) -> Navigation {
        var navigation = Navigation()
        navigation.source = .ncx
        guard let root = tree.root else { return navigation }
        func ncxChildren(_ element: XMLElement, _ local: String) -> [XMLElement] {
            element.elementChildren.filter { $0.localName == local }
        }
        func point(_ element: XMLElement, childName: String) -> NavPoint {
            let label = ncxChildren(element, "navLabel").first.flatMap { ncxChildren($0, "text").first }
            let href = ncxChildren(element, "content").first?.attribute("src")
            return NavPoint(
                title: label?.textContent.collapsingWhitespace() ?? "",
                href: href, target: href.flatMap { Href.resolve($0, relativeTo: path) },
                type: element.attribute("type"),
                children: ncxChildren(element, childName).map { point($0, childName: childName) })
        }
        if let navMap = ncxChildren(root, "navMap").first {
            navigation.toc = ncxChildren(navMap, "navPoint").map { point($0, childName: "navPoint") }
        }
        if let pageList = ncxChildren(root, "pageList").first {
            navigation.pageList = ncxChildren(pageList, "pageTarget").map { point($0, childName: "pageTarget") }
        }
        return navigation
    }
}
