import CDeflate
import CZip
import Glibc
import QuireCore

/// One entry of the central directory.
public struct ZipEntry: Sendable, Hashable {
    public var index: Int
    public var name: String
    public var compressedSize: Int64
    public var uncompressedSize: Int64
    /// 0 stored, 8 deflated, others as in the ZIP specification.
    public var compressionMethod: Int32
    public var isEncrypted: Bool
    /// The CRC-32 of the uncompressed data, from the central directory.
    public var crc32: UInt32 = 0
    public var isDirectory: Bool { name.hasSuffix("/") }
}

/// A read-only zip archive through libzip. Entries are read on demand into memory, never
/// extracted to disk. libzip's archive handle is not thread-safe, so reads are serialised.
public final class ZipArchive: @unchecked Sendable {
    public let path: String
    public let entries: [ZipEntry]
    private let entryIndexByName: [String: Int]
    private let handle: OpaquePointer
    private let lock = Lock()
    public let limits: Limits

    public init(path: String, limits: Limits = .standard) throws {
        self.path = path
        self.limits = limits
        var errorCode: Int32 = 0
        guard let handle = zip_open(path, ZIP_RDONLY, &errorCode) else {
            throw ZipArchive.openError(code: errorCode, path: path)
        }
        self.handle = handle
        do {
            entries = try ZipArchive.readDirectory(handle, limits: limits)
            var status = stat()
            if stat(path, &status) == 0 { try ZipArchive.checkTotalRatio(entries, archiveSize: Int64(status.st_size), limits: limits) }
        } catch {
            zip_discard(handle)
            throw error
        }
        var byName: [String: Int] = [:]
        byName.reserveCapacity(entries.count)
        for entry in entries where byName[entry.name] == nil { byName[entry.name] = entry.index }
        entryIndexByName = byName
    }

    deinit { zip_discard(handle) }

    public func entry(named name: String) -> ZipEntry? {
        entryIndexByName[name].map { entries[$0] }
    }

    public func contains(_ name: String) -> Bool { entryIndexByName[name] != nil }

    /// Reads a whole entry. The uncompressed size is checked against the limits before reading,
    /// and the read stops at the declared size so a lying header cannot inflate past it.
    public func read(_ name: String) throws -> [UInt8] {
        guard let entry = entry(named: name) else {
            throw QuireError.missingResource(href: name, context: "not in the archive")
        }
        return try read(entry)
    }

