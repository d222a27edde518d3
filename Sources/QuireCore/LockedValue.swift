import Glibc

/// One value behind one mutex, with a condition to wait on: the box for state that several
/// threads share (in the manner of swift-nio's `NIOLockedValueBox`). Every pthread call's result is
/// checked; a failure is a broken invariant, not an error to recover from.
public final class LockedValue<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        precondition(pthread_cond_destroy(condition) == 0, "pthread_cond_destroy failed")
        precondition(pthread_mutex_destroy(mutex) == 0, "pthread_mutex_destroy failed")
        condition.deallocate()
        mutex.deallocate()
    }

    private func lock() { precondition(pthread_mutex_lock(mutex) == 0, "pthread_mutex_lock failed") }
    private func unlock() { precondition(pthread_mutex_unlock(mutex) == 0, "pthread_mutex_unlock failed") }

    /// Runs `body` with the value, under the lock. Threads waiting in `withLock(waitingUntil:)`
    /// look again afterwards.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock()
        defer {
            precondition(pthread_cond_broadcast(condition) == 0, "pthread_cond_broadcast failed")
            unlock()
        }
        return try body(&value)
    }

    /// Waits until `ready` holds for the value, then runs `body` under the same hold of the lock.
    public func withLock<Result>(waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws -> Result) rethrows -> Result {
        lock()
        defer {
            precondition(pthread_cond_broadcast(condition) == 0, "pthread_cond_broadcast failed")
            unlock()
        }
        while !ready(value) { precondition(pthread_cond_wait(condition, mutex) == 0, "pthread_cond_wait failed") }
        return try body(&value)
    }
}

extension LockedValue where Value == Int {
    /// The value before adding one: hands out 0, 1, 2 … to workers, or counts what is done.
    public func takeNext() -> Int {
        withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
