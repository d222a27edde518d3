import CLinux
import Glibc

// The few operating-system services Quire needs, straight from libc: the executable doesn't link
// Foundation (about 8 MB of code, 3–4 MB of it resident in every run).

/// A mutex shared by reference.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        precondition(pthread_mutex_destroy(mutex) == 0, "pthread_mutex_destroy failed")
        mutex.deallocate()
    }

    public func lock() { precondition(pthread_mutex_lock(mutex) == 0, "pthread_mutex_lock failed") }
    public func unlock() { precondition(pthread_mutex_unlock(mutex) == 0, "pthread_mutex_unlock failed") }

    public func withLock<Value>(_ body: () throws -> Value) rethrows -> Value {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Values each behind a mutex of its own, in raw memory where every value spans whole cache lines:
/// for tables that every layout worker reaches at every word. A contended shard holds up only its
/// own keys, and reaching one retains nothing (a reference count written by two cores is one more
/// cache line moving between them).
public struct Shards<Value>: ~Copyable, @unchecked Sendable {
    @usableFromInline struct Slot {
        @usableFromInline var mutex = pthread_mutex_t()
        @usableFromInline var value: Value
        init(value: Value) { self.value = value }
    }
    /// A power of two: shard `index & (count - 1)` answers for `index`.
    public let count: Int
    @usableFromInline let stride = (MemoryLayout<Slot>.stride + 63) & ~63
    @usableFromInline let storage: UnsafeMutableRawPointer

    public init(count: Int, _ make: () -> Value) {
        precondition(count > 0 && count & (count - 1) == 0, "a power of two")
        self.count = count
        storage = .allocate(byteCount: count * stride, alignment: 64)
        for index in 0..<count {
            let slot = (storage + index * stride).bindMemory(to: Slot.self, capacity: 1)
            slot.initialize(to: Slot(value: make()))
            pthread_mutex_init(&slot.pointee.mutex, nil)
        }
    }

    deinit {
        for index in 0..<count {
            let slot = slot(index)
            pthread_mutex_destroy(&slot.pointee.mutex)
            slot.deinitialize(count: 1)
        }
        storage.deallocate()
    }

    @inlinable func slot(_ index: Int) -> UnsafeMutablePointer<Slot> {
        (storage + (index & (count - 1)) * stride).assumingMemoryBound(to: Slot.self)
    }

    /// Runs `body` on the value of the shard for `index`, holding its lock. Inlinable, so callers
    /// get a copy specialized to their value type (no generic metadata lookup per call).
    @inlinable public func withShard<Result>(_ index: Int, _ body: (inout Value) throws -> Result) rethrows -> Result {
        let slot = slot(index)
        pthread_mutex_lock(&slot.pointee.mutex)
        defer { pthread_mutex_unlock(&slot.pointee.mutex) }
        return try body(&slot.pointee.value)
    }
}

/// Starts `work` on a thread of its own. Background jobs (preloading, hashing) must not take a
/// thread of Dispatch's global pool: layout workers run on that pool and wait there for image
/// measurements queued on it, and a pool slot held by a background job can leave a book laid out
/// by one worker.
public func startThread(_ work: @escaping @Sendable () -> Void) {
    final class Box {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }
    let box = Unmanaged.passRetained(Box(work)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        box.work()
        return nil
    }, box)
    if started == 0 {
        pthread_detach(thread)
    } else {
        // No thread to be had: do the work here.
        Unmanaged<Box>.fromOpaque(box).takeRetainedValue().work()
    }
}

