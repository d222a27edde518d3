import Glibc
import QuireCore

// The terminal the viewer owns while it runs: raw input, the alternate screen, a hidden cursor.
// Whatever ends the viewer (q, an error, SIGINT, SIGTERM, SIGHUP, a crash in a renderer that
// raises SIGSEGV or SIGABRT) puts the terminal back as it found it. The signal handlers only do
// async-signal-safe work: tcsetattr and write of bytes prepared beforehand.

/// The saved terminal state, reachable from signal handlers.
nonisolated(unsafe) private var savedAttributes = termios()
nonisolated(unsafe) private var hasSavedAttributes = false
nonisolated(unsafe) private var restoreBytes: [UInt8] = []
/// Set by SIGWINCH; read and cleared by the event loop.
nonisolated(unsafe) private var resizePending: sig_atomic_t = 0

private func restoreFromSignal(_ signal: Int32) {
    if hasSavedAttributes { tcsetattr(STDIN_FILENO, TCSAFLUSH, &savedAttributes) }
    restoreBytes.withUnsafeBytes { _ = Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    // Die of the same signal, so the parent sees why.
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
}

/// The cell grid and, when the terminal says, its pixel size.
public struct TerminalSize: Sendable, Equatable {
    public var columns: Int
    public var rows: Int
    /// Pixels of the whole text area, 0 where the terminal does not say (ssh, WSL, some HiDPI setups).
    public var pixelWidth: Int
    public var pixelHeight: Int

    public init(columns: Int, rows: Int, pixelWidth: Int = 0, pixelHeight: Int = 0) {
        self.columns = columns
        self.rows = rows
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
    }
}

public final class Terminal {
    public private(set) var isActive = false

    public init() {}

    /// Whether standard input and output are a terminal (the viewer needs one unless `--once`).
    public static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Raw input, the alternate screen, the cursor hidden; restored by `leave` or any fatal signal.
    public func enter() throws {
        guard tcgetattr(STDIN_FILENO, &savedAttributes) == 0 else { throw QuireError.io("cannot read the terminal's settings") }
        hasSavedAttributes = true
        restoreBytes = Array("\u{1B}[?25h\u{1B}[0m\u{1B}[?1049l".utf8)
        var raw = savedAttributes
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        raw.c_cc.16 = 0  // VMIN
        raw.c_cc.17 = 0  // VTIME
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { throw QuireError.io("cannot set the terminal to raw input") }
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS, SIGILL] {
            Glibc.signal(signal) { restoreFromSignal($0) }
        }
        Glibc.signal(SIGWINCH) { _ in resizePending = 1 }
        isActive = true
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    /// Back to the terminal as it was.
    public func leave() {
        guard isActive else { return }
        isActive = false
        write(String(decoding: restoreBytes, as: UTF8.self))
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &savedAttributes)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGWINCH] { Glibc.signal(signal, SIG_DFL) }
    }

    deinit { leave() }

    /// TIOCGWINSZ: columns, rows and, where the terminal fills them in, pixels.
    public static func size() -> TerminalSize? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row), pixelWidth: Int(size.ws_xpixel), pixelHeight: Int(size.ws_ypixel))
    }

    /// Whether the window changed size since the last call.
    public func takeResize() -> Bool {
        guard resizePending != 0 else { return false }
        resizePending = 0
        return true
    }

    public func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Bytes available within `milliseconds` (empty on timeout).
    public func read(timeout milliseconds: Int32) -> [UInt8] {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer.prefix(count)) : []
    }
}
