import FuzzSupport
import QuireCore
import QuireDocument
@testable import QuireLayout
import QuireStyle
import QuireXML

// The XHTML parse to the box tree: the input is a content document, parsed as XHTML (falling back
// to the HTML parser when it is not well-formed, as books are read), styled by its own <style>
// blocks and attributes, built into the flow tree, and given its text positions, crengine's text
// model, and a CFI and an XPointer at a few offsets, read back.

@_cdecl("FuzzXHTML_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    let path = "OEBPS/text/ch1.xhtml"
    guard let document = try? ContentDocument.parse(bytes, path: path, limits: Fuzz.limits) else { return 0 }
    let styles = StyleEngine().computeStyles(
        document: document.tree, documentPath: path, environment: StyleEnvironment(viewportWidth: 300, viewportHeight: 400),
        loadResource: { _ in nil })
    var builder = BoxTreeBuilder(document: document, styles: styles)
    _ = builder.build()
    let text = DocumentText(document)
    let model = CrengineText(text, styles: CrengineStyle.of(document.tree, styles: styles))
    for offset in Set([0, text.length / 3, text.length / 2, text.length]) {
        let cfi = CFI.make(spineStep: 6, spineIndex: 0, itemrefID: "c1", text: text, offset: offset)
        if let parsed = try? CFI.parse(cfi) { _ = try? CFI.offset(of: parsed, in: text) }
        let xpointer = XPointer.make(spineIndex: 0, fragmentCount: 1, text: text, model: model, offset: offset)
        if let parsed = try? XPointer.parse(xpointer) { _ = try? XPointer.offset(of: parsed, in: text, model: model) }
    }
    return 0
}
