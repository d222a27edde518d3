import Dispatch
import Glibc
import Quire
import QuireCore

/// How pages are drawn: libchafa's pixel modes, and its character-cell modes by colour depth.
public enum GraphicsMode: String, Sendable, CaseIterable {
    case kitty, iterm, sixel, symbols, symbols256 = "symbols-256", symbols16 = "symbols-16"

    public var isPixels: Bool { self == .kitty || self == .iterm || self == .sixel }
}

/// What the terminal said about itself. One probe is written at start-up: a kitty graphics query,
/// primary device attributes (attribute 4 is sixel), `CSI 16 t` (cell size) and `CSI 14 t`
/// (text-area size), ended by `CSI 5n`, whose answer every terminal gives, so the read ends as
/// soon as the answers are in and never waits past the timeout.
public struct TerminalProbe: Sendable, Equatable {
    public var kittyGraphics = false
    public var sixel = false
    public var cellPixels: (width: Int, height: Int)?
    public var windowPixels: (width: Int, height: Int)?
    /// The status report came back: the terminal answers queries.
    public var answered = false

    public static func == (a: TerminalProbe, b: TerminalProbe) -> Bool {
        a.kittyGraphics == b.kittyGraphics && a.sixel == b.sixel && a.cellPixels?.width == b.cellPixels?.width
            && a.cellPixels?.height == b.cellPixels?.height && a.windowPixels?.width == b.windowPixels?.width
            && a.windowPixels?.height == b.windowPixels?.height && a.answered == b.answered
    }

    public init() {}

