import Glibc
import Quire
import QuireCore

/// One way to make a book's output: a device profile, painted (with a theme, colour or grey) or
/// map-only. Its key hashes everything that changes the output, with the engine's version,
/// so a changed setting or engine makes the work again and nothing depends on names.
public struct BatchProfile: Sendable, Equatable {
    public var name: String
    public var pagination: PaginationSettings
    /// nil: map only.
    public var paint: PaintSettings?

    public init(name: String, pagination: PaginationSettings, paint: PaintSettings?) {
        self.name = name
        self.pagination = pagination
        self.paint = paint
    }

    public static func == (a: BatchProfile, b: BatchProfile) -> Bool { a.name == b.name && a.key == b.key }

    /// What the key covers, as JSON (also written to each item's done.json).
    public var settingsJSON: JSON {
        let layout = PositionMap.profile(pagination.layout, name: nil)
        var members: [(String, JSON)] = [("layout", .string(layout.profileHash)), ("width", .int(Int64(layout.width))), ("height", .int(Int64(layout.height)))]
        if let paint {
            members += [("theme", .string(paint.theme.rawValue)), ("gray", .bool(paint.gray)), ("dither16", .bool(paint.dither16))]
        } else {
            members.append(("mapOnly", .bool(true)))
        }
        members += [("engine", .string(PositionMap.engineVersion)), ("quire", .string(QuireVersion.string))]
        return .object(members)
    }

    /// 16 hex digits of SHA-256 over `settingsJSON`.
    public var key: String { String(hexString(SHA256.hash(settingsJSON.serializedBytes(pretty: false))).prefix(16)) }
}

/// One book at one profile, and where its output goes: `ROOT/<sha256 prefix>/<profile key>/`.
public struct BatchItem: Sendable {
    public var path: String
    public var sha256: String
    public var profile: BatchProfile

    /// The item's place in the root, relative to it.
    public var directory: String { String(sha256.prefix(16)) + "/" + profile.key }

    /// The stable hash that picks the item's shard: the book's content and the profile's key.
    public var shardKey: String { hexString(SHA256.hash(Array((sha256 + ":" + profile.key).utf8))) }
}

/// The books a batch is given: files, directories (searched recursively for .epub and .pdf) and
/// list files (`@list.txt`: one path per line, `#` comments), each book once, in path order.
public enum BatchInputs {
    public static func books(_ inputs: [String]) throws -> [String] {
        var found: [String] = []
        for input in inputs {
            if input.hasPrefix("@") {
                let list = String(input.dropFirst())
                guard let bytes = FileSystem.read(list) else { throw QuireError.cannotOpen(path: list, reason: "the list file cannot be read") }
                let base = FileSystem.parentDirectory(list)
                for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
                    let entry = line.trimmingSpaces
                    guard !entry.isEmpty, !entry.hasPrefix("#") else { continue }
                    let path = entry.hasPrefix("/") || base.isEmpty ? entry : base + "/" + entry
                    found += try books(inDirectoryOrFile: path, named: true)
                }
            } else {
                found += try books(inDirectoryOrFile: input, named: true)
            }
        }
        var seen = Set<String>()
        return found.map(FileSystem.resolvingSymlinks).filter { seen.insert($0).inserted }.sorted()
    }

    /// A file named on the command line is a book whatever its extension (it may fail as one);
    /// inside directories only .epub and .pdf files are.
    static func books(inDirectoryOrFile path: String, named: Bool) throws -> [String] {
        if FileSystem.isDirectory(path) {
            guard let names = FileSystem.contents(ofDirectory: path) else { throw QuireError.cannotOpen(path: path, reason: "the directory cannot be read") }
            var books: [String] = []
            for name in names where !name.hasPrefix(".") {
                let child = FileSystem.joined(path, name)
                if FileSystem.isDirectory(child) {
                    books += try self.books(inDirectoryOrFile: child, named: false)
                } else if name.lowercased().hasSuffix(".epub") || name.lowercased().hasSuffix(".pdf") {
                    books.append(child)
                }
            }
            return books
        }
        if named { return [path] }
        return []
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
