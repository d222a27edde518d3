import Dispatch
import Quire
import QuireCore

/// Page output made ahead of the reader: while one page is read, the next is rendered and
/// encoded on a queue of its own, so a turn only writes what is ready. Outputs
/// are keyed by everything that shapes them; a re-pagination starts a new generation.
final class FrameCache: @unchecked Sendable {
    struct Key: Hashable, Sendable {
        var page: Int
        var generation: Int
        var columns: Int
        var rows: Int
        var cellWidth: Int
        var cellHeight: Int
        var dark: Bool
        var highlight: String?
    }

    private struct State {
        var done: [Key: String] = [:]
        var pending: Set<Key> = []
    }

    private let state = LockedValue(State())
    private let queue = DispatchQueue(label: "quire.viewer.frames")
    /// Outputs kept: the page shown and its neighbours, a few sixel pages at most.
    private let capacity = 5

    /// The output for `key` if it is made or being made (then waits for it); nil otherwise.
    func output(_ key: Key) -> String? {
        if state.withLock({ $0.pending.contains(key) }) { queue.sync {} }
        return state.withLock { $0.done[key] }
    }

    /// Keeps an output made on the reader's thread.
    func store(_ output: String, for key: Key) {
        state.withLock { state in
            state.done[key] = output
            Self.trim(&state, around: key.page, capacity: capacity)
        }
    }

    /// Makes `key`'s output in the background unless it is made or on its way. `make` returns nil
    /// for a page that fails: a failure is shown (and retried) on the reader's thread.
    func prefetch(_ key: Key, _ make: @escaping @Sendable () -> String?) {
        let start = state.withLock { state -> Bool in
            guard state.done[key] == nil, !state.pending.contains(key) else { return false }
            state.pending.insert(key)
            return true
        }
        guard start else { return }
        queue.async { [state, capacity] in
            let output = make()
            state.withLock { state in
                state.pending.remove(key)
                if let output {
                    state.done[key] = output
                    Self.trim(&state, around: key.page, capacity: capacity)
                }
            }
        }
    }

    /// Forgets every output (a retry, a theme change).
    func removeAll() {
        queue.sync {}
        state.withLock { $0.done = [:] }
    }

    private static func trim(_ state: inout State, around page: Int, capacity: Int) {
        while state.done.count > capacity, let farthest = state.done.keys.max(by: { abs($0.page - page) < abs($1.page - page) }) {
            state.done[farthest] = nil
        }
    }
}
