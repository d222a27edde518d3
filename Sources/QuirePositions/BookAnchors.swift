import Glibc
import QuireContainer
import QuireCore
import QuireDocument
import QuireLayout

/// Resolves anchors that need the book's DOM (CFIs, XPointers, fragments, `#id` selectors) to
/// positions. Every failure is an `unresolvable` error, never a nearby guess.
public final class BookAnchors {
    public let container: EPUBContainer
    private var texts: [Int: DocumentText] = [:]
    private var crengineTexts: [Int: CrengineText?] = [:]
    /// The last chapter `units` read: marking matches page by page reads the same chapter again
    /// and again, and a parse per painted page would be on the page turn's path.
    private var lastUnits: (spineIndex: Int, units: [UInt16])?

    public init(container: EPUBContainer) { self.container = container }

    public func text(spineIndex: Int) throws -> DocumentText {
        if let text = texts[spineIndex] { return text }
        let publication = container.publication
        guard spineIndex >= 0, spineIndex < publication.spine.count, let item = publication.item(for: publication.spine[spineIndex]),
            item.path != nil
        else { throw QuireError.unresolvable("spine item \(spineIndex + 1) does not exist") }
        let document = try ContentDocument.read(item, from: container)
        let text = DocumentText(document)
        texts[spineIndex] = text
        return text
    }

    /// A chapter's text units for a one-off read (searching): the cached text when there is one,
    /// otherwise read without keeping the document, so a search through a long book stays small.
    public func units(spineIndex: Int) throws -> [UInt16] {
        if let text = texts[spineIndex] { return text.units }
        if let lastUnits, lastUnits.spineIndex == spineIndex { return lastUnits.units }
        let publication = container.publication
        guard spineIndex >= 0, spineIndex < publication.spine.count, let item = publication.item(for: publication.spine[spineIndex]),
            item.path != nil
        else { throw QuireError.unresolvable("spine item \(spineIndex + 1) does not exist") }
        let units = DocumentText(try ContentDocument.read(item, from: container)).units
        lastUnits = (spineIndex, units)
        return units
    }

    public func position(cfi: String, spineStep: Int) throws -> Position {
        let path = try CFI.parse(cfi)
        let spineIndex = try CFI.spineIndex(of: path, spineStep: spineStep, itemrefIDs: container.publication.spine.map(\.id))
        return Position(spineIndex: spineIndex, offset: try CFI.offset(of: path, in: text(spineIndex: spineIndex)))
    }

    public func position(xpointer: String) throws -> Position {
        let parsed = try XPointer.parse(xpointer)
        let spineIndex = parsed.fragment - 1
        guard spineIndex >= 0, spineIndex < container.publication.spine.count else {
            throw QuireError.unresolvable("DocFragment[\(parsed.fragment)] is outside the book's \(container.publication.spine.count) spine items")
        }
        let text = try text(spineIndex: spineIndex)
        return Position(spineIndex: spineIndex, offset: try XPointer.offset(of: parsed, in: text, model: crengineText(spineIndex, text)))
    }

    /// crengine's text nodes of a spine item, as the position map's XPointers count them.
    private func crengineText(_ spineIndex: Int, _ text: DocumentText) -> CrengineText? {
        if let model = crengineTexts[spineIndex] { return model }
        let model = CrengineText(text, styles: CrengineStyle.of(text.document, container: container))
        crengineTexts[spineIndex] = model
        return model
    }

    /// An element id (from a fragment or a `#id` CSS selector) in a spine item.
    public func position(spineIndex: Int, id: String) throws -> Position {
        let text = try text(spineIndex: spineIndex)
        if id.hasPrefix("epubcfi(") {
            return Position(spineIndex: spineIndex, offset: try CFI.offset(of: CFI.parse(id), in: text))
        }
        guard let node = text.document.ids[id] else {
            throw QuireError.unresolvable("no element with id '\(id)' in \(text.document.path)")
        }
        return Position(spineIndex: spineIndex, offset: text.document.textOffset(atElement: node))
    }
}
