/// Safety limits for untrusted books. Defaults are generous for real books and small enough that a
/// hostile archive cannot exhaust memory; every one can be raised from the CLI (`--max-*` flags).
public struct Limits: Sendable, Equatable {
    public static let defaultMaxEntryCount = 50_000
    public static let defaultMaxTotalUncompressedSize: Int64 = 4 << 30  // 4 GiB
    public static let defaultMaxEntryUncompressedSize: Int64 = 1 << 30  // 1 GiB
    /// Deflate tops out near 1032:1; real XHTML and CSS stay well under 50:1.
    public static let defaultMaxCompressionRatio = 200
    /// The ratio is checked only where the inflated bytes are many enough to matter. An entry is
    /// inflated into a buffer of its declared size, never more, so an entry under 16 MiB costs at
    /// most 16 MiB and a few milliseconds whatever its ratio (a 1 MB stylesheet of repeated rules
    /// compresses 500:1 and is harmless); the absolute limits bound the rest. Above it a high ratio
    /// means a small file that would make Quire hold far more than it weighs.
    public static let compressionRatioEntrySize: Int64 = 16 << 20  // 16 MiB
    /// The same for the archive as a whole (many entries, each under the entry threshold): from
    /// 256 MiB declared in all, the total may be at most the ratio times the archive's size.
    public static let compressionRatioTotalSize: Int64 = 256 << 20  // 256 MiB
    public static let defaultMaxXMLDocumentSize = 256 << 20  // 256 MiB
    public static let defaultMaxXMLDepth = 1_000
    /// Elements and text nodes in one XML document. A giant single-file book has a few hundred
    /// thousand; 256 MiB of `<a/>` would be 64 million, gigabytes of trees.
    public static let defaultMaxXMLNodes = 5_000_000
    /// Stylesheets: larger ones are ignored, rules past the count dropped, conditional rules
    /// (@media, @supports) nested deeper skipped, each with a warning (a book is never refused
    /// for its CSS).
    public static let defaultMaxCSSSize = 8 << 20  // 8 MiB
    public static let defaultMaxCSSRules = 200_000
    public static let defaultMaxCSSNesting = 64
    /// An image header claiming more than this in either direction, or more pixels in all, is refused
    /// before any decoding (the caller shows a placeholder).
    public static let defaultMaxImageDimension = 50_000
    public static let defaultMaxImagePixels = 200_000_000
    /// Interlaced PNG and GIF need a full-size buffer while decoding; above this they are refused.
    public static let defaultMaxImageBufferPixels = 50_000_000

    /// The run time of a command that reads one book (`quire render`, `info`, `locate`,
    /// `css-report`): far above what the longest real book takes here (Mahabharata, 14,605 pages
    /// painted, in about two minutes), short enough that a book built to never finish is stopped.
    public static let defaultTimeoutSeconds = 1800

    public var maxEntryCount = Limits.defaultMaxEntryCount
    public var maxTotalUncompressedSize = Limits.defaultMaxTotalUncompressedSize
    public var maxEntryUncompressedSize = Limits.defaultMaxEntryUncompressedSize
    public var maxCompressionRatio = Limits.defaultMaxCompressionRatio
    public var maxXMLDocumentSize = Limits.defaultMaxXMLDocumentSize
    public var maxXMLDepth = Limits.defaultMaxXMLDepth
    public var maxXMLNodes = Limits.defaultMaxXMLNodes
    public var maxCSSSize = Limits.defaultMaxCSSSize
    public var maxCSSRules = Limits.defaultMaxCSSRules
    public var maxCSSNesting = Limits.defaultMaxCSSNesting
    public var maxImageDimension = Limits.defaultMaxImageDimension
    public var maxImagePixels = Limits.defaultMaxImagePixels
    public var maxImageBufferPixels = Limits.defaultMaxImageBufferPixels

    public init() {}

    public static let standard = Limits()
}

/// Parses sizes like `512M`, `2G`, `1048576`.
public func parseByteSize(_ text: String) -> Int64? {
    var digits = Substring(text.trimmingWhitespace())
    var multiplier: Int64 = 1
    if let last = digits.last?.uppercased() {
        switch last {
        case "K": multiplier = 1 << 10
        case "M": multiplier = 1 << 20
        case "G": multiplier = 1 << 30
        case "T": multiplier = 1 << 40
        default: break
        }
        if multiplier != 1 { digits = digits.dropLast() }
    }
    guard let value = Int64(digits), value >= 0 else { return nil }
    let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
    return overflow ? nil : product
}
