import FuzzSupport
import QuireCore
@testable import QuireStyle
import QuireXML

// The CSS tokenizer, parser and cascade: the input is a stylesheet, tokenized and parsed on its
// own, then linked from a fixed document (and @imported by itself, through the same loader) and
// cascaded onto every element, pseudo-elements and the user-origin sheet included.

let document = try! XMLParser.parse(
    Array(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en"><head><title>T</title>
        <link rel="stylesheet" type="text/css" href="../css/fuzz.css"/><style>p { margin: 0 }</style></head>
        <body class="b" dir="ltr"><section id="s" epub:type="chapter"><h1 id="h" class="title">Title</h1>
        <p id="p1" class="first" style="text-indent: 1em">Some <em>text</em> and <a href="#n">a link</a>.</p>
        <div class="box"><p lang="fr">Deux</p><ul><li>one</li><li class="x y">two<span>!</span></li></ul>
        <table><tr><th>a</th><td colspan="2">b</td></tr></table><img src="i.png" alt="i" width="10"/>
        <ol start="3"><li value="7">seven</li></ol><blockquote><p>q</p></blockquote><pre>  pre  </pre>
        <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg></div>
        <aside epub:type="footnote" id="n"><p>Note</p></aside><hr/><br/><sup>1</sup><ruby>漢<rt>kan</rt></ruby></section></body></html>
        """.utf8), path: "OEBPS/text/ch1.xhtml", mode: .strict)

@_cdecl("FuzzCSS_main")
func fuzzMain(_ argc: CInt, _ argv: Fuzz.Argv) -> CInt { Fuzz.main(argc, argv, fuzz) }

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    let text = SheetCompiler.decode(bytes)
    _ = Tokenizer.tokenize(text)
    let (values, _) = ComponentParser.parse(text)
    _ = RuleParser.rules(values, topLevel: true)
    _ = RuleParser.declarations(values)
    var environment = StyleEnvironment(viewportWidth: 300, viewportHeight: 400)
    if size % 2 == 1 { environment.overrides = ReaderOverrides(fontSizePt: 14, lineHeight: 1.4, textAlign: .justify, userCSS: text) }
    let styles = StyleEngine().computeStyles(
        document: document, documentPath: "OEBPS/text/ch1.xhtml", environment: environment,
        loadResource: { $0.hasSuffix(".css") ? bytes : nil })
    for index in 0..<Int32(document.nodeCount) where document.element(NodeID(index)) != nil {
        _ = styles.style(of: NodeID(index))
        _ = styles.generatedContent(of: NodeID(index))
    }
    return 0
}
