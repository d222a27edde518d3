import QuireCore
import QuireXML

/// How much of a book's CSS the engine honours: each declaration of its linked sheets, `<style>`
/// blocks and `style` attributes counted as applied, unsupported (valid, ignored) or invalid.
/// Each distinct piece of CSS counts once per book, however often it is used: a sheet linked by
/// every chapter, a `<style>` block repeated in each, and a `style` attribute repeated on
/// thousands of elements are each one source. The report measures the CSS written, not its reach;
/// `Book.cssReport` then counts as unsupported what reaches an element layout does not draw it on.
/// Style attributes on SVG elements are librsvg's and are not counted.
public struct CSSReport: Sendable {
    public struct Counts: Sendable, Hashable {
        public var applied = 0
        public var unsupported = 0
        public var invalid = 0
        public var total: Int { applied + unsupported + invalid }
    }

    public var applied: Int
    public var unsupported: Int
    public var invalid: Int
    public var total: Int { applied + unsupported + invalid }
    public var properties: [String: Counts]

    /// Applied declarations as a percentage of all (100 when there are none).
    public var appliedPercentage: Double { total == 0 ? 100 : Double(applied) * 100 / Double(total) }

    public static func build(documents: [(tree: XMLTree, path: String)], loadResource: (String) -> [UInt8]?, limits: Limits = .standard) -> CSSReport {
        var counts = DeclarationCounts()
        var seenSheets: Set<String> = []
        var seenAttributes: Set<String> = []
        let environment = StyleEnvironment()
        withoutActuallyEscaping(loadResource) { load in
            for (tree, path) in documents {
                var warnings: [Warning] = []
                var mediaDiffers = false
                for (bytes, sheetPath) in StyleEngine.authorSheets(
                    document: tree, documentPath: path, environment: environment, loadResource: load, warnings: &warnings,
                    mediaDiffers: &mediaDiffers)
                {
                    let key = StyleEngine.reportKey(bytes: bytes, path: sheetPath, documentPath: path)
                    guard seenSheets.insert(key).inserted else { continue }
                    var compiler = SheetCompiler(environment: environment, loadResource: load, counting: true, limits: limits)
                    compiler.compile(bytes: bytes, path: sheetPath)
                    merge(compiler.counts, into: &counts)
                }
                for index in 0..<Int32(tree.nodeCount) {
                    // SVG elements' style attributes (fill, stroke…) are librsvg's to draw, not this engine's.
                    guard let element = tree.element(NodeID(index)), element.namespace != Namespace.svg,
                        let style = element.attribute("style"), seenAttributes.insert(style).inserted
                    else { continue }
                    var local: DeclarationCounts? = DeclarationCounts()
                    _ = SheetCompiler.declarationBlock(ComponentParser.parse(style).0, counts: &local)
                    merge(local, into: &counts)
                }
            }
        }
        var report = CSSReport(applied: 0, unsupported: 0, invalid: 0, properties: [:])
        for (name, entry) in counts.byProperty {
            report.applied += entry.applied
            report.unsupported += entry.unsupported
            report.invalid += entry.invalid
            report.properties[name] = Counts(applied: entry.applied, unsupported: entry.unsupported, invalid: entry.invalid)
        }
        return report
    }

    private static func merge(_ source: DeclarationCounts?, into counts: inout DeclarationCounts) {
        guard let source else { return }
        for (name, entry) in source.byProperty {
            var current = counts.byProperty[name] ?? (0, 0, 0)
            current.applied += entry.applied
            current.unsupported += entry.unsupported
            current.invalid += entry.invalid
            counts.byProperty[name] = current
        }
    }

    /// Counts declarations the report took as applied, but that reach an element layout does
    /// not honour them on, as unsupported (each once, however many elements it reaches).
    public mutating func reclassify(_ declarations: Set<WrittenDeclaration>) {
        for declaration in declarations {
            guard var counts = properties[declaration.property], counts.applied > 0 else { continue }
            counts.applied -= 1
            counts.unsupported += 1
            properties[declaration.property] = counts
            applied -= 1
            unsupported += 1
        }
    }

    /// Merges another report (for totals over many books).
    public mutating func add(_ other: CSSReport) {
        applied += other.applied
        unsupported += other.unsupported
        invalid += other.invalid
        for (name, entry) in other.properties {
            var current = properties[name] ?? Counts()
            current.applied += entry.applied
            current.unsupported += entry.unsupported
            current.invalid += entry.invalid
            properties[name] = current
        }
    }

    public init(applied: Int = 0, unsupported: Int = 0, invalid: Int = 0, properties: [String: Counts] = [:]) {
        self.applied = applied
        self.unsupported = unsupported
        self.invalid = invalid
        self.properties = properties
    }

    /// Properties sorted by how many declarations were not applied, most first.
    public var topNotApplied: [(String, Counts)] {
        properties.filter { $0.value.unsupported + $0.value.invalid > 0 }
            .sorted { ($0.value.unsupported + $0.value.invalid, $1.key) > ($1.value.unsupported + $1.value.invalid, $0.key) }
    }

    public func json() -> JSON {
        let names = properties.keys.sorted()
        return .object([
            ("applied", .int(applied)), ("unsupported", .int(unsupported)), ("invalid", .int(invalid)), ("total", .int(total)),
            ("appliedPercentage", .double((appliedPercentage * 10).rounded() / 10)),
            (
                "properties",
                .object(names.map { name in
                    let c = properties[name]!
                    return (name, .object([("applied", .int(c.applied)), ("unsupported", .int(c.unsupported)), ("invalid", .int(c.invalid))]))
                })
            ),
        ])
    }
}
