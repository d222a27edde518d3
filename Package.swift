// swift-tools-version:6.0
import PackageDescription

// The pipeline reads off the target list: each module depends only on modules earlier in the flow.
let package = Package(
    name: "Quire",
    products: [
        .library(name: "Quire", targets: ["Quire"]),
        .executable(name: "quire", targets: ["quire"]),
    ],
    targets: [
        // System C libraries (module map + pkg-config, with a `link` line in each module map as backup).
        .systemLibrary(name: "CZip", path: "Sources/CZip", pkgConfig: "libzip", providers: [.apt(["libzip-dev"])]),
        // Inflates zip entries outside the archive's lock, about twice as fast as libzip's zlib path.
        .systemLibrary(name: "CDeflate", path: "Sources/CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(
            name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(
            name: "CFreeType", path: "Sources/CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(
            name: "CHarfBuzz", path: "Sources/CHarfBuzz", pkgConfig: "harfbuzz", providers: [.apt(["libharfbuzz-dev"])]),
        .systemLibrary(
            name: "CFontconfig", path: "Sources/CFontconfig", pkgConfig: "fontconfig",
            providers: [.apt(["libfontconfig-dev"])]),
        // libchafa: the terminal viewer's kitty, iTerm2, sixel and symbol encoders and its term database.
        .systemLibrary(name: "CChafa", path: "Sources/CChafa", pkgConfig: "chafa", providers: [.apt(["libchafa-dev"])]),
        .systemLibrary(
            name: "CFribidi", path: "Sources/CFribidi", pkgConfig: "fribidi", providers: [.apt(["libfribidi-dev"])]),
        // Delay-loaded (see `delayLoadedHeaders`): its shim names cairo's headers by path.
        .systemLibrary(name: "CCairo", path: "Sources/CCairo", providers: [.apt(["libcairo2-dev"])]),
        .systemLibrary(name: "CGLib", path: "Sources/CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // libhyphen ships no .pc file: the module map's `link "hyphen"` and /usr/include/hyphen.h do it.
        .systemLibrary(name: "CHyphen", path: "Sources/CHyphen", providers: [.apt(["libhyphen-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        // Small C targets where Swift can't reach: ICU's version-suffixed API, libpng's setjmp errors and pixel loops.
        .target(name: "CQuireICU", linkerSettings: [.linkedLibrary("icuuc")]),
        .target(name: "CQuirePNG", linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("deflate")]),
        // libavif and libjxl are opened on first use (CQuireDelayLoad), never linked.
        .target(
            name: "CQuireImage", dependencies: ["CQuireDelayLoad"],
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg"), .linkedLibrary("webp"), .linkedLibrary("webpdemux")]),

        // cairo, poppler-glib, librsvg, libavif and libjxl (and the stacks behind them) are opened on first use,
        // never linked, so EPUB layout doesn't pay their start-up time and memory. The stubs'
        // C file includes the libraries' own headers, reached through the symlinks in
        // Sources/CQuireDelayLoad/system (Debian's include directories; packages libcairo2-dev,
        // libpoppler-glib-dev, librsvg2-dev): their pkg-config modules would link the libraries.
        .target(
            name: "CQuireDelayLoad", dependencies: ["CGLib", "CFreeType"],
            cSettings: ["poppler-glib", "poppler", "cairo", "librsvg-2.0", "gdk-pixbuf-2.0"].map { .headerSearchPath("system/" + $0) }),

        // SHA-256 with the x86 SHA instructions (Swift can't reach them).
        .target(name: "CQuireSHA"),
        // Errors, limits, hashing, JSON.
        .target(name: "QuireCore", dependencies: ["CQuireSHA", "CLinux"]),
        // libxml2 → an immutable Swift tree, parsed with safe options.
        .target(name: "QuireXML", dependencies: ["QuireCore", "CLibXML2"]),
        // Zip (libzip), OCF, OPF, nav/NCX, encryption and font de-obfuscation.
        .target(name: "QuireContainer", dependencies: ["QuireCore", "QuireXML", "CZip", "CDeflate"]),
        // XHTML content documents: the tree with text offsets (the position model's coordinates).
        .target(name: "QuireDocument", dependencies: ["QuireCore", "QuireXML", "QuireContainer"]),
        // CSS: the computed-style record layout reads, the user-agent sheet, cascade and selectors.
        .target(name: "QuireStyle", dependencies: ["QuireCore", "QuireXML"]),
        // Fonts (FreeType, fontconfig), shaping (HarfBuzz), line breaking (ICU, Knuth–Plass), hyphenation, bidi.
        .target(
            name: "QuireText",
            dependencies: [
                "QuireCore", "QuireStyle", "CHarfBuzz", "CFreeType", "CFontconfig", "CFribidi", "CHyphen", "CQuireICU",
            ]),
        // Images: sizes from headers only, and decoding to a size budget (PNG, JPEG, GIF, WebP, SVG).
        .target(
            name: "QuireImages", dependencies: ["QuireCore", "CQuireImage", "CGLib", "CFreeType", "CCairo", "CQuireDelayLoad"]),
        // Bitmaps: page preparation (rotate, border-crop, split spreads), decode budgets, PNG files (libpng).
        .target(name: "QuirePreparation", dependencies: ["QuireCore", "CQuirePNG"]),
        // Boxes, lines, pages: styled documents to per-page display lists.
        .target(
            name: "QuireLayout",
            dependencies: ["QuireCore", "QuireXML", "QuireContainer", "QuireDocument", "QuireStyle", "QuireText", "QuireImages"],
            ),
        // Display lists to pixels (cairo), themes, grey and dithering.
        .target(
            name: "QuirePaint",
            dependencies: ["QuireCore", "QuireContainer", "QuireText", "QuireImages", "QuirePreparation", "QuireLayout", "CCairo", "CFreeType", "CQuirePNG"]),
        // PDF documents (poppler): metadata, labels, outline, parallel rendering with page preparation.
        .target(
            name: "QuirePDF",
            dependencies: ["QuireCore", "QuireImages", "QuirePreparation", "CGLib", "CFreeType", "CCairo", "CQuireDelayLoad"]),
        // The position map: pages tied to semantic positions (spine item + text offset, or PDF page).
        .target(name: "QuirePositions", dependencies: ["QuireCore", "QuireContainer", "QuireDocument", "QuireLayout"]),
        // Settled chapters kept on disk between runs (batch profiles that differ only in paint, crashes).
        .target(name: "QuireLayoutCache", dependencies: ["QuireCore", "QuireText", "QuireLayout", "QuirePositions", "CDeflate"]),
        // The public umbrella: `import Quire`.
        .target(
            name: "Quire",
            dependencies: [
                "QuireCore", "QuireXML", "QuireContainer", "QuireDocument", "QuireStyle", "QuireText", "QuireImages",
                "QuirePreparation", "QuireLayout", "QuirePaint", "QuirePDF", "QuirePositions", "QuireLayoutCache",
            ]),
        // The terminal reader on the session API: probe, libchafa encoding, keys, status line.
        .target(name: "QuireViewer", dependencies: ["Quire", "QuireCore", "QuirePreparation", "CChafa"]),
        // Many books at many profiles: content-addressed outputs, resumable, sharded by schedulers' task numbers.
        .target(name: "QuireBatch", dependencies: ["Quire", "QuireCore"]),
        // CLI only: argument parsing and wiring.
        // It imports QuireCore for plumbing only (files, the environment, number formatting).
        .executableTarget(name: "quire", dependencies: ["Quire", "QuireCore", "QuireViewer", "QuireBatch"]),

        .testTarget(
            name: "QuireTests",
            dependencies: [
                "Quire", "quire", "QuireCore", "QuireXML", "QuireContainer", "QuireDocument", "QuireStyle", "QuireText", "QuireImages",
                "QuirePreparation", "QuireLayout", "QuirePaint", "QuirePDF", "QuirePositions", "QuireViewer", "QuireBatch", "CLibXML2", "CFreeType", "CZip",
                "CQuireImage", "CQuirePNG", "CQuireICU",
            ],
            // Golden display lists are read from the source tree by path, not bundled.
            exclude: ["Golden"]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (Fuzz/, `make fuzz`), seen only when QUIRE_FUZZ is set: scripts/fuzz.sh builds
// them with -sanitize=fuzzer,address and -enable-testing (they reach internal parsers through
// @testable import), so ordinary builds and tests never compile them.
if Context.environment["QUIRE_FUZZ"] != nil {
    package.targets += [
        .target(name: "CFuzzSupport", path: "Fuzz/CSupport"),
        .target(name: "FuzzSupport", dependencies: ["QuireCore", "CZip", "CFuzzSupport"], path: "Fuzz/Support"),
    ]
    let fuzzers: [(name: String, dependencies: [Target.Dependency])] = [
        ("FuzzContainer", ["QuireContainer"]),
        ("FuzzXHTML", ["QuireXML", "QuireDocument", "QuireStyle", "QuireLayout"]),
        ("FuzzCSS", ["QuireXML", "QuireStyle"]),
        ("FuzzPositions", ["QuireContainer", "QuireDocument", "QuirePositions"]),
        ("FuzzImages", ["QuireImages"]),
        ("FuzzLayout", ["QuireContainer", "QuireLayout", "QuireText"]),
        ("FuzzFonts", ["QuireText"]),
    ]
    for fuzzer in fuzzers {
        package.targets.append(
            .executableTarget(
                name: fuzzer.name, dependencies: ["FuzzSupport", "QuireCore"] + fuzzer.dependencies, path: "Fuzz/\(fuzzer.name)"))
        package.products.append(.executable(name: fuzzer.name, targets: [fuzzer.name]))
    }
}
