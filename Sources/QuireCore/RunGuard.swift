@preconcurrency import Glibc

/// How a command ends when its time is up or it is told to stop: the output it was building
/// (each `StagedDirectory` not yet swapped in) is removed, and the process ends with a documented
/// code. Nothing the run had not finished is left behind, and nothing it had finished is touched.
public enum RunGuard {
    /// Staging directories being written, and whether the process is ending (then none may commit).
    struct State {
        var staging: Set<String> = []
        var ending = false
    }
    static let state = LockedValue(State())

    /// Ends the process after `seconds` with `error` (one line on stderr, its exit code), unless it
    /// has ended by then. The clock is the process's own time since this call, not the layout's:
    /// it bounds a book that would take too long whatever the reason.
    public static func startTimeout(seconds: Int, error: QuireError) {
        guard seconds > 0 else { return }
        startThread {
            var request = timespec(tv_sec: seconds, tv_nsec: 0)
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            end(message: "quire: error: \(error.description)\n", status: error.exitCode)
        }
    }

    /// SIGINT, SIGTERM and SIGHUP remove the output being built, then end the process as the
    /// signal would have. Call before any other thread starts: the signals are blocked in this
    /// thread (and so in every thread started after it) and taken by one thread of their own.
    public static func cleanUpOnSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        precondition(pthread_sigmask(SIG_BLOCK, &signals, nil) == 0, "pthread_sigmask failed")
        let blocked = signals
        startThread {
            var set = blocked
            var received: Int32 = 0
            while sigwait(&set, &received) != 0 {}
            removeStaging()
            // Die of the signal itself, so a parent sees what stopped the run.
            signal(received, SIG_DFL)
            var one = sigset_t()
            sigemptyset(&one)
            sigaddset(&one, received)
            pthread_sigmask(SIG_UNBLOCK, &one, nil)
            raise(received)
            _exit(128 + received)
        }
    }

    static func end(message: String, status: Int32) -> Never {
        removeStaging()
        fputs(message, stderr)
        _exit(status)
    }

    /// Removes every staging directory and lets none commit from now on.
    static func removeStaging() {
        let staging = state.withLock { state in
            state.ending = true
            return state.staging
        }
        for path in staging {
            // Workers may still be writing into it: moved aside first, their next writes fail
            // instead of re-creating files while the tree is removed.
            let doomed = path + "-old"
            let gone = rename(path, doomed) == 0 ? doomed : path
            for _ in 0..<3 where FileSystem.exists(gone) { FileSystem.removeTree(gone) }
        }
    }

    static func register(_ staging: String) { state.withLock { _ = $0.staging.insert(staging) } }
    static func unregister(_ staging: String) { state.withLock { _ = $0.staging.remove(staging) } }

    /// Runs `swap` unless the process is ending. A guard that is ending it owns the exit: the
    /// caller waits for it rather than print a second error.
    static func commit(_ staging: String, _ swap: () throws(QuireError) -> Void) throws(QuireError) {
        let outcome: Result<Void, QuireError>? = state.withLock { state in
            guard !state.ending else { return nil }
            do throws(QuireError) {
                try swap()
            } catch {
                return .failure(error)
            }
            state.staging.remove(staging)
            return .success(())
        }
        guard let outcome else {
            while true { pause() }
        }
        try outcome.get()
    }
}
