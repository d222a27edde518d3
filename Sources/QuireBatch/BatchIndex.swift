import Glibc
import Quire
import QuireCore

/// `ROOT/index.json`: every input path with each profile's output directory (or why it failed),
/// for the server that serves them. Runs and shards merge into it under an advisory lock, each
/// replacing only its own entries, so shards finishing at once lose nothing. It holds no
/// timings: equal work gives an equal index, whatever the sharding.
public enum BatchIndex {
    public static func update(root: String, with results: [BatchResult]) throws {
        let path = root + "/index.json"
        try FileSystem.withExclusiveLock(root + "/.index.lock") {
            var entries = read(path)
            for result in results { entries[Key(path: result.item.path, profile: result.item.profile.name)] = entry(result) }
            let sorted = entries.keys.sorted { ($0.path, $0.profile) < ($1.path, $1.profile) }.map { entries[$0]! }
            let file = JSON.object([("format", .string("quire-batch-index")), ("version", .int(1)), ("items", .array(sorted))])
            try FileSystem.writeAtomically(file.serializedBytes(pretty: true) + [10], to: path)
        }
    }

    struct Key: Hashable {
        var path: String
        var profile: String
    }

    static func entry(_ result: BatchResult) -> JSON {
        let item = result.item
        var members: [(String, JSON)] = [("path", .string(item.path)), ("profile", .string(item.profile.name))]
        switch result.outcome {
        case .made(let pages, _, _, _, _), .skipped(let pages):
            members += [
                ("status", .string("done")), ("sha256", .string(item.sha256)), ("settings", .string(item.profile.key)),
                ("directory", .string(item.directory)), ("pageCount", .int(pages)),
            ]
        case .failed(let kind, let reason):
            members += [("status", .string("failed")), ("kind", .string(kind)), ("reason", .string(reason))]
            if !item.sha256.isEmpty { members.append(("sha256", .string(item.sha256))) }
        }
        return .object(members)
    }

    /// The entries of an existing index (none when there is none or it cannot be read: it is
    /// rebuilt from what runs report, and every directory it names is self-describing).
    static func read(_ path: String) -> [Key: JSON] {
        guard let bytes = FileSystem.read(path), let object = (try? JSONReader.parse(bytes)) as? [String: Any],
            let items = object["items"] as? [[String: Any]]
        else { return [:] }
        var entries: [Key: JSON] = [:]
        for item in items {
            guard let path = item["path"] as? String, let profile = item["profile"] as? String else { continue }
            entries[Key(path: path, profile: profile)] = ordered(item)
        }
        return entries
    }

    /// An entry read back, in the order `entry` writes its members.
    static func ordered(_ item: [String: Any]) -> JSON {
        let order = ["path", "profile", "status", "sha256", "settings", "directory", "pageCount", "kind", "reason"]
        var members: [(String, JSON)] = []
        for key in order where item[key] != nil {
            if key == "status", (item["status"] as? String) == "failed" {
                members.append(("status", .string("failed")))
                for name in ["kind", "reason", "sha256"] where item[name] != nil { members.append((name, JSON.from(item[name]!))) }
                return .object(members)
            }
            members.append((key, JSON.from(item[key]!)))
        }
        return .object(members)
    }
}
