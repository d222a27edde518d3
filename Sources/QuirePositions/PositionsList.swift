import Glibc
import QuireContainer
import QuireCore
import QuireDocument

/// The Readium positions list and its Komga variant: each reflowable spine resource gets one
/// position per 1024 bytes, at least one; fixed-layout resources get one each.
/// - Readium (swift-toolkit `EPUBPositionsService`): bytes of the archive entry as stored (compressed);
///   totalProgression = (position − 1) / count.
/// - Komga (`EpubExtractor.computePositions`): uncompressed entry size; totalProgression = position / count.
public enum PositionsConvention: String, Sendable, CaseIterable {
    case readium, komga

    public var rule: String {
        switch self {
        case .readium: return "max(1, ceil(compressed entry size / 1024)) per reflowable resource; totalProgression = (position - 1) / count"
        case .komga: return "max(1, ceil(uncompressed entry size / 1024)) per reflowable resource; totalProgression = position / count"
        }
    }
}

public struct ReadiumPosition: Sendable, Hashable {
    public var position: Int
    public var spineIndex: Int
    public var href: String
    public var progression: Double
    public var totalProgression: Double
}

public enum PositionsList {
    public static let bytesPerPosition = 1024.0

    public static func make(_ container: EPUBContainer, convention: PositionsConvention) -> [ReadiumPosition] {
        let publication = container.publication
        var counts: [(spineIndex: Int, href: String, count: Int)] = []
        for spineItem in publication.spine {
            guard let item = publication.item(for: spineItem), let path = item.path else { continue }
            let entry = container.archive.entry(named: path)
            let count: Int
            if spineItem.layout == .prePaginated {
                count = 1
            } else {
                let size = Double(convention == .readium ? (entry?.compressedSize ?? 0) : (entry?.uncompressedSize ?? 0))
                count = max(1, Int((size / bytesPerPosition).rounded(.up)))
            }
            counts.append((spineItem.index, path, count))
        }
        let total = counts.reduce(0) { $0 + $1.count }
        var positions: [ReadiumPosition] = []
        positions.reserveCapacity(total)
        var next = 1
        for (spineIndex, href, count) in counts {
            for step in 0..<count {
                let totalProgression = convention == .readium ? Double(next - 1) / Double(total) : Double(next) / Double(total)
                positions.append(
                    ReadiumPosition(
                        position: next, spineIndex: spineIndex, href: href, progression: Double(step) / Double(count),
                        totalProgression: totalProgression))
                next += 1
            }
        }
        return positions
    }
}

/// KOReader's document fingerprint (`util.partialMD5`, also Komga's `KoreaderHasher`): MD5 over
/// 1 KiB samples at offset 0 and at 1024·4^i for i = 0…10, stopping at the end of the file.
public enum PartialMD5 {
    public static func of(file path: String) throws -> String {
        guard let handle = fopen(path, "rb") else { throw QuireError.cannotOpen(path: path, reason: "cannot be read") }
        defer { fclose(handle) }
        var md5 = MD5()
        var buffer = [UInt8](repeating: 0, count: 1024)
        let offsets = [0] + (0...10).map { 1024 << (2 * $0) }
        for offset in offsets {
            guard fseeko(handle, off_t(offset), SEEK_SET) == 0 else { break }
            let count = fread(&buffer, 1, 1024, handle)
            if count == 0 { break }
            md5.update(buffer.prefix(count))
        }
        return hexString(md5.finalize())
    }
}
