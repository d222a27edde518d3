import CCairo
import CGLib
import CQuireDelayLoad
import Dispatch
import Glibc
import QuireCore
import QuirePreparation

/// How big pages come out.
public enum PDFScale: Sendable, Hashable {
    /// Pixels per inch (72 means one pixel per point).
    case dpi(Double)
    /// The largest size that fits the box, aspect kept (each half of a split spread fits on its own).
    case fit(width: Int, height: Int)
}

public struct PDFRenderOptions: Sendable, Hashable {
    public var scale: PDFScale = .dpi(150)
    public var gray = false
    public var dither16 = false
    /// zlib level for PNG: low levels with no filtering keep encoding off the critical path.
    public var compressionLevel = 1
    public var preparation = PagePreparation()
    public var password: String? = nil

    public init() {}
}

/// One output image: a source page, or one half of a split spread.
public struct PDFOutputPage: Sendable, Hashable {
    /// 1-based, over the whole document.
    public var index: Int
    /// 1-based.
    public var sourcePage: Int
    public var half: PreparedPage.Half
}

public enum PDFRenderer {
    /// The output pages for the whole document, known before rendering (the split decision reads page shapes).
    public static func plan(_ info: PDFInfo, options: PDFRenderOptions) -> [PDFOutputPage] {
        var out: [PDFOutputPage] = []
        for (offset, page) in info.pages.enumerated() {
            if options.preparation.splits(width: page.width, height: page.height) {
                out.append(PDFOutputPage(index: out.count + 1, sourcePage: offset + 1, half: .first))
                out.append(PDFOutputPage(index: out.count + 1, sourcePage: offset + 1, half: .second))
            } else {
                out.append(PDFOutputPage(index: out.count + 1, sourcePage: offset + 1, half: .whole))
            }
        }
        return out
    }

    /// Pixels per point for a page of `width`×`height` points (rotation by /Rotate already applied).
    public static func scale(width: Double, height: Double, options: PDFRenderOptions) -> Double {
        switch options.scale {
        case .dpi(let dpi): return dpi / 72
        case .fit(let boxWidth, let boxHeight):
            let preparation = options.preparation
            let quarter = preparation.rotation == .clockwise90 || preparation.rotation == .clockwise270
            var (w, h) = quarter ? (height, width) : (width, height)
            if preparation.splits(width: width, height: height) { w /= 2 }
            guard w > 0, h > 0 else { return 1 }
            return min(Double(boxWidth) / w, Double(boxHeight) / h)
        }
    }

    /// Rounded up, as pdftocairo does, so the last partial pixel row and column are kept.
    static func pixels(_ points: Double, _ scale: Double) -> Int { max(1, Int((points * scale - 1e-6).rounded(.up))) }

