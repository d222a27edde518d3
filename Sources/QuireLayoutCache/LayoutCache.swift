import CDeflate
import Glibc
import QuireCore
import QuireLayout
import QuirePositions
import QuireText

// Settled chapters kept on disk between runs, so a second profile at the same page geometry (a
// theme, grey or dithering apart) and a run after a crash skip layout for the chapters done.
//
// An entry is one chapter at one layout: its key hashes the book's content (which covers the
// chapter's stylesheets, fonts and images too), its place in the spine, every layout-relevant
// setting and the engine's version, so a changed book, setting or engine never meets an old
// entry. Entries are written under a temporary name and renamed, and read back through a length
// and CRC check, so a damaged or half-written file is a miss, never a wrong page. The directory
// is bounded: reading an entry touches its time, and when the total passes the bound the least
// recently used entries go. Several processes may share the directory; an entry one of them
// evicts is just a miss for the others.

/// A chapter as the cache holds it: its layout (with display lists or without) and its positions.
public struct CachedChapter: Sendable {
    public var layout: ChapterLayout
    public var positions: ChapterPositions?
    /// Whether `layout` carries display lists (pages that can be painted).
    public var hasItems: Bool

    public init(layout: ChapterLayout, positions: ChapterPositions?, hasItems: Bool) {
        self.layout = layout
        self.positions = positions
        self.hasItems = hasItems
    }
}

public final class LayoutCache: Sendable {
    public let directory: String
    /// The bound on the entries' total size, in bytes.
    public let maxBytes: Int64

    /// The entries' total size as this process knows it (nil until first measured).
    private let total = LockedValue<Int64?>(nil)

    static let magic: [UInt8] = Array("QLC1".utf8)

    public init(directory: String, maxBytes: Int64) throws(QuireError) {
        self.directory = directory
        self.maxBytes = maxBytes
        do { try FileSystem.createDirectory(directory) } catch { throw QuireError.cannotCreateOutput(path: directory, reason: error.description) }
        guard access(directory, W_OK) == 0 else { throw QuireError.cannotCreateOutput(path: directory, reason: String(cString: strerror(errno))) }
    }

    /// The key of one chapter: 32 hex digits over what the layout depends on.
    public static func key(bookSHA256: String, spineIndex: Int, layoutHash: String, extra: String) -> String {
        let material = "quire-layout-cache-3\n\(PositionMap.engineVersion)\n\(bookSHA256)\n\(spineIndex)\n\(layoutHash)\n\(extra)"
        return String(hexString(SHA256.hash(Array(material.utf8))).prefix(32))
    }

    func path(_ key: String) -> String { directory + "/" + key.prefix(2) + "/" + key + ".qlc" }

    /// The chapter stored under `key`, if there is one that can be used: with display lists when
    /// `needItems`, and with every face found again through `face`.
    public func chapter(_ key: String, needItems: Bool, face: (FontFace.Source, Bool, Bool) -> FontFace?) -> CachedChapter? {
        let path = path(key)
        guard let bytes = FileSystem.read(path) else {
            return nil
        }
        guard let payload = Self.unpack(bytes) else {
            // Damaged (a full disk, a crash on a file system without atomic rename): dropped.
            unlink(path)
            return nil
        }
        var reader = ByteReader(payload)
        do {
            let hasItems = try reader.bool()
            guard hasItems || !needItems else {
                return nil
            }
            let layout = try ChapterLayout(decoding: &reader, face: face)
            let positions = try reader.bool() ? try ChapterPositions(decoding: &reader) : nil
            guard reader.isAtEnd else { throw ByteReader.Damaged() }
            // Recently used: the last to be evicted.
            utimensat(AT_FDCWD, path, nil, 0)
            return CachedChapter(layout: layout, positions: positions, hasItems: hasItems)
        } catch {
            unlink(path)
            return nil
        }
    }

