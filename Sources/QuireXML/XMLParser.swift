@preconcurrency import CLibXML2
import QuireCore
import Glibc

/// Parses XML and HTML with libxml2 under options that are safe for untrusted books:
/// no network, no external entity or DTD loading, no entity substitution by libxml2 (so no
/// expansion bombs), libxml2's default size and depth limits (never XML_PARSE_HUGE).
public enum XMLParser {
    public enum Mode: Sendable {
        /// Well-formed XML required; an error is fatal.
        case strict
        /// XML with libxml2's recovery; a warning is recorded when recovery was needed.
        case recover
        /// The HTML parser (tag soup), always recovering; elements get the XHTML namespace.
        case html
    }

    /// The option set used for XML documents. Tests check NOENT, DTDLOAD and HUGE are absent.
    public static let xmlOptions: Int32 = {
        let options: [xmlParserOption] = [XML_PARSE_NONET, XML_PARSE_NOERROR, XML_PARSE_NOWARNING, XML_PARSE_NOCDATA]
        return options.reduce(Int32(0)) { $0 | Int32(bitPattern: $1.rawValue) }
    }()

    public static let htmlOptions: Int32 = {
        let options: [htmlParserOption] = [
            HTML_PARSE_RECOVER, HTML_PARSE_NONET, HTML_PARSE_NOERROR, HTML_PARSE_NOWARNING, HTML_PARSE_NOIMPLIED,
        ]
        return options.reduce(Int32(0)) { $0 | Int32(bitPattern: $1.rawValue) }
    }()

    /// Internal entities longer than this are not expanded (they are never needed in books).
    public static let maxEntityReplacementLength = 4096
    /// Total text that entity references may add to one document.
    public static let maxEntityExpansionTotal = 1 << 20

    /// Attributes on one element. libxml2 (2.9) checks each new attribute against all before it,
    /// so an element with 100,000 of them takes minutes; real elements have a handful.
    public static let maxAttributesPerElement = 1_000

    /// Installs the refusing external-entity loader once per process.
    private static let setUp: Void = {
        xmlInitParser()
        xmlSetExternalEntityLoader { _, _, _ in nil }
    }()

    /// `externalEntities: .skip` reads a document that declares external entities, leaving their
    /// references out with a warning (content documents: W3C pub-xml-external-id); `.refuse`
    /// (package and container documents) makes the declaration an error.
    public static func parse(
        _ bytes: [UInt8], path: String, mode: Mode = .strict, limits: Limits = .standard, externalEntities: ExternalEntities = .refuse
    ) throws -> XMLTree {
        _ = setUp
        guard bytes.count <= limits.maxXMLDocumentSize else {
            throw QuireError.limitExceeded(
                limit: "max-xml-size", detail: "\(path) is \(bytes.count) bytes (limit \(limits.maxXMLDocumentSize))")
        }
        try checkAttributeCounts(bytes, path: path)
        switch mode {
        case .strict, .recover:
            return try parseXML(bytes, path: path, recover: mode == .recover, limits: limits, externalEntities: externalEntities)
        case .html:
            return try parseHTML(bytes, path: path, limits: limits)
        }
    }

    /// Refuses a document with an element of more than `maxAttributesPerElement` attributes before
    /// libxml2 sees it: a scan of the bytes that counts `=` outside quotes between `<` and `>`
    /// (an over-count in a script or comment errs towards refusing only what is absurd anyway).
    static func checkAttributeCounts(_ bytes: [UInt8], path: String) throws {
        let limit = maxAttributesPerElement
        let tooMany: Bool = bytes.withUnsafeBufferPointer { buffer in
            var inTag = false
            var quote: UInt8 = 0
            var count = 0
            var index = 0
            while index < buffer.count {
                let byte = buffer[index]
                index += 1
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if !inTag {
                    if byte == UInt8(ascii: "<") {
                        inTag = true
                        count = 0
                    } else if let next = memchr(buffer.baseAddress! + index, Int32(UInt8(ascii: "<")), buffer.count - index) {
                        // Text runs to the next `<`: skipped by memchr, not byte by byte.
                        index = buffer.baseAddress!.distance(to: next.assumingMemoryBound(to: UInt8.self))
                    } else {
                        break
                    }
                } else {
                    switch byte {
                    case UInt8(ascii: ">"): inTag = false
                    case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
                    case UInt8(ascii: "="):
                        count += 1
                        if count > limit { return true }
                    default: break
                    }
                }
            }
            return false
        }
        if tooMany {
            throw QuireError.limitExceeded(limit: "xml-attributes", detail: "\(path) has an element with more than \(limit) attributes")
        }
    }

