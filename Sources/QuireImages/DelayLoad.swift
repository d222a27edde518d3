import CQuireDelayLoad
import QuireCore

/// cairo, poppler-glib and librsvg are opened on first use (see CQuireDelayLoad). Each entry point checks
/// here first, so a missing library is one clear `.unsupported` error (exit 69), not a crash.
public enum DelayLoad {
    public static func requireCairo() throws {
        try require(quire_load_cairo, library: "libcairo", purpose: "drawing pages and images")
    }

    public static func requirePoppler() throws {
        try require(quire_load_poppler, library: "libpoppler-glib", purpose: "reading PDF files")
    }

    public static func requireRsvg() throws {
        try require(quire_load_rsvg, library: "librsvg", purpose: "drawing SVG images")
    }

    private static func require(
        _ load: (UnsafeMutablePointer<CChar>?, Int) -> Bool, library: String, purpose: String
    ) throws {
        // The usual case (loaded) allocates nothing: image decoding asks for every image.
        if load(nil, 0) { return }
        var reason = [CChar](repeating: 0, count: 512)
        guard !load(&reason, reason.count) else { return }
        let detail = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw QuireError.unsupported("\(purpose) needs \(library), which cannot be loaded: \(detail)")
    }
}
