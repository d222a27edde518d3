import Glibc
import QuireContainer
import QuireCore

/// Lookups shared by `quire locate` and library users.
public enum Locate {
    /// A Readium/Komga Locator: href + (fragment, cssSelector, partialCfi, progression, position) or totalProgression.
    public static func resolve(locator: [String: Any], map: MapIndex, book: () throws -> BookAnchors) throws -> (Int, Position?) {
        let locations = locator["locations"] as? [String: Any] ?? [:]
        guard let href = locator["href"] as? String, !href.isEmpty else {
            if let total = JSONReader.double(locations["totalProgression"]) {
                let found = try map.position(totalProgression: total)
                return (try map.page(of: found), found)
            }
            throw QuireError.unresolvable("the locator has neither href nor totalProgression")
        }
        guard let chapter = map.chapter(href: href) else { throw QuireError.unresolvable("href '\(href)' is not in the book") }
        var fragment = (locations["fragments"] as? [String])?.first ?? href.split(separator: "#", maxSplits: 1).dropFirst().first.map(String.init)
        if let selector = locations["cssSelector"] as? String {
            guard selector.hasPrefix("#"), !selector.contains(" ") else {
                throw QuireError.unresolvable("only #id CSS selectors are resolved, not '\(selector)'")
            }
            fragment = String(selector.dropFirst())
        }
        if let partial = locations["partialCfi"] as? String {
            fragment = partial.hasPrefix("epubcfi(") ? partial : "epubcfi(\(partial))"
        }
        if let fragment, !fragment.isEmpty {
            let found = try book().position(spineIndex: chapter.spineIndex, id: PercentEncoding.decode(fragment))
            return (try map.page(of: found), found)
        }
        if let progression = JSONReader.double(locations["progression"]) {
            guard progression >= 0, progression <= 1 else { throw QuireError.unresolvable("progression \(progression) is outside 0…1") }
            let found = Position(spineIndex: chapter.spineIndex, offset: Int((progression * Double(chapter.length)).rounded()))
            return (try map.page(of: found), found)
        }
        if let number = JSONReader.double(locations["position"]), number.rounded() == number, abs(number) < 1e15 {
            let position = Int(number)
            return (try map.page(position: position, convention: .readium), nil)
        }
        let found = Position(spineIndex: chapter.spineIndex, offset: 0)
        return (try map.page(of: found), found)
    }

    /// The page's start as a Readium Locator, with Quire's cfi and xpointer in `locations`.
    public static func startLocator(_ entry: [String: Any]) -> [String: Any] {
        let start = entry["start"] as? [String: Any] ?? [:]
        var locations: [String: Any] = [:]
        for key in ["progression", "totalProgression", "cfi", "xpointer", "offset"] {
            if let value = start[key], !(value is JSONNull) { locations[key] = value }
        }
        var locator: [String: Any] = [
            "href": entry["path"] as? String ?? entry["href"] as? String ?? "", "type": "application/xhtml+xml", "locations": locations,
        ]
        if let text = entry["text"] as? [String: Any] { locator["text"] = text }
        return locator
    }
}
