import Dispatch

import Quire
import QuireCore

/// `quire locate MAP QUERY`: a position in any form → the page holding it, and that page's start
/// Locator. Exit 3 when the query names nothing.
enum LocateCommand {
    static let valued: Set<String> = Arguments.limitFlags.union([Arguments.timeoutFlag,
        "page", "locator", "cfi", "xpointer", "progression", "total-progression", "position", "convention", "label", "toc", "from", "book",
        "bench-lookups",
    ])

    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try Arguments(arguments, valued: valued, boolean: ["json"])
        guard options.positionals.count == 1 else { throw QuireError.usage("locate takes one map: quire locate MAP QUERY") }
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let map = try MapIndex(path: options.positionals[0])
        if let count = try options.integer("bench-lookups") {
            // A benchmark, not a query: time to load the map, then page lookups per second.
            let loaded = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e9
            var random = UInt64(0x9E37_79B9_7F4A_7C15)
            var positions: [Position] = []
            positions.reserveCapacity(4096)
            for _ in 0..<4096 {
                random = random &* 6364136223846793005 &+ 1442695040888963407
                let chapter = map.chapters[Int(random >> 33) % max(map.chapters.count, 1)]
                positions.append(Position(spineIndex: chapter.spineIndex, offset: Int(random >> 20) % max(chapter.length + 1, 1)))
            }
            var checksum = 0
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<count { checksum &+= try map.page(of: positions[index & 4095]) }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            writeStdout("map: \(map.pageCount) pages loaded in \(fixedDecimals(loaded * 1000, 1)) ms; \(count) lookups in \(fixedDecimals(seconds, 3)) s = \(Int(Double(count) / seconds)) lookups/s (checksum \(checksum))\n")
            return
        }
        var opened: Book?
        func book() throws -> Book {
            if let opened { return opened }
            guard let path = options.value("book") else {
                throw QuireError.usage("this query needs the book's DOM: add --book BOOK")
            }
            try options.startTimeout(for: path)
            let book = try Book.open(path, limits: try options.limits(), preloadHyphenation: false)
            guard try book.identity().sha256 == map.sha256 else {
                throw QuireError.unresolvable("--book is not the book this map was made from (sha256 differs)")
            }
            opened = book
            return book
        }
        let queries = ["page", "locator", "cfi", "xpointer", "progression", "total-progression", "position", "label", "toc"].filter { options.value($0) != nil }
        guard queries.count == 1 else {
            throw QuireError.usage("give exactly one of --page, --locator, --cfi, --xpointer, --progression, --total-progression, --position, --label, --toc")
        }
        let query = queries[0]
        let value = options.value(query)!
        var page: Int
        var position: Position?
        switch query {
        case "page":
            guard let number = Int(value) else { throw QuireError.usage("--page needs a number") }
            if let from = options.value("from") {
                // Cross-geometry: the page of this map that matches the other map's page.
                let source = try MapIndex(path: from)
                guard source.sha256 == map.sha256 else {
                    throw QuireError.unresolvable("the two maps are of different books (sha256 differs)")
                }
                page = try map.page(matching: number, in: source)
                position = try map.startPosition(ofPage: page)
            } else {
                page = number
                _ = try map.entry(page: number)
            }
        case "locator":
            let text: String
            if value.hasPrefix("@") {
                guard let data = FileSystem.read(String(value.dropFirst())) else {
                    throw QuireError.cannotOpen(path: String(value.dropFirst()), reason: "cannot read locator")
                }
                text = String(decoding: data, as: UTF8.self)
            } else {
                text = value
            }
            guard let object = (try? JSONReader.parse(text)) as? [String: Any] else {
                throw QuireError.usage("--locator needs a JSON object (or @file)")
            }
            let locator = try Locator(json: object)
            (page, position) = try Locate.resolve(locator: locator, map: map) { try book().position(spineIndex: $0, fragment: $1) }
        case "cfi":
            let found = try book().position(cfi: value)
            position = found
            page = try map.page(of: found)
        case "xpointer":
            let found = try book().position(xpointer: value)
            position = found
            page = try map.page(of: found)
        case "progression":
            let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let fraction = Double(parts[1]) else { throw QuireError.usage("--progression takes href=FRACTION") }
            guard let chapter = map.chapter(href: parts[0]) else { throw QuireError.unresolvable("href '\(parts[0])' is not in the book") }
            guard fraction >= 0, fraction <= 1 else { throw QuireError.unresolvable("progression \(fraction) is outside 0…1") }
            let found = Position(spineIndex: chapter.spineIndex, offset: Int((fraction * Double(chapter.length)).rounded()))
            position = found
            page = try map.page(of: found)
        case "total-progression":
            guard let fraction = Double(value) else { throw QuireError.usage("--total-progression takes a number from 0 to 1") }
            let found = try map.position(totalProgression: fraction)
            position = found
            page = try map.page(of: found)
        case "position":
            guard let number = Int(value) else { throw QuireError.usage("--position takes a number") }
            let convention = try convention(options.value("convention"))
            page = try map.page(position: number, convention: convention)
        case "label":
            page = try map.page(label: value)
        default:
            page = try map.page(tocTitle: value)
        }
        // Members sorted by name, as locate has always printed them.
        let locator = Locate.startLocator(try map.entry(page: page)).json.sortingKeys()
        if options.flag("json") {
            var members: [(String, JSON)] = [("locator", locator), ("matched", .string(query)), ("page", .int(page))]
            if let position { members.append(("position", .object([("offset", .int(position.offset)), ("spineIndex", .int(position.spineIndex))]))) }
            writeStdout(bytes: JSON.object(members).serializedBytes(pretty: false) + [0x0A])
        } else {
            writeStdout("\(page)\n")
            writeStdout(bytes: locator.serializedBytes(pretty: false) + [0x0A])
        }
    }

    static func convention(_ value: String?) throws -> PositionsConvention {
        guard let value else { return .readium }
        guard let convention = PositionsConvention(rawValue: value) else { throw QuireError.usage("--convention is readium or komga") }
        return convention
    }

}
