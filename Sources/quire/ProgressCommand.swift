import Quire
import QuireCore
import QuireViewer

/// `quire progress BOOK|DIR [--json]`: what `quire view` saved for a book.
enum ProgressCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(arguments, valued: [], boolean: ["json"])
        guard options.positionals.count == 1 else { throw QuireError.usage("progress needs one book or render directory") }
        let input = options.positionals[0]
        let identity: PositionMap.BookIdentity
        if FileSystem.isDirectory(input) {
            identity = try RenderedPages(directory: input).identity()
        } else {
            guard FileSystem.exists(input) else { throw QuireError.notFound(path: input) }
            identity = try PositionMap.BookIdentity.of(file: input)
        }
        let store = try ProgressStore.standard()
        guard let saved = try store.progress(of: identity.sha256) else {
            throw QuireError.unresolvable("no reading progress saved for \(input) (in \(store.path))")
        }
        if options.flag("json") {
            writeStdout(bytes: saved.jsonWithKey(identity.sha256).serializedBytes() + [0x0A])
            return
        }
        var lines = [
            "book: " + (saved.title ?? input),
            "sha256: \(identity.sha256)",
            "page: \(saved.page)" + (saved.pageCount.map { " of \($0)" } ?? "") + (saved.finished ? " (finished)" : ""),
            "percentage: " + fixedDecimals(saved.percentage * 100, 2) + "%",
            "locator: " + saved.locator.json.serialized(pretty: false),
        ]
        if let xpointer = saved.locator.locations.xpointer { lines.append("xpointer: \(xpointer)") }
        lines.append("koreader document: \(saved.koreaderDocument)")
        writeStdout(lines.joined(separator: "\n") + "\n")
    }
}
