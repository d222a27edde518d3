extension Array where Element: BitwiseCopyable {
    /// An array of the elements `write` puts at the start of a buffer of `capacity` and counts,
    /// in place of `init(unsafeUninitializedCapacity:initializingWith:)`.
    ///
    /// That initializer (and `init(repeating:count:)`) allocates through a standard-library
    /// entry point that is never specialised: it looks up the storage class's generic metadata
    /// at every call, about 350 instructions, which came to 1% of a book's layout over its
    /// 40,000 small arrays. Reserving capacity is specialised, so the elements are written to a
    /// temporary buffer (on the stack when small) and copied in.
    @inlinable @inline(__always)
    public init(capacity: Int, writing write: (UnsafeMutableBufferPointer<Element>) throws -> Int) rethrows {
        // A long array is allocated as it is: the lookup is nothing beside its elements.
        guard capacity * MemoryLayout<Element>.stride <= 1024 else {
            self = try Array(unsafeUninitializedCapacity: capacity) { buffer, count in count = try write(buffer) }
            return
        }
        self = []
        // No capacity, no storage: `init(unsafeUninitializedCapacity:)` with none wrote its count
        // into the shared empty array (a data race between threads, ThreadSanitizer found).
        guard capacity > 0 else { return }
        reserveCapacity(capacity)
        try withUnsafeTemporaryAllocation(of: Element.self, capacity: capacity) { buffer in
            let count = try write(buffer)
            append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// `count` copies of `value`, without `init(repeating:count:)`'s unspecialised allocation
    /// (see `init(capacity:writing:)`).
    @inlinable @inline(__always)
    public init(filling value: Element, count: Int) {
        // (Appending `repeatElement` goes one element at a time; this is a fill and a copy.)
        self.init(capacity: count) { buffer in
            buffer.initialize(repeating: value)
            return count
        }
    }
}
