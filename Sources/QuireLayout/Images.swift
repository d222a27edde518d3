import Dispatch
import QuireContainer
import QuireCore
import QuireImages
import QuireStyle

/// What layout knows about an image: measured from its header (CSS px), or failed with a reason.
public enum ImageMeasurement: Sendable, Hashable {
    case measured(width: Double, height: Double, hasIntrinsicSize: Bool)
    case failed(reason: String)
}

extension ImageMeasurement {
    /// A parsed header's size, or why the format cannot be drawn.
    init(_ info: ImageInfo) {
        if info.format == .bmp {
            self = .failed(reason: "\(info.format.rawValue.uppercased()) images are not supported")
        } else {
            self = .measured(width: Double(info.width), height: Double(info.height), hasIntrinsicSize: info.hasIntrinsicSize)
        }
    }

    /// Image bytes carried in the document (a data: URL).
    init(bytes: [UInt8]) {
        do {
            self.init(try ImageInfo.measure(bytes))
        } catch {
            self = .failed(reason: "\(error)")
        }
    }
}

/// Archive path → measurement.
public typealias ImageSizes = [String: ImageMeasurement]

/// Measures an image without decoding it. Injectable, so tests can slow or block it.
public protocol ImageMeasurer: Sendable {
    func measure(_ path: String) -> ImageMeasurement
}

/// Reads the image's first bytes from the book and parses its header: 16 KB, then 256 KB, and the
/// whole file only when the header lies further in. (A parser given too few bytes throws rather
/// than guess; most headers are in the first kilobytes, and a deflated SVG inflated 256 KB at a time
/// for each of Alice's 45 illustrations cost 30 ms.)
public struct ArchiveImageMeasurer: ImageMeasurer {
    public static let firstBytes = 16 << 10
    public static let headerBytes = 256 << 10
    let container: EPUBContainer

    public init(container: EPUBContainer) { self.container = container }

    public func measure(_ path: String) -> ImageMeasurement {
        guard let entry = container.archive.entry(named: path) else {
            return .failed(reason: "missing: \(path) is not in the book")
        }
        do {
            var found: ImageInfo? = nil
            for limit in [Self.firstBytes, Self.headerBytes] {
                do {
                    found = try ImageInfo.measure(container.archive.read(entry, maxBytes: limit), limits: container.archive.limits)
                    break
                } catch let error as QuireError where entry.uncompressedSize > Int64(limit) {
                    if case .limitExceeded = error { throw error }
                }
            }
            return ImageMeasurement(try found ?? ImageInfo.measure(container.archive.read(entry), limits: container.archive.limits))
        } catch let error as QuireError {
            return .failed(reason: error.description)
        } catch {
            return .failed(reason: "\(error)")
        }
    }
}

/// Bounds on settling: it never hangs.
public struct SettleLimits: Sendable, Hashable {
    public static let defaultMaxPasses = 3
    public static let defaultTimeBudget: Double = 10

    /// Layout passes per chapter (the first is provisional).
    public var maxPasses = SettleLimits.defaultMaxPasses
    /// Seconds a chapter waits for its images to be measured before giving up on the rest.
    public var timeBudget = SettleLimits.defaultTimeBudget

    public init() {}
}

/// What settling did for one chapter (the map's `settle` block).
public struct SettleRecord: Sendable, Hashable {
    public var images: Int
    public var measured: Int
    public var passes: Int
    public var unresolved: [Unresolved]

    public struct Unresolved: Sendable, Hashable {
        public var path: String
        public var reason: String
        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    public init(images: Int = 0, measured: Int = 0, passes: Int = 0, unresolved: [Unresolved] = []) {
        self.images = images
        self.measured = measured
        self.passes = passes
        self.unresolved = unresolved
    }
}

/// Measures several images concurrently and waits at most `deadline`; images not measured by then
/// fail with a reason (their measuring may go on in the background, but nobody waits for it).
enum ConcurrentMeasuring {

