import Quire

enum InfoCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(arguments, valued: Arguments.limitFlags.union(["password"]), boolean: ["json"])
        guard options.positionals.count == 1 else {
            throw QuireError.usage("info takes one book: quire info BOOK [--json]")
        }
        let path = options.positionals[0]
        try InputFile.checkReadable(path)
        if try InputFile.sniff(path) == .pdf {
            let info = try PDFDocument(path: path, password: options.value("password")).info()
            if options.flag("json") {
                writeStdout(bytes: PDFInfoReport.json(info, file: path).serializedBytes() + [UInt8(ascii: "\n")])
            } else {
                writeStdout(PDFInfoReport.text(info))
            }
            return
        }
        if options.value("password") != nil { throw QuireError.usage("--password is for PDF input only") }
        let container = try EPUBContainer.open(path: path, limits: try options.limits())
        if options.flag("json") {
            writeStdout(bytes: PublicationInfo.json(container, file: path).serializedBytes() + [UInt8(ascii: "\n")])
        } else {
            writeStdout(PublicationInfo.text(container))
        }
    }
}