    /// Renders `sourcePages` (1-based) with `jobs` workers, each with its own poppler document;
    /// pages are handed out in order. Every page is rendered on its own, so the bytes written do
    /// not depend on `jobs`. `imagePath` names the file for an output page; `progress` is called per source page.
    public static func render(
        path: String, info: PDFInfo, sourcePages: [Int], options: PDFRenderOptions, jobs: Int,
        imagePath: @escaping @Sendable (PDFOutputPage) -> String, progress: (@Sendable () -> Void)? = nil
    ) throws {
        guard !sourcePages.isEmpty else { return }
        // `info` came from a document opened on this thread, so poppler's global state exists
        // before the workers open theirs concurrently.
        let plan = plan(info, options: options)
        var outputs: [Int: [PDFOutputPage]] = [:]
        for page in plan { outputs[page.sourcePage, default: []].append(page) }
        let queue = WorkQueue(count: sourcePages.count)
        let workers = max(1, min(jobs, sourcePages.count))
        let frozen = outputs
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            let document: PDFDocument
            do {
                document = try PDFDocument(path: path, password: options.password)
            } catch {
                queue.fail(error)
                return
            }
            let surfaces = SurfaceCache()
            while let slot = queue.next() {
                let number = sourcePages[slot]
                do {
                    try renderPage(
                        document, number: number, info: info.pages[number - 1], outputs: frozen[number] ?? [], options: options,
                        surfaces: surfaces, imagePath: imagePath)
                } catch {
                    queue.fail(error)
                }
                progress?()
            }
        }
        if let error = queue.error { throw error }
    }

    static func renderPage(
        _ document: PDFDocument, number: Int, info: PDFPageInfo, outputs: [PDFOutputPage], options: PDFRenderOptions,
        surfaces: SurfaceCache, imagePath: (PDFOutputPage) -> String
    ) throws {
        try renderPage(document, number: number, info: info, outputs: outputs, options: options, surfaces: surfaces) { output, pixels in
            try PNGWriter.write(
                xrgb: pixels.data, width: pixels.width, height: pixels.height, stride: pixels.stride, gray: options.gray,
                dither16: options.dither16, level: options.compressionLevel, to: imagePath(output))
        }
    }

    /// cairo RGB24 pixels of one output page, valid during the call that receives them.
    public struct Pixels {
        public var data: UnsafePointer<UInt8>
        public var width: Int
        public var height: Int
        public var stride: Int
    }

    /// Renders one source page and its preparation; `emit` receives each output page's pixels.
    public static func renderPage(
        _ document: PDFDocument, number: Int, info: PDFPageInfo, outputs: [PDFOutputPage], options: PDFRenderOptions,
        surfaces: SurfaceCache, emit: (PDFOutputPage, Pixels) throws -> Void
    ) throws {
        let scale = scale(width: info.width, height: info.height, options: options)
        let width = pixels(info.width, scale), height = pixels(info.height, scale)
        guard width <= 32767, height <= 32767, Double(width) * Double(height) <= 400_000_000 else {
            throw QuireError.limitExceeded(limit: "page pixels", detail: "page \(number) would be \(width)x\(height) pixels; lower --dpi")
        }
        guard let surface = surfaces.surface(width: width, height: height) else {
            throw QuireError.io("cairo cannot make a \(width)x\(height) surface for page \(number)")
        }
        try document.withPage(number - 1) { page in
            let cr = cairo_create(surface)!
            defer { cairo_destroy(cr) }
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_paint(cr)
            cairo_scale(cr, scale, scale)
            // poppler_page_render, not _for_printing: this is the on-screen view a reader shows
            // (annotations and form fields with their display appearance, NoView ones hidden,
            // Print-only ones not forced on), and the same path as pdftocairo -png, which the tests
            // compare against. /Rotate is applied by poppler; the page size above is already turned.
            poppler_page_render(page, cr)
        }
        cairo_surface_flush(surface)
        let preparation = options.preparation
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard let data = cairo_image_surface_get_data(surface) else { throw QuireError.io("cairo surface has no data") }
        if preparation.isIdentity {
            guard let output = outputs.first else { return }
            try emit(output, Pixels(data: UnsafePointer(data), width: width, height: height, stride: stride))
            return
        }
        let bitmap = Bitmap(width: width, height: height, channels: 4, stride: stride, bytes: Array(UnsafeBufferPointer(start: data, count: stride * height)))
        let prepared = preparation.prepare(bitmap, splitting: outputs.count == 2)
        for (output, page) in zip(outputs, prepared) {
            try page.bitmap.bytes.withUnsafeBufferPointer { buffer in
                try emit(output, Pixels(data: buffer.baseAddress!, width: page.bitmap.width, height: page.bitmap.height, stride: page.bitmap.stride))
            }
        }
    }
}

/// One worker's image surface, kept while pages keep the same pixel size: a new surface per page
/// costs a zeroed allocation and its page faults, and every page is painted white anyway.
public final class SurfaceCache {
    private var cached: OpaquePointer?
    private var size = (width: 0, height: 0)

    public init() {}

    func surface(width: Int, height: Int) -> OpaquePointer? {
        if let cached, size == (width, height) { return cached }
        if let cached { cairo_surface_destroy(cached) }
        cached = nil
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else { return nil }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            return nil
        }
        cached = surface
        size = (width, height)
        return surface
    }

    deinit { if let cached { cairo_surface_destroy(cached) } }
}

/// Hands out slots 0..<count in order and keeps the first error (after which it hands out nothing).
final class WorkQueue: Sendable {
    private let count: Int
    private let state = LockedValue<(taken: Int, error: Error?)>((0, nil))

    init(count: Int) { self.count = count }

    func next() -> Int? {
        state.withLock { state in
            guard state.error == nil, state.taken < count else { return nil }
            state.taken += 1
            return state.taken - 1
        }
    }

    func fail(_ error: Error) { state.withLock { if $0.error == nil { $0.error = error } } }

    var error: Error? { state.withLock { $0.error } }
}