    public static let query = "\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\" + "\u{1B}[c" + "\u{1B}[16t" + "\u{1B}[14t" + "\u{1B}[5n"

    /// Writes the probe and reads the answers, for at most `timeout` milliseconds.
    public static func run(_ terminal: Terminal, timeout: Int = 300, passthrough: Bool = false) -> TerminalProbe {
        terminal.write(passthrough ? Tmux.wrap(query) : query)
        var answer: [UInt8] = []
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout) * 1_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            let left = Int32((deadline - DispatchTime.now().uptimeNanoseconds) / 1_000_000)
            answer += terminal.read(timeout: max(1, left))
            let text = String(decoding: answer, as: UTF8.self)
            if text.contains("\u{1B}[0n") || text.contains("\u{1B}[3n") { break }
        }
        return parse(String(decoding: answer, as: UTF8.self))
    }

    /// Reads the answers out of whatever came back (in any order, with anything else between).
    public static func parse(_ text: String) -> TerminalProbe {
        var probe = TerminalProbe()
        if text.contains("\u{1B}_Gi=31;OK") { probe.kittyGraphics = true }
        // CSI ? 62 ; 4 ; 22 c
        if let fields = answer(in: text, after: "\u{1B}[?", final: "c") {
            probe.sixel = fields.split(separator: ";").contains("4")
        }
        func report(_ code: String) -> (Int, Int)? {
            // CSI code ; height ; width t
            guard let fields = answer(in: text, after: "\u{1B}[\(code);", final: "t") else { return nil }
            let numbers = fields.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
            guard numbers.count == 2, let height = numbers[0], let width = numbers[1], width > 0, height > 0 else { return nil }
            return (width, height)
        }
        probe.cellPixels = report("6")
        probe.windowPixels = report("4")
        probe.answered = text.contains("\u{1B}[0n") || text.contains("\u{1B}[3n")
        return probe
    }

    /// The digits and semicolons of the first answer that starts with `prefix` and ends with
    /// `final` right after them (nil when no answer has that form).
    static func answer(in text: String, after prefix: String, final: Character) -> Substring? {
        var rest = text[...]
        while let start = rest.firstRange(of: prefix) {
            let body = rest[start.upperBound...]
            let fields = body.prefix { $0.isASCII && ($0.isNumber || $0 == ";") }
            if fields.endIndex < body.endIndex, body[fields.endIndex] == final { return fields }
            rest = rest[start.upperBound...]
        }
        return nil
    }
}

/// tmux: the outer terminal's type, and whether it lets image sequences through.
public enum Tmux {
    public static var isInside: Bool { SystemEnvironment.variable("TMUX") != nil }

    /// `#{client_termtype}` and `allow-passthrough`, asked of tmux itself.
    public static func outerTerminal() -> (termType: String?, passthrough: Bool) {
        func ask(_ arguments: [String]) -> String? {
            guard let result = SystemEnvironment.run(["tmux"] + arguments), result.status == 0 else { return nil }
            let text = result.output.trimmingUnicodeWhitespace()
            return text.isEmpty ? nil : text
        }
        let termType = ask(["display-message", "-p", "#{client_termtype}"])
        let passthrough = ask(["show-options", "-gv", "allow-passthrough"]).map { $0 == "on" || $0 == "all" } ?? false
        return (termType, passthrough)
    }

    /// `ESC Ptmux; … ESC \` with every ESC inside doubled.
    public static func wrap(_ sequence: String) -> String {
        "\u{1B}Ptmux;" + sequence.replacing("\u{1B}", with: "\u{1B}\u{1B}") + "\u{1B}\\"
    }
}

/// The graphics mode, cell size and tmux handling the viewer settles on at start-up.
public struct GraphicsChoice {
    public var encoder: PageEncoder
    public var cell: (width: Int, height: Int)
    /// Why: what was asked, answered or found (for `i` and for bug reports).
    public var reasons: [String]

    /// `--graphics` wins; else the probe's answers; else libchafa's term database; under tmux the
    /// outer terminal's type, with passthrough only where tmux allows it. The cell size comes from
    /// TIOCGWINSZ, else `CSI 16 t`, else `--cell`; without any, pixel modes are not used.
    public static func detect(_ terminal: Terminal, options: ViewerOptions) throws -> GraphicsChoice {
        var reasons: [String] = []
        var termType: String?
        var passthrough = false
        if Tmux.isInside {
            let outer = Tmux.outerTerminal()
            termType = outer.termType
            passthrough = outer.passthrough
            reasons.append("tmux: outer terminal \(outer.termType ?? "unknown"), passthrough \(outer.passthrough ? "on" : "off")")
        }
        let probe = TerminalProbe.run(terminal, passthrough: passthrough)
        reasons.append(
            "probe: " + (probe.answered ? "answered" : "no answer within 300 ms") + (probe.kittyGraphics ? ", kitty graphics" : "")
                + (probe.sixel ? ", sixel" : ""))
        var cell: (width: Int, height: Int)?
        if let size = Terminal.size(), size.pixelWidth > 0, size.pixelHeight > 0 {
            cell = (size.pixelWidth / size.columns, size.pixelHeight / size.rows)
            reasons.append("cell \(cell!.width)x\(cell!.height) from TIOCGWINSZ")
        } else if let probed = probe.cellPixels {
            cell = probed
            reasons.append("cell \(probed.width)x\(probed.height) from CSI 16 t")
        } else if let size = Terminal.size(), let window = probe.windowPixels {
            cell = (window.width / size.columns, window.height / size.rows)
            reasons.append("cell from CSI 14 t")
        } else if let given = options.cell {
            cell = given
            reasons.append("cell \(given.width)x\(given.height) from --cell")
        }
        let database = PageEncoder(mode: .symbols, termType: termType)
        var mode: GraphicsMode
        if let forced = options.graphics {
            mode = forced
        } else if Tmux.isInside && !passthrough {
            mode = .symbols
        } else if probe.kittyGraphics {
            mode = .kitty
        } else if probe.sixel {
            mode = .sixel
        } else {
            mode = database.suggestedMode
        }
        if mode.isPixels && cell == nil {
            if options.graphics != nil {
                throw QuireError.usage("the terminal reports no cell size: give it with --cell WxH to draw \(mode.rawValue) images")
            }
            reasons.append("no cell size known: symbols instead of \(mode.rawValue)")
            mode = database.suggestedMode.isPixels ? .symbols : database.suggestedMode
        }
        reasons.append("graphics: \(mode.rawValue)")
        // Symbols need only the cell's shape: a typical 1:2 cell where nothing says.
        return GraphicsChoice(
            encoder: PageEncoder(mode: mode, termType: termType, passthrough: passthrough), cell: cell ?? (8, 16), reasons: reasons)
    }
}