    static func measure(_ paths: [String], with measurer: ImageMeasurer, until deadline: DispatchTime) -> ImageSizes {
        let results = LockedValue<ImageSizes>([:])
        let group = DispatchGroup()
        for path in paths {
            group.enter()
            DispatchQueue.global().async {
                let value = measurer.measure(path)
                results.withLock { $0[path] = value }
                group.leave()
            }
        }
        _ = group.wait(timeout: deadline)
        var sizes = results.withLock { $0 }
        for path in paths where sizes[path] == nil {
            sizes[path] = .failed(reason: "not measured within the settling time budget")
        }
        return sizes
    }
}

/// Used image size in CSS px: CSS width/height, else the attributes, else the intrinsic size,
/// keeping the aspect ratio, limited by max-width/max-height and the containing width.
/// Percentage heights resolve against `containingHeight`, the page's content height: in a
/// paginated book an image's containing block is as tall as the page (as in reading systems,
/// whose `img { max-height: 100% }` keeps a plate on one page), never its width.
/// `turned`: the image stands upright in vertical text, laid out on the turned page (see
/// VerticalText.swift), whose width is the picture's height: its own sizes are turned too (its
/// style's were by the cascade).
func usedImageSize(_ box: ReplacedBox, containingWidth: Double, containingHeight: Double, turned: Bool = false) -> (width: Double, height: Double, known: Bool) {
    var intrinsic: (Double, Double)?
    if case .measured(let width, let height, _)? = box.measurement, width > 0, height > 0 { intrinsic = turned ? (height, width) : (width, height) }
    let (attributeWidth, attributeHeight) = turned ? (box.height, box.width) : (box.width, box.height)
    let attributeRatio = attributeWidth.flatMap { w in attributeHeight.map { h in h > 0 ? w / h : nil } ?? nil }
    let ratio = intrinsic.map { $0.0 / $0.1 } ?? attributeRatio
    var width = box.style.width.resolve(against: containingWidth) ?? attributeWidth
    var height: Double? = box.style.height.resolve(against: containingHeight) ?? attributeHeight
    if box.style.width.resolve(against: containingWidth) != nil, box.style.height == .auto { height = nil }
    switch (width, height) {
    case (let w?, nil): height = ratio.map { w / $0 } ?? intrinsic?.1 ?? w
    case (nil, let h?): width = ratio.map { h * $0 } ?? intrinsic?.0 ?? h
    case (nil, nil):
        if let intrinsic {
            width = intrinsic.0
            height = intrinsic.1
        }
    default: break
    }
    guard var w = width, var h = height else {
        // Unknown until measured (or failed): an explicit provisional box.
        let side = box.measurement == nil ? ReplacedBox.unknownSide : ReplacedBox.failedSide
        return (side, side * 0.66, false)
    }
    let maxWidth = min(box.style.maxWidth?.resolve(against: containingWidth) ?? .infinity, containingWidth)
    if w > maxWidth {
        h *= maxWidth / w
        w = maxWidth
    }
    if let maxHeight = box.style.maxHeight.map({ $0.resolve(against: containingHeight) }), h > maxHeight {
        w *= maxHeight / h
        h = maxHeight
    }
    return (w, h, true)
}

/// One chapter behind the full-extent guard. `firstPage()` answers at once from a provisional
/// layout (its offset, 0, cannot depend on anything after it). Everything whose answer depends
/// on the chapter's full extent — page count, last page, any position past the first page —
/// goes through `settled()`, which waits for the settling pass (bounded by `SettleLimits`).
public final class ChapterHandle: Sendable {
    public let spineIndex: Int
    private let layout: BookLayout
    private let layouts = LockedValue<(provisional: ChapterLayout?, final: ChapterLayout?)>((nil, nil))

    public init(layout: BookLayout, spineIndex: Int) {
        self.layout = layout
        self.spineIndex = spineIndex
    }

    /// Page 0, without waiting for any image to be measured.
    public func firstPage() -> Page {
        layouts.withLock { layouts in
            if let final = layouts.final { return final.pages[0] }
            if layouts.provisional == nil { layouts.provisional = layout.layoutChapter(spineIndex, worker: LayoutWorker()) }
            return layouts.provisional!.pages[0]
        }
    }

    /// The settled chapter (waits for settling once, then answers from memory).
    public func settled() -> ChapterLayout {
        if let final = layouts.withLock({ $0.final }) { return final }
        let result = layout.settleChapter(spineIndex, worker: LayoutWorker())
        return layouts.withLock { layouts in
            if layouts.final == nil { layouts.final = result }
            return layouts.final!
        }
    }

    public var pageCount: Int { settled().pages.count }
    public var lastPage: Page { settled().pages[settled().pages.count - 1] }

    /// The page (0-based) holding a text offset: 0 at once for the chapter's start, otherwise settled.
    public func pageIndex(containing offset: Int) -> Int? {
        if offset == 0 { return 0 }
        let chapter = settled()
        guard offset >= 0, offset <= chapter.textLength else { return nil }
        return chapter.pages.lastIndex { $0.start <= offset }
    }
}

/// An image's border and padding in device pixels at `scale`, percentages of `basis` CSS px (the
/// containing block's width): the box drawn around the picture, wherever the image sits.
func imageEdges(_ style: ComputedStyle, basis: Double, scale: Double) -> (border: Edges<Double>, padding: Edges<Double>) {
    func width(_ style: BorderStyle, _ value: Double) -> Double { style == .none || style == .hidden ? 0 : value * scale }
    let border = Edges(
        top: width(style.borderStyle.top, style.borderWidth.top), right: width(style.borderStyle.right, style.borderWidth.right),
        bottom: width(style.borderStyle.bottom, style.borderWidth.bottom), left: width(style.borderStyle.left, style.borderWidth.left))
    let padding = Edges(
        top: style.padding.top.resolve(against: basis) * scale, right: style.padding.right.resolve(against: basis) * scale,
        bottom: style.padding.bottom.resolve(against: basis) * scale, left: style.padding.left.resolve(against: basis) * scale)
    return (border, padding)
}
