import CLinux
import Glibc

/// A directory that appears whole or not at all.
///
/// Its new contents are built under a hidden name beside it (`.NAME.partial-HOST-PID`) and swapped
/// in at the end with one `renameat2(RENAME_EXCHANGE)`: a process killed at any moment leaves the
/// directory as it was before the run or as the run finished it, never a mixture. The previous
/// contents are removed after the swap; a partial left by a killed run is cleared by the next run
/// on the same host that writes the same directory.
public struct StagedDirectory: Sendable {
    /// The directory the caller asked for.
    public let target: String
    /// Where the new contents are written until `commit`.
    public let staging: String

    /// Creates the staging directory beside `target` (and `target`'s parents), clearing partials
    /// that dead runs of this host left for the same target.
    public init(target: String) throws(QuireError) {
        var trimmed = Substring(target)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        // A symbolic link to a directory stands for that directory: the swap happens there.
        self.target = FileSystem.isDirectory(String(trimmed)) ? FileSystem.resolvingSymlinks(String(trimmed)) : String(trimmed)
        var status = stat()
        if lstat(self.target, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
            throw QuireError.cannotCreateOutput(path: self.target, reason: "it exists and is not a directory")
        }
        let parent = FileSystem.parentDirectory(self.target)
        let name = String(self.target.dropFirst(parent.isEmpty ? 0 : parent.count + (parent == "/" ? 0 : 1)))
        guard !name.isEmpty, name != ".", name != ".." else {
            throw QuireError.cannotCreateOutput(path: self.target, reason: "name a directory of its own for the output")
        }
        let directory = parent.isEmpty ? "." : parent
        do { try FileSystem.createDirectory(directory) } catch {
            throw QuireError.cannotCreateOutput(path: directory, reason: error.description)
        }
        let prefix = "." + name + ".partial-"
        Self.clearLeftovers(in: directory, prefix: prefix)
        staging = directory + "/" + prefix + SystemEnvironment.hostNameForFiles() + "-\(getpid())"
        FileSystem.removeTree(staging)
        guard mkdir(staging, 0o777) == 0 else {
            throw QuireError.cannotCreateOutput(path: staging, reason: String(cString: strerror(errno)))
        }
        RunGuard.register(staging)
    }

    /// The entries of the target (paths relative to it, directories before what they hold) that
    /// `isOwn` does not claim: files another program or a person put there.
    public func foreignEntries(isOwn: (_ path: String, _ isDirectory: Bool) -> Bool) -> [String] {
        var foreign: [String] = []
        func walk(_ relative: String) {
            for name in FileSystem.contents(ofDirectory: target + "/" + relative) ?? [] {
                let path = relative.isEmpty ? name : relative + "/" + name
                var status = stat()
                guard lstat(target + "/" + path, &status) == 0 else { continue }
                let isDirectory = status.st_mode & S_IFMT == S_IFDIR
                if isOwn(path, isDirectory) {
                    if isDirectory { walk(path) }
                } else {
                    foreign.append(path)
                }
            }
        }
        if FileSystem.isDirectory(target) { walk("") }
        return foreign
    }

    /// Swaps the finished contents in. `keeping` entries of the old target (from `foreignEntries`)
    /// are hard-linked into the new contents first, so they are in place at every moment.
    public func commit(keeping foreign: [String] = []) throws(QuireError) {
        for path in foreign { try Self.link(target + "/" + path, staging + "/" + path) }
        try RunGuard.commit(staging, swap)
    }

    private func swap() throws(QuireError) {
        if rename(staging, target) == 0 { return }
        guard errno == EEXIST || errno == ENOTEMPTY else { throw failure(target) }
        if quire_rename_exchange(staging, target) == 0 {
            // The old contents now sit under the staging name.
            FileSystem.removeTree(staging)
            return
        }
        guard errno == EINVAL || errno == ENOSYS else { throw failure(target) }
        // A file system without the exchange (some network and overlay ones): the old directory is
        // moved aside first, so the target is briefly absent but never mixed.
        let aside = staging + "-old"
        guard rename(target, aside) == 0 else { throw failure(target) }
        guard rename(staging, target) == 0 else {
            let error = failure(target)
            rename(aside, target)
            throw error
        }
        FileSystem.removeTree(aside)
    }

    /// Removes the staging directory (the run failed; the target is untouched).
    public func discard() {
        FileSystem.removeTree(staging)
        RunGuard.unregister(staging)
    }

    private func failure(_ path: String) -> QuireError {
        let reason = String(cString: strerror(errno))
        return QuireError.cannotCreateOutput(path: path, reason: reason)
    }

    /// A foreign entry into the new contents: files hard-linked, directories re-made, symbolic links copied.
    private static func link(_ from: String, _ to: String) throws(QuireError) {
        var status = stat()
        guard lstat(from, &status) == 0 else { return }
        let parent = FileSystem.parentDirectory(to)
        do { try FileSystem.createDirectory(parent) } catch { throw QuireError.cannotCreateOutput(path: parent, reason: error.description) }
        let failed: Bool
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            failed = mkdir(to, status.st_mode & 0o7777) != 0 && errno != EEXIST
            if !failed {
                for name in FileSystem.contents(ofDirectory: from) ?? [] { try link(from + "/" + name, to + "/" + name) }
            }
        case S_IFLNK:
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(from, &buffer, buffer.count - 1)
            failed = count < 0 || symlink(String(cString: buffer), to) != 0
        default:
            failed = Glibc.link(from, to) != 0
        }
        if failed {
            throw QuireError.cannotCreateOutput(path: to, reason: "cannot keep \(from): \(String(cString: strerror(errno)))")
        }
    }

    /// Partials of this host's runs that are gone (killed, crashed); another host's run may still be going.
    private static func clearLeftovers(in directory: String, prefix: String) {
        let host = SystemEnvironment.hostNameForFiles()
        for name in FileSystem.contents(ofDirectory: directory, prefix: prefix + host + "-") ?? [] {
            var owner = name.dropFirst(prefix.count + host.count + 1)
            if owner.hasSuffix("-old") { owner = owner.dropLast(4) }
            guard let pid = Int32(owner), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            FileSystem.removeTree(directory + "/" + name)
        }
    }
}

extension FileSystem {
    /// Removes a file or a directory tree, never following symbolic links.
    public static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR {
            for name in contents(ofDirectory: path) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
