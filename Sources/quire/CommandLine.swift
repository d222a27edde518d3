import Quire
import QuireCore

/// Minimal argument scanner: flags with values (`--out DIR` or `--out=DIR`), boolean flags, positionals.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var repeated: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// `valued` names flags that take a value; `boolean` names flags that don't. Anything else is a usage error.
    init(_ arguments: ArraySlice<String>, valued: Set<String>, boolean: Set<String>) throws {
        var iterator = arguments.makeIterator()
        var onlyPositionals = false
        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                if argument.hasPrefix("-") && argument != "-" && !onlyPositionals {
                    throw QuireError.usage("unknown option \(argument)")
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                guard let value = inlineValue ?? iterator.next() else {
                    throw QuireError.usage("--\(name) needs a value")
                }
                values[name] = value
                repeated[name, default: []].append(value)
            } else if boolean.contains(name) {
                guard inlineValue == nil else { throw QuireError.usage("--\(name) takes no value") }
                flags.insert(name)
            } else {
                throw QuireError.usage("unknown option --\(name)")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
    /// Every value of an option given more than once, in order.
    func values(_ name: String) -> [String] { repeated[name] ?? [] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func integer(_ name: String) throws -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), value > 0 else { throw QuireError.usage("--\(name) needs a positive integer, not '\(text)'") }
        return value
    }

    func byteSize(_ name: String) throws -> Int64? {
        guard let text = values[name] else { return nil }
        guard let value = parseByteSize(text), value > 0 else {
            throw QuireError.usage("--\(name) needs a size such as 512M or 2G, not '\(text)'")
        }
        return value
    }

    /// `--timeout SECONDS`: the run time a command that reads one book may take (0: no limit).
    static let timeoutFlag = "timeout"

    /// Ends the process with a limit error once the run has taken longer than `--timeout` allows.
    func startTimeout(for book: String) throws {
        var seconds = Limits.defaultTimeoutSeconds
        if let text = values[Self.timeoutFlag] {
            guard let value = Int(text), value >= 0 else { throw QuireError.usage("--timeout needs whole seconds (0 for no limit), not '\(text)'") }
            seconds = value
        }
        RunGuard.startTimeout(
            seconds: seconds,
            error: .limitExceeded(limit: "timeout", detail: "\(book) took more than \(seconds) s (raise it with --timeout SECONDS, 0 for none)"))
    }

    /// The `--max-*` flags every command that opens a book accepts.
    static let limitFlags: Set<String> = [
        "max-entries", "max-total-size", "max-entry-size", "max-compression-ratio", "max-xml-size", "max-xml-depth",
        "max-xml-nodes", "max-css-size", "max-css-rules", "max-css-nesting", "max-image-side", "max-image-pixels",
        "max-image-buffer-pixels",
    ]

    func limits() throws -> Limits {
        var limits = Limits()
        if let value = try integer("max-entries") { limits.maxEntryCount = value }
        if let value = try byteSize("max-total-size") { limits.maxTotalUncompressedSize = value }
        if let value = try byteSize("max-entry-size") { limits.maxEntryUncompressedSize = value }
        if let value = try integer("max-compression-ratio") { limits.maxCompressionRatio = value }
        if let value = try byteSize("max-xml-size") { limits.maxXMLDocumentSize = Int(value) }
        if let value = try integer("max-xml-depth") { limits.maxXMLDepth = value }
        if let value = try integer("max-xml-nodes") { limits.maxXMLNodes = value }
        if let value = try byteSize("max-css-size") { limits.maxCSSSize = Int(clamping: value) }
        if let value = try integer("max-css-rules") { limits.maxCSSRules = value }
        if let value = try integer("max-css-nesting") { limits.maxCSSNesting = value }
        if let value = try integer("max-image-side") { limits.maxImageDimension = value }
        if let value = try integer("max-image-pixels") { limits.maxImagePixels = value }
        if let value = try integer("max-image-buffer-pixels") { limits.maxImageBufferPixels = value }
        return limits
    }
}