    /// What a declared external entity does: never loaded either way.
    public enum ExternalEntities: Sendable {
        case refuse, skip
    }

    private static func parseXML(_ bytes: [UInt8], path: String, recover: Bool, limits: Limits, externalEntities: ExternalEntities) throws -> XMLTree {
        guard let context = xmlNewParserCtxt() else { throw QuireError.io("libxml2 could not allocate a parser") }
        defer { xmlFreeParserCtxt(context) }
        let options = xmlOptions | (recover ? Int32(bitPattern: XML_PARSE_RECOVER.rawValue) : 0)
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                xmlCtxtReadMemory(context, $0, Int32(buffer.count), path, nil, options)
            }
        }
        defer { if let document { xmlFreeDoc(document) } }
        let wellFormed = context.pointee.wellFormed != 0
        let errorText = lastError(context)
        if isEntityAbuse(context) {
            throw QuireError.limitExceeded(limit: "xml-entities", detail: "\(path): \(errorText ?? "entity expansion")")
        }
        guard let document, let root = xmlDocGetRootElement(document) else {
            throw QuireError.invalidXML(document: path, reason: errorText ?? "no document element")
        }
        if !wellFormed && !recover {
            throw QuireError.invalidXML(document: path, reason: errorText ?? "not well-formed")
        }
        var builder = XMLTreeBuilder()
        if let external = try checkEntityDeclarations(document, path: path, refusingExternal: externalEntities == .refuse) {
            builder.warnings.append(Warning("xml-external-entity", "\(path): external entity '\(external)' is declared; it is never loaded, and its references are left out"))
        }
        if !wellFormed {
            builder.warnings.append(Warning("xml-recovered", "\(path): \(errorText ?? "not well-formed"); recovered"))
        }
        try walk(root: root, document: document, html: false, into: &builder, path: path, limits: limits, checkNames: !recover)
        return XMLTree(builder: builder, documentPath: path)
    }

    private static func parseHTML(_ bytes: [UInt8], path: String, limits: Limits) throws -> XMLTree {
        guard let context = htmlNewParserCtxt() else { throw QuireError.io("libxml2 could not allocate a parser") }
        defer { htmlFreeParserCtxt(context) }
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                htmlCtxtReadMemory(context, $0, Int32(buffer.count), path, "UTF-8", htmlOptions)
            }
        }
        defer { if let document { xmlFreeDoc(document) } }
        guard let document, let root = xmlDocGetRootElement(document) else {
            throw QuireError.invalidXML(document: path, reason: lastError(context) ?? "no document element")
        }
        var builder = XMLTreeBuilder()
        try walk(root: root, document: document, html: true, into: &builder, path: path, limits: limits)
        return XMLTree(builder: builder, documentPath: path)
    }

    private static func lastError(_ context: xmlParserCtxtPtr) -> String? {
        guard let error = xmlCtxtGetLastError(context), error.pointee.code != 0 else { return nil }
        let message = error.pointee.message.map { String(cString: $0).collapsingWhitespace() } ?? "error \(error.pointee.code)"
        return error.pointee.line > 0 ? "line \(error.pointee.line): \(message)" : message
    }

    private static func isEntityAbuse(_ context: xmlParserCtxtPtr) -> Bool {
        guard let error = xmlCtxtGetLastError(context) else { return false }
        let code = error.pointee.code
        return code == Int32(XML_ERR_ENTITY_LOOP.rawValue)
            || code == Int32(XML_ERR_ENTITY_BOUNDARY.rawValue)
            || (error.pointee.message.map { String(cString: $0).contains("amplification") } ?? false)
    }

    /// Books have no business declaring external entities (XXE) or entities built from other
    /// entities (expansion bombs); such a document is refused outright rather than half-read.
    /// Returns the first external entity's name when they are allowed through (never loaded).
    private static func checkEntityDeclarations(_ document: xmlDocPtr, path: String, refusingExternal: Bool) throws -> String? {
        var external: String?
        for subset in [document.pointee.intSubset, document.pointee.extSubset] {
            var node = subset?.pointee.children
            while let current = node {
                if current.pointee.type == XML_ENTITY_DECL {
                    let entity = UnsafeMutableRawPointer(current).assumingMemoryBound(to: xmlEntity.self)
                    let name = string(entity.pointee.name)
                    switch entity.pointee.etype {
                    case XML_EXTERNAL_GENERAL_PARSED_ENTITY, XML_EXTERNAL_GENERAL_UNPARSED_ENTITY,
                        XML_EXTERNAL_PARAMETER_ENTITY:
                        if !refusingExternal {
                            external = external ?? name
                            break
                        }
                        throw QuireError.invalidXML(
                            document: path, reason: "external entity '\(name)' is not allowed (external entities are never loaded)")
                    default:
                        let content = entity.pointee.content.map { String(cString: $0) } ?? ""
                        if content.contains("&") || content.contains("%") || content.utf8.count > maxEntityReplacementLength {
                            throw QuireError.limitExceeded(
                                limit: "xml-entities", detail: "\(path): entity '\(name)' nests other entities or is too long (expansion bomb)")
                        }
                    }
                }
                node = current.pointee.next
            }
        }
        return external
    }

    /// Walks libxml2's tree without recursion, copying it into the builder.
    private static func walk(
        root: xmlNodePtr, document: xmlDocPtr, html: Bool, into builder: inout XMLTreeBuilder, path: String,
        limits: Limits, checkNames: Bool = false
    ) throws {
        var expandedEntityText = 0
        var skippedEntities = Set<String>()
        // Element names (their numbers in the tree) by libxml2's pointers to name and namespace:
        // its parser keeps each distinct name once, so a chapter's thousands of elements make,
        // check and look up a few dozen names instead of one each.
        var elementNames: [ElementNameKey: Int32] = [:]
        var node: xmlNodePtr? = root
        var depth = 0
        while let current = node {
            var descend = false
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                let key = ElementNameKey(name: UnsafeRawPointer(current.pointee.name), namespace: UnsafeRawPointer(current.pointee.ns))
                let name: Int32
                if let known = elementNames[key] {
                    name = known
                } else {
                    // Strict documents (content) only: a package or NCX with a bad name still opens.
                    if checkNames { try checkQualifiedName(current, path: path) }
                    name = builder.intern(
                        XMLName(
                            html ? Namespace.xhtml : namespaceURI(current.pointee.ns),
                            html ? string(current.pointee.name).lowercased() : string(current.pointee.name)))
                    elementNames[key] = name
                }
                builder.openElement(interned: name, attributes: attributes(of: current, html: html))
                guard builder.kinds.count <= limits.maxXMLNodes else {
                    throw QuireError.limitExceeded(limit: "max-xml-nodes", detail: "\(path) has more than \(limits.maxXMLNodes) nodes")
                }
                depth += 1
                guard depth <= limits.maxXMLDepth else {
                    throw QuireError.limitExceeded(limit: "max-xml-depth", detail: "\(path) nests deeper than \(limits.maxXMLDepth)")
                }
                descend = current.pointee.children != nil
                if !descend {
                    builder.closeElement()
                    depth -= 1
                }
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                builder.appendText(string(current.pointee.content))
            case XML_ENTITY_REF_NODE:
                let name = string(current.pointee.name)
                if let text = entityText(name, document: document, html: html) {
                    expandedEntityText += text.utf8.count
                    if expandedEntityText <= maxEntityExpansionTotal {
                        builder.appendText(text)
                    } else if skippedEntities.insert(name).inserted {
                        builder.warnings.append(Warning("xml-entity-skipped", "\(path): entity expansion budget used up at &\(name);"))
                    }
                } else if skippedEntities.insert(name).inserted {
                    builder.warnings.append(Warning("xml-entity-skipped", "\(path): entity &\(name); not expanded"))
                }
            default:
                break  // comments, processing instructions, DTD nodes
            }
            if descend {
                node = current.pointee.children
                continue
            }
            // Move to the next sibling, closing finished elements on the way up.
            var cursor: xmlNodePtr? = current
            node = nil
            while let here = cursor {
                if here == root { break }
                if let next = here.pointee.next {
                    node = next
                    break
                }
                cursor = here.pointee.parent
                if let parent = cursor, parent.pointee.type == XML_ELEMENT_NODE {
                    builder.closeElement()
                    depth -= 1
                }
                if cursor == root { break }
            }
        }
    }

    /// An element's name and namespace as libxml2 holds them (the same pointers hold the same
    /// text for as long as its document lives).
    private struct ElementNameKey: Hashable {
        let name: UnsafeRawPointer?
        let namespace: UnsafeRawPointer?
    }

    /// libxml2 reports a name that Namespaces in XML forbids (`p::p`, `:p`, `p:`) only as a
    /// namespace warning and keeps the element; such a document is not well-formed XHTML.
    private static func checkQualifiedName(_ element: xmlNodePtr, path: String) throws {
        let name = string(element.pointee.name)
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count > 2 || (parts.count == 2 && (parts[0].isEmpty || parts[1].isEmpty)) else { return }
        let line = xmlGetLineNo(element)
        throw QuireError.invalidXML(
            document: path, reason: "\(line > 0 ? "line \(line): " : "")element name '\(name)' is not a valid XML name")
    }

    /// Replacement text for an entity reference left in place (libxml2 does not substitute).
    /// Only short internal entities without markup or nested references are expanded; XHTML's
    /// named character entities (`&nbsp;` with no DTD loaded) come from libxml2's HTML table.
    private static func entityText(_ name: String, document: xmlDocPtr, html: Bool) -> String? {
        if let entity = xmlGetDocEntity(document, name) {
            guard entity.pointee.etype == XML_INTERNAL_GENERAL_ENTITY || entity.pointee.etype == XML_INTERNAL_PREDEFINED_ENTITY,
                let content = entity.pointee.content
            else { return nil }
            let text = String(cString: content)
            guard text.utf8.count <= maxEntityReplacementLength, !text.contains("&"), !text.contains("<") else {
                return nil
            }
            return text
        }
        if let scalar = characterEntity(name) { return String(Character(scalar)) }
        return nil
    }

    /// An HTML named character reference (`nbsp`, `mdash`…), from libxml2's table: what a
    /// document read without its DTD gets for `&name;`.
    public static func characterEntity(_ name: String) -> Unicode.Scalar? {
        guard let known = htmlEntityLookup(name) else { return nil }
        return Unicode.Scalar(known.pointee.value)
    }

    private static func attributes(of node: xmlNodePtr, html: Bool) -> [XMLAttribute] {
        var result: [XMLAttribute] = []
        var attribute = node.pointee.properties
        while let current = attribute {
            var value = ""
            var child = current.pointee.children
            while let text = child {
                if text.pointee.type == XML_TEXT_NODE {
                    value += string(text.pointee.content)
                } else if text.pointee.type == XML_ENTITY_REF_NODE, let name = text.pointee.name,
                    let scalar = characterEntity(String(cString: name))
                {
                    value.unicodeScalars.append(scalar)
                }
                child = text.pointee.next
            }
            let local = string(current.pointee.name)
            var namespace = namespaceURI(current.pointee.ns)
            if html {
                // The HTML parser keeps prefixes in the name: map the ones books use.
                if local.hasPrefix("epub:") {
                    result.append(XMLAttribute(name: XMLName(Namespace.ops, String(local.dropFirst(5))), value: value))
                } else if local.hasPrefix("xml:") {
                    result.append(XMLAttribute(name: XMLName(Namespace.xml, String(local.dropFirst(4))), value: value))
                } else {
                    result.append(XMLAttribute(name: XMLName("", local.lowercased()), value: value))
                }
            } else {
                if namespace == "" && local.hasPrefix("xml:") { namespace = Namespace.xml }
                result.append(XMLAttribute(name: XMLName(namespace, local), value: value))
            }
            attribute = current.pointee.next
        }
        return result
    }

    private static func namespaceURI(_ ns: xmlNsPtr?) -> String {
        guard let ns, let href = ns.pointee.href else { return "" }
        return string(href)
    }

    private static func string(_ chars: UnsafePointer<xmlChar>?) -> String {
        guard let chars else { return "" }
        return String(cString: chars)
    }

    private static func string(_ chars: UnsafeMutablePointer<xmlChar>?) -> String {
        guard let chars else { return "" }
        return String(cString: chars)
    }
}
