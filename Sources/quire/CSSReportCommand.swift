import Quire
import QuireCore

enum CSSReportCommand {
    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(arguments, valued: Arguments.limitFlags.union([Arguments.timeoutFlag]), boolean: ["json"])
        guard options.positionals.count == 1 else { throw QuireError.usage("css-report takes one book: quire css-report BOOK [--json]") }
        try options.startTimeout(for: options.positionals[0])
        let report = try Book.open(options.positionals[0], limits: try options.limits(), preloadHyphenation: false).cssReport()
        if options.flag("json") {
            writeStdout(bytes: report.json().serializedBytes() + [0x0A])
            return
        }
        var lines = [
            "Declarations: \(report.total)",
            "  applied      \(report.applied) (\(fixedDecimals(report.appliedPercentage, 1))%)",
            "  unsupported  \(report.unsupported)",
            "  invalid      \(report.invalid)",
        ]
        let top = report.topNotApplied.prefix(15)
        if !top.isEmpty {
            lines.append("Not applied, by property:")
            for (name, counts) in top {
                lines.append("  \(name.padded(toLength: 32)) \(counts.unsupported) unsupported, \(counts.invalid) invalid")
            }
        }
        writeStdout(lines.joined(separator: "\n") + "\n")
    }
}