    /// Keeps a chapter. A cache that cannot be written (disk full) is only slower: nothing fails.
    public func store(_ key: String, _ chapter: CachedChapter) {
        // An entry with display lists serves both kinds of request: never replaced by one without.
        if !chapter.hasItems, FileSystem.exists(path(key)) { return }
        var writer = ByteWriter()
        writer.bool(chapter.hasItems)
        chapter.layout.encode(into: &writer, withItems: chapter.hasItems)
        writer.bool(chapter.positions != nil)
        chapter.positions?.encode(into: &writer)
        guard let packed = Self.pack(writer.bytes) else { return }
        let path = path(key)
        var previous = stat()
        let replaced = stat(path, &previous) == 0 ? Int64(previous.st_size) : 0
        // Written whole under a name of this host and process, then renamed: a reader sees the
        // entry complete or not at all, and a killed writer's file is known as its own.
        let temporary = path + ".tmp-" + Self.host + "-\(getpid())"
        do {
            try FileSystem.createDirectory(FileSystem.parentDirectory(path))
            try FileSystem.write(packed, to: temporary)
        } catch {
            unlink(temporary)
            return
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return
        }
        let over = total.withLock { total -> Bool in
            guard let known = total else { return true }
            total = known + Int64(packed.count) - replaced
            return total! > maxBytes
        }
        if over { trim() }
    }

    /// Removes the least recently used entries until the total is within 90% of the bound.
    public func trim() {
        var entries: [(path: String, size: Int64, used: Int)] = []
        for shard in FileSystem.contents(ofDirectory: directory) ?? [] where shard.count == 2 {
            let folder = directory + "/" + shard
            for name in FileSystem.contents(ofDirectory: folder) ?? [] {
                var status = stat()
                guard stat(folder + "/" + name, &status) == 0 else { continue }
                // A writer killed mid-write leaves its temporary file: gone when its process is (on
                // this host), or an hour on (another host's).
                let parts = name.split(separator: ".")
                if parts.count == 3, parts[1] == "qlc", parts[2].hasPrefix("tmp-") {
                    if Self.isAbandoned(String(parts[2].dropFirst(4)), age: time(nil) - status.st_mtim.tv_sec) { unlink(folder + "/" + name) }
                    continue
                }
                guard name.hasSuffix(".qlc") else { continue }
                entries.append((folder + "/" + name, Int64(status.st_size), status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec))
            }
        }
        var size = entries.reduce(0) { $0 + $1.size }
        if size > maxBytes {
            let goal = maxBytes / 10 * 9
            for entry in entries.sorted(by: { ($0.used, $0.path) < ($1.used, $1.path) }) where size > goal {
                if unlink(entry.path) == 0 || errno == ENOENT { size -= entry.size }
            }
        }
        total.withLock { $0 = size }
    }

    static let host = SystemEnvironment.hostNameForFiles()

    /// `owner` is `<host>-<pid>` of a temporary file's writer.
    static func isAbandoned(_ owner: String, age: Int) -> Bool {
        guard let dash = owner.lastIndex(of: "-"), let pid = Int32(owner[owner.index(after: dash)...]) else { return age > 3600 }
        if owner[..<dash] == host { return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH }
        return age > 3600
    }

    // MARK: File form: magic, length, CRC-32 of the payload, then the payload deflated.

    static func pack(_ payload: [UInt8]) -> [UInt8]? {
        guard let compressor = libdeflate_alloc_compressor(3) else { return nil }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_deflate_compress_bound(compressor, payload.count)
        var output = [UInt8](repeating: 0, count: bound)
        let size = payload.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { libdeflate_deflate_compress(compressor, input.baseAddress, input.count, $0.baseAddress, $0.count) }
        }
        guard size > 0 else { return nil }
        var header = ByteWriter()
        header.unsigned(UInt64(payload.count))
        header.unsigned(UInt64(payload.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }))
        return magic + header.bytes + output[0..<size]
    }

    static func unpack(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count > magic.count, Array(bytes[0..<magic.count]) == magic else { return nil }
        var reader = ByteReader(Array(bytes[magic.count...]))
        guard let length = try? reader.unsigned(), length < 1 << 31, let crc = try? reader.unsigned() else { return nil }
        let headerSize = bytes.count - magic.count - reader.remaining
        let body = bytes[(magic.count + headerSize)...]
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var output = [UInt8](repeating: 0, count: Int(length))
        var produced = 0
        let result = body.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { libdeflate_deflate_decompress(decompressor, input.baseAddress, input.count, $0.baseAddress, $0.count, &produced) }
        }
        guard result == LIBDEFLATE_SUCCESS, produced == output.count,
            UInt64(output.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }) == crc
        else { return nil }
        return output
    }
}