    public func read(_ entry: ZipEntry, maxBytes: Int? = nil) throws -> [UInt8] {
        guard !entry.isEncrypted else {
            throw QuireError.drmProtected("archive entry \(entry.name) is encrypted")
        }
        let size = min(Int(entry.uncompressedSize), maxBytes ?? Int.max)
        if size == entry.uncompressedSize, let bytes = try inflated(entry) { return bytes }
        lock.lock()
        defer { lock.unlock() }
        guard let file = zip_fopen_index(handle, zip_uint64_t(entry.index), 0) else {
            throw QuireError.corruptArchive("cannot open entry \(entry.name): \(archiveErrorMessage())")
        }
        defer { zip_fclose(file) }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = bytes.withUnsafeMutableBytes { buffer in
                zip_fread(file, buffer.baseAddress! + filled, zip_uint64_t(size - filled))
            }
            if count < 0 {
                throw QuireError.corruptArchive("cannot read entry \(entry.name): \(fileErrorMessage(file))")
            }
            if count == 0 { break }
            filled += Int(count)
        }
        guard filled == size else {
            throw QuireError.corruptArchive("entry \(entry.name) is shorter than its declared size")
        }
        return bytes
    }

    /// A whole deflated entry: its compressed bytes read under the lock, inflated outside it by
    /// libdeflate, and checked against its size and CRC (libzip's own path, reading to the declared
    /// size, returned damaged data as it came). Nil sends the read down libzip's path: stored
    /// entries, or compressed bytes that cannot be read (libzip reports why).
    private func inflated(_ entry: ZipEntry) throws -> [UInt8]? {
        let size = Int(entry.uncompressedSize)
        // Deflate adds at most 5 bytes per 16 KB block to incompressible data: a larger compressed
        // size is a damaged or lying header, not read here.
        guard entry.compressionMethod == ZIP_CM_DEFLATE, entry.compressedSize >= 0,
            entry.compressedSize <= entry.uncompressedSize + entry.uncompressedSize / 1000 + 1024
        else { return nil }
        var compressed = [UInt8](repeating: 0, count: Int(entry.compressedSize))
        let read: Bool = lock.withLock {
            guard let file = zip_fopen_index(handle, zip_uint64_t(entry.index), zip_flags_t(ZIP_FL_COMPRESSED)) else { return false }
            defer { zip_fclose(file) }
            let count = compressed.withUnsafeMutableBytes { zip_fread(file, $0.baseAddress, zip_uint64_t($0.count)) }
            return count == entry.compressedSize
        }
        guard read, let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var bytes = [UInt8](repeating: 0, count: size)
        var produced = 0
        let result = compressed.withUnsafeBytes { input in
            bytes.withUnsafeMutableBytes { output in
                libdeflate_deflate_decompress(decompressor, input.baseAddress, input.count, output.baseAddress, output.count, &produced)
            }
        }
        guard result == LIBDEFLATE_SUCCESS, produced == size else {
            throw QuireError.corruptArchive("entry \(entry.name) is damaged (its data does not inflate to its declared \(size) bytes)")
        }
        guard bytes.withUnsafeBytes({ UInt32(libdeflate_crc32(0, $0.baseAddress, $0.count)) }) == entry.crc32 else {
            throw QuireError.corruptArchive("entry \(entry.name) fails its CRC check (damaged data)")
        }
        return bytes
    }

    private func archiveErrorMessage() -> String {
        String(cString: zip_strerror(handle))
    }

    private func fileErrorMessage(_ file: OpaquePointer) -> String {
        String(cString: zip_file_strerror(file))
    }

    private static func readDirectory(_ handle: OpaquePointer, limits: Limits) throws -> [ZipEntry] {
        let count = zip_get_num_entries(handle, 0)
        guard count >= 0 else { throw QuireError.corruptArchive("unreadable central directory") }
        guard count <= limits.maxEntryCount else {
            throw QuireError.limitExceeded(
                limit: "max-entries", detail: "the archive has \(count) entries (limit \(limits.maxEntryCount))")
        }
        var entries: [ZipEntry] = []
        entries.reserveCapacity(Int(count))
        var total: Int64 = 0
        var info = zip_stat_t()
        for index in 0..<count {
            zip_stat_init(&info)
            guard zip_stat_index(handle, zip_uint64_t(index), zip_flags_t(ZIP_FL_ENC_GUESS), &info) == 0,
                let rawName = info.name
            else {
                throw QuireError.corruptArchive("unreadable directory entry \(index)")
            }
            let name = String(cString: rawName)
            try checkEntryName(name)
            try checkCompressionMethod(name, method: Int32(info.comp_method))
            let entry = ZipEntry(
                index: Int(index), name: name,
                compressedSize: Int64(info.comp_size), uncompressedSize: Int64(info.size),
                compressionMethod: Int32(info.comp_method),
                isEncrypted: info.encryption_method != 0, crc32: info.crc)
            try checkSize(entry, limits: limits)
            total += entry.uncompressedSize
            guard total <= limits.maxTotalUncompressedSize else {
                throw QuireError.limitExceeded(
                    limit: "max-total-size",
                    detail: "entries expand to more than \(limits.maxTotalUncompressedSize) bytes")
            }
            entries.append(entry)
        }
        return entries
    }

    /// Entry names are archive paths, never disk paths; a name that could escape a root is refused.
    static func checkEntryName(_ name: String) throws {
        if name.hasPrefix("/") || name.hasPrefix("\\") || name.contains("\0") {
            throw QuireError.unsafeEntryName(name)
        }
        if name.count >= 2, name.dropFirst().first == ":" { throw QuireError.unsafeEntryName(name) }
        let segments = name.split(whereSeparator: { $0 == "/" || $0 == "\\" })
        if segments.contains(where: { $0 == ".." }) { throw QuireError.unsafeEntryName(name) }
    }

    /// OCF allows Store and Deflate only. libzip would inflate bzip2, LZMA or zstd entries as well,
    /// so a container that other reading systems must refuse would open here without a word.
    static func checkCompressionMethod(_ name: String, method: Int32) throws {
        guard method != ZIP_CM_STORE, method != ZIP_CM_DEFLATE else { return }
        let names: [Int32: String] = [9: "Deflate64", 12: "bzip2", 14: "LZMA", 93: "Zstandard", 95: "xz", 98: "PPMd"]
        let described = names[method].map { "\($0) (method \(method))" } ?? "method \(method)"
        throw QuireError.corruptArchive(
            "entry \(name) is compressed with \(described); an EPUB's zip may use only Store and Deflate")
    }

    static func checkSize(_ entry: ZipEntry, limits: Limits) throws {
        guard entry.uncompressedSize <= limits.maxEntryUncompressedSize else {
            throw QuireError.limitExceeded(
                limit: "max-entry-size",
                detail: "\(entry.name) expands to \(entry.uncompressedSize) bytes (limit \(limits.maxEntryUncompressedSize))")
        }
        if entry.uncompressedSize >= Limits.compressionRatioEntrySize {
            let ratio = entry.uncompressedSize / max(entry.compressedSize, 1)
            guard ratio <= limits.maxCompressionRatio else {
                throw QuireError.limitExceeded(
                    limit: "max-compression-ratio",
                    detail: "\(entry.name) compresses \(ratio):1 (limit \(limits.maxCompressionRatio):1), a zip bomb")
            }
        }
    }

    /// A small archive whose entries add up to a great deal (many entries, each under the
    /// per-entry threshold) is a zip bomb as much as one large entry is.
    static func checkTotalRatio(_ entries: [ZipEntry], archiveSize: Int64, limits: Limits) throws {
        let total = entries.reduce(Int64(0)) { $0 + $1.uncompressedSize }
        guard total >= Limits.compressionRatioTotalSize else { return }
        let ratio = total / max(archiveSize, 1)
        guard ratio <= limits.maxCompressionRatio else {
            throw QuireError.limitExceeded(
                limit: "max-compression-ratio",
                detail: "the archive's \(archiveSize) bytes expand to \(total) (\(ratio):1, limit \(limits.maxCompressionRatio):1), a zip bomb")
        }
    }

    /// The part number a zip's end record gives, when it says the archive is split (nonzero).
    static func multiPartDisk(_ path: String) -> Int? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        guard fseek(file, 0, SEEK_END) == 0 else { return nil }
        let size = ftell(file)
        let tail = min(size, 22 + 65535)
        guard tail >= 22, fseek(file, size - tail, SEEK_SET) == 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: tail)
        guard bytes.withUnsafeMutableBytes({ fread($0.baseAddress, 1, tail, file) }) == tail else { return nil }
        // The end record: its signature, and a comment length that reaches the end of the file.
        for at in stride(from: tail - 22, through: 0, by: -1)
        where bytes[at] == 0x50 && bytes[at + 1] == 0x4B && bytes[at + 2] == 5 && bytes[at + 3] == 6
            && at + 22 + (Int(bytes[at + 20]) | Int(bytes[at + 21]) << 8) == tail
        {
            let disk = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8
            return disk == 0 ? nil : disk
        }
        return nil
    }

    static func multiPartError(_ path: String, disk: Int) -> QuireError {
        .unsupported("\(path) is part \(disk + 1) of a multi-part (split) zip archive, whose other parts hold the rest of the book; an EPUB is one archive")
    }

    private static func openError(code: Int32, path: String) -> QuireError {
        switch code {
        case ZIP_ER_NOENT: return .notFound(path: path)
        case ZIP_ER_NOZIP, ZIP_ER_MULTIDISK:
            if let disk = multiPartDisk(path) { return multiPartError(path, disk: disk) }
            return .notAnEPUB("\(path) is not a zip archive")
        case ZIP_ER_INCONS: return .corruptArchive("\(path): inconsistent zip structure (truncated or damaged)")
        case ZIP_ER_OPEN, ZIP_ER_READ, ZIP_ER_SEEK:
            return .cannotOpen(path: path, reason: zipErrorString(code))
        case ZIP_ER_MEMORY: return .io("out of memory opening \(path)")
        default: return .corruptArchive("\(path): \(zipErrorString(code))")
        }
    }

    private static func zipErrorString(_ code: Int32) -> String {
        var error = zip_error_t()
        zip_error_init_with_code(&error, code)
        defer { zip_error_fini(&error) }
        return String(cString: zip_error_strerror(&error))
    }
}
