import Dispatch
import Quire

/// Work started now on another thread, its result (or error) collected later with `value()`.
final class Background<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Value, Error>?

    init(_ work: @escaping @Sendable () throws -> Value) {
        // A thread of its own, not Dispatch's pool (see `startThread`).
        startThread {
            self.result = Result(catching: work)
            self.done.signal()
        }
    }

    /// Waits for the work (the semaphore orders the write of `result` before this read).
    func value() throws -> Value {
        done.wait()
        done.signal()
        return try result!.get()
    }
}