public enum FileSystem {
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// A whole file, or nil when it can't be read.
    public static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes.append(contentsOf: chunk[0..<count])
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }

    /// Writes a whole file (replacing it); the reason when it fails.
    public static func write(_ bytes: [UInt8], to path: String) throws(SystemError) {
        try write(to: path) { write in write(bytes) }
    }

    /// Writes what `produce` hands to its writer, in order, as one file (replacing it).
    public static func write(to path: String, _ produce: ((([UInt8]) -> Void)) -> Void) throws(SystemError) {
        guard let file = fopen(path, "wb") else { throw SystemError() }
        var failed = false
        produce { bytes in
            guard !failed else { return }
            let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            if written != bytes.count { failed = true }
        }
        let flushed = fflush(file) == 0
        let error = SystemError()
        // Some file systems (NFS, quotas) report a failed write only when the file is closed.
        let closed = fclose(file) == 0
        guard !failed, flushed else { throw error }
        guard closed else { throw SystemError() }
    }

    /// Writes through a temporary name beside `path`, then renames it into place: a reader never
    /// sees a half-written file, and a failure leaves nothing behind.
    public static func writeAtomically(to path: String, _ produce: ((([UInt8]) -> Void)) -> Void) throws(QuireError) {
        let temporary = path + ".tmp-\(getpid())"
        do {
            try write(to: temporary, produce)
        } catch {
            unlink(temporary)
            throw QuireError.cannotCreateOutput(path: path, reason: error.description)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw QuireError.cannotCreateOutput(path: path, reason: reason)
        }
    }

    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(QuireError) {
        try writeAtomically(to: path) { write in write(bytes) }
    }

    /// Runs `body` holding an exclusive advisory lock (flock) on `lockPath`, created if needed:
    /// read-modify-write of a file shared by several processes.
    public static func withExclusiveLock<T>(_ lockPath: String, mode: mode_t = 0o644, _ body: () throws -> T) throws -> T {
        let lock = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, mode)
        guard lock >= 0 else { throw QuireError.cannotCreateOutput(path: lockPath, reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw QuireError.io("cannot lock \(lockPath): \(String(cString: strerror(errno)))") }
        }
        return try body()
    }

    /// Creates a directory and any missing parents (like `mkdir -p`).
    public static func createDirectory(_ path: String) throws(SystemError) {
        if isDirectory(path) { return }
        let parent = parentDirectory(path)
        if !parent.isEmpty, parent != path { try createDirectory(parent) }
        if mkdir(path, 0o777) != 0 && !(errno == EEXIST && isDirectory(path)) { throw SystemError() }
    }

    /// The names in a directory that start with `prefix` (without `.` and `..`), sorted; nil when it can't be read.
    public static func contents(ofDirectory path: String, prefix: String = "") -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        let prefixBytes = Array(prefix.utf8CString.dropLast())
        while let entry = readdir(directory) {
            // Read in place up to its NUL: glibc sizes each record to its name, so copying the
            // whole 256-byte d_name field reads past the record (AddressSanitizer caught it).
            let field = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
            // Names without the prefix are passed over before they become strings (an output
            // beside thousands of files looks for its own leftovers only).
            guard prefixBytes.isEmpty || strncmp(field, prefixBytes, prefixBytes.count) == 0 else { continue }
            let name = String(cString: field)
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// `directory/name`, with one slash between them.
    public static func joined(_ directory: String, _ name: String) -> String {
        guard !directory.isEmpty else { return name }
        let trimmed = name.drop { $0 == "/" }
        return directory.hasSuffix("/") ? directory + trimmed : directory + "/" + trimmed
    }

    /// The last component of a path ("b" for "/a/b/"; "/" for "/").
    public static func lastComponent(_ path: String) -> String {
        let parts = path.split(separator: "/")
        return parts.last.map(String.init) ?? (path.hasPrefix("/") ? "/" : "")
    }

    /// Everything before the last `/` ("" for a bare name, "/" for a file at the root).
    public static func parentDirectory(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    public static var currentDirectory: String {
        guard let path = getcwd(nil, 0) else { return "." }
        defer { free(path) }
        return String(cString: path)
    }

    /// An absolute path with symbolic links resolved; the path itself when that fails.
    public static func resolvingSymlinks(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// `errno` at the moment of a failed call, as text.
public struct SystemError: Error, CustomStringConvertible {
    public let code: Int32
    public init(code: Int32 = errno) { self.code = code }
    public var description: String { String(cString: strerror(code)) }
}

public enum SystemEnvironment {
    public static func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Every environment variable, by name.
    public static var all: [String: String] {
        var variables: [String: String] = [:]
        guard var entry = quire_environment() else { return variables }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                let name = String(text[..<equals])
                if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
    }

    /// Runs a program found on PATH and returns its exit status and standard output (its standard
    /// error is dropped); nil when it could not be started or was killed.
    public static func run(_ arguments: [String]) -> (status: Int32, output: String)? {
        guard !arguments.isEmpty else { return nil }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }
        var output = [CChar](repeating: 0, count: 1 << 16)
        var length = 0
        let status = argv.withUnsafeBufferPointer { quire_run_capturing($0.baseAddress, &output, output.count, &length) }
        guard status >= 0 else { return nil }
        return (status, String(decoding: output.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Gives the memory freed so far back to the system. glibc keeps what threads free in their
    /// arenas; a long-running process whose work moves between threads (a batch) otherwise grows.
    public static func releaseFreedMemory() { _ = malloc_trim(0) }

    /// This host's name with `-`, `.` and `/` made `_`, for file names that say which host wrote them.
    public static func hostNameForFiles() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).map { $0 == "-" || $0 == "/" || $0 == "." ? "_" : $0 }
        return name.isEmpty ? "host" : String(name)
    }

    /// Seconds on the monotonic clock, for durations (never for outputs).
    public static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (a container
    /// limited to two CPUs on a larger host gets two workers); at least 1.
    public static var processorCount: Int {
        var count = affinityCount() ?? sysconf(Int32(_SC_NPROCESSORS_ONLN))
        if let quota = cgroupQuota() { count = min(count, quota) }
        return max(1, count)
    }

    /// The CPUs in `Cpus_allowed_list` of /proc/self/status ("0-3,8"): the affinity mask
    /// (`sched_getaffinity` needs _GNU_SOURCE, which Swift's Glibc module doesn't define).
    static func affinityCount() -> Int? {
        guard let status = FileSystem.read("/proc/self/status") else { return nil }
        let text = String(decoding: status, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        var count = 0
        for range in String(line.dropFirst("Cpus_allowed_list:".count)).trimmingWhitespace().split(separator: ",") {
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            if bounds.count == 1 { count += 1 } else if bounds.count == 2, bounds[1] >= bounds[0] { count += bounds[1] - bounds[0] + 1 }
        }
        return count > 0 ? count : nil
    }

    /// cgroup v2 `cpu.max` ("quota period"), or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`, rounded up.
    static func cgroupQuota() -> Int? {
        func text(_ path: String) -> String? {
            FileSystem.read(path).map { String(decoding: $0, as: UTF8.self).trimmingWhitespace() }
        }
        var quota: Double?
        var period: Double?
        if let max = text("/sys/fs/cgroup/cpu.max") {
            let parts = max.split(separator: " ")
            if parts.count == 2 {
                quota = Double(parts[0])
                period = Double(parts[1])
            }
        } else if let value = text("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), let base = text("/sys/fs/cgroup/cpu/cpu.cfs_period_us") {
            quota = Double(value)
            period = Double(base)
        }
        guard let quota, let period, quota > 0, period > 0 else { return nil }
        return Int((quota / period).rounded(.up))
    }
}
