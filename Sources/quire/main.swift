@preconcurrency import Glibc
import Quire
import QuireCore

let usage = """
    usage: quire <command> [options]

    commands:
      info BOOK [--json]      what is inside an EPUB (metadata, spine, TOC, page-list, resources, warnings)
                              or a PDF (pages, sizes, labels, outline, metadata; --password PW)
      render BOOK --out DIR   pages as PNG (DIR/pages/0001.png …) and DIR/positions.json
          [--profile NAME | --size WxH] [--dpi N] [--font-size PT] [--margin PT] [--line-height X]
          [--font FAMILY] [--align justify|left|right|center|start] [--theme light|sepia|dark]
          [--gray] [--dither] [--jobs N] [--pages RANGE] [--no-hyphenation] [--map-only]
          [--no-publisher-styles] [--user-css FILE] [--stats FILE] [--open-at PAGE|last|LOCATOR] [--quiet]
          [--force]  render into a DIR that holds other files, keeping them (else refused, 73);
                          the output is built beside DIR and swapped in whole
          [--spreads auto|none|both]  two pages side by side in DIR/spreads/ (auto: on a landscape page
                          box, as the book's rendition:spread allows; the book's rendition:orientation turns the page)
          [--flow auto|paginated|scrolled]  scrolled: each document one tall image (tiled past 16384 px)
                          and its lines' y in the map (auto: as the book's rendition:flow says)
          [--writing-mode auto|horizontal]  auto: a book written in columns (writing-mode: vertical-rl)
                          is set in columns; horizontal: every book in horizontal lines
      render FILE.pdf --out DIR   PDF pages as PNG and DIR/positions.json
          [--dpi N | --profile NAME | --size WxH] [--gray] [--dither] [--jobs N] [--pages RANGE]
          [--password PW] [--rotate 0|90|180|270] [--crop] [--split ltr|rtl|none] [--map-only] [--quiet]
      view DIR|BOOK           read in the terminal: a render's pages, or a book paginated live
          [--graphics kitty|iterm|sixel|symbols|symbols-256|symbols-16] [--cell WxH] [--page N]
          [--locator JSON] [--cfi S] [--profile NAME | --size WxH] [--dark] [--lang L]
          [--search TEXT] [--book BOOK (for DIR)] [--no-resume] [--record-after N]
          [--writing-mode auto|horizontal (for BOOK)]
          [--once [--cols C --rows R]]   (keys: ? in the viewer)
                              reading progress is kept in $XDG_STATE_HOME/quire/progress.json
      progress BOOK|DIR [--json]  the reading progress quire view saved for a book (3 when none)
      batch INPUT... --out ROOT  many books (files, directories, @lists) at many profiles, into
                              ROOT/<book sha256>/<settings>/ with ROOT/index.json; re-runs skip what is done
          [--profile NAME ... | --profiles FILE] [--theme T] [--gray] [--dither] [--map-only]
          [--jobs N] [--shard K/N | --shard auto [--shard-count N]] [--json-log FILE] [--quiet]
          [--cache DIR] [--cache-size SIZE] [--no-cache]  settled chapters kept for other profiles
                              at the same page geometry (default ROOT/.cache, 4G, least recently used go)
      profiles                the named device profiles
      css-report BOOK [--json] every declaration of the book's CSS: applied, unsupported or invalid
      locate MAP QUERY [--json] [--book BOOK]
                              the page holding a position, and its start Locator. QUERY is one of
          --page N [--from OTHER_MAP]  --locator JSON|@FILE  --cfi S  --xpointer S
          --progression HREF=F  --total-progression F  --position N [--convention readium|komga]
          --label L  --toc TITLE

    options for every command that opens a book (raise the safety limits):
      --max-entries N  --max-total-size SIZE  --max-entry-size SIZE
      --max-compression-ratio N  --max-xml-size SIZE  --max-xml-depth N
      --max-xml-nodes N  --max-css-size SIZE  --max-css-rules N  --max-css-nesting N
      --max-image-side N  --max-image-pixels N  --max-image-buffer-pixels N
      --timeout SECONDS  (render, info, locate, css-report; default 1800, 0 for none: exit 65 past it)

    exit codes: 0 ok, 3 unresolvable position (locate), no match (view --search) or no progress saved (progress), 64 usage, 65 bad data (corrupt, invalid or hostile book),
    66 cannot open input, 69 unsupported (DRM, encrypted PDF without its password), 73 cannot create output, 74 I/O error,
    75 some books of a batch failed (each with its reason in the summary, the index and the log)
    """

func printError(_ message: String) {
    fputs("quire: error: \(message)\n", stderr)
}

func writeStdout(_ text: String) {
    fputs(text, stdout)
}

func writeStdout(bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
}

func run(_ arguments: [String]) throws {
    guard let command = arguments.first else { throw QuireError.usage("no command given (see quire --help)") }
    let rest = arguments.dropFirst()
    switch command {
    case "info":
        try InfoCommand.run(rest)
    case "render":
        try RenderCommand.run(rest)
    case "profiles":
        try ProfilesCommand.run(rest)
    case "css-report":
        try CSSReportCommand.run(rest)
    case "locate":
        try LocateCommand.run(rest)
    case "view":
        try ViewCommand.run(rest)
    case "progress":
        try ProgressCommand.run(rest)
    case "batch":
        try BatchCommand.run(rest)
    case "--help", "-h", "help":
        writeStdout(usage + "\n")
    case "--version":
        writeStdout("quire \(QuireVersion.string)\n")
    default:
        throw QuireError.usage("unknown command '\(command)' (see quire --help)")
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
    exit(0)
} catch let error as QuireError {
    printError(error.description)
    exit(error.exitCode)
} catch {
    printError("\(error)")
    exit(70)
}
