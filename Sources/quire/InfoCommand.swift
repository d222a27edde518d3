import Quire
import QuireCore

enum InfoCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(arguments, valued: Arguments.limitFlags.union(["password", Arguments.timeoutFlag]), boolean: ["json"])
        guard options.positionals.count == 1 else {
            throw QuireError.usage("info takes one book: quire info BOOK [--json]")
        }
        let path = options.positionals[0]
        try options.startTimeout(for: path)
        if try Book.format(ofFile: path) == .epub, options.value("password") != nil {
            throw QuireError.usage("--password is for PDF input only")
        }
        let book = try Book.open(path, limits: try options.limits(), password: options.value("password"), preloadHyphenation: false)
        if options.flag("json") {
            writeStdout(bytes: book.infoJSON().serializedBytes() + [UInt8(ascii: "\n")])
        } else {
            writeStdout(book.infoText())
        }
    }
}
