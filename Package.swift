// swift-tools-version:6.0
import Foundation
import PackageDescription

// The hot modules (styles, text, layout) skip runtime exclusivity checks in release builds: the
// checks cost a few percent on every access to a class's stored property, and debug builds and
// tests keep them on.
let hotPathSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

// cairo, poppler-glib and librsvg (and the GTK stack behind them) are opened on first use by
// Sources/CQuireDelayLoad, never linked, so EPUB layout doesn't pay their start-up time and memory.
// Their headers still come from pkg-config; only the -I flags are taken, so no -l reaches the link.
let delayLoadedHeaders: [String] = {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["pkg-config", "--cflags-only-I", "poppler-glib", "librsvg-2.0", "cairo"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    var flags: [String] = []
    if (try? process.run()) != nil {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus == 0 {
            flags = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
        }
    }
    // Debian's locations, for a machine without pkg-config's files (`make setup` installs them).
    return flags.isEmpty
        ? ["/usr/include/poppler/glib", "/usr/include/poppler", "/usr/include/librsvg-2.0", "/usr/include/gdk-pixbuf-2.0",
            "/usr/include/glib-2.0", "/usr/lib/x86_64-linux-gnu/glib-2.0/include", "/usr/include/cairo"].map { "-I" + $0 }
        : flags
}()

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
        .systemLibrary(
            name: "CFribidi", path: "Sources/CFribidi", pkgConfig: "fribidi", providers: [.apt(["libfribidi-dev"])]),
        // Delay-loaded (see `delayLoadedHeaders`): its shim names cairo's headers by path.
        .systemLibrary(name: "CCairo", path: "Sources/CCairo", providers: [.apt(["libcairo2-dev"])]),
        .systemLibrary(name: "CGLib", path: "Sources/CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // libhyphen ships no .pc file: the module map's `link "hyphen"` and /usr/include/hyphen.h do it.
        .systemLibrary(name: "CHyphen", path: "Sources/CHyphen", providers: [.apt(["libhyphen-dev"])]),
        // Small C targets where Swift can't reach: ICU's version-suffixed API, libpng's setjmp errors and pixel loops.
        .target(name: "CQuireICU", linkerSettings: [.linkedLibrary("icuuc")]),
        .target(name: "CQuirePNG", linkerSettings: [.linkedLibrary("png16")]),
        .target(
            name: "CQuireImage",
            linkerSettings: [
                .linkedLibrary("png16"), .linkedLibrary("jpeg"), .linkedLibrary("webp"), .linkedLibrary("webpdemux"),
            ]),

        // cairo, poppler-glib and librsvg, opened on first use (see `delayLoadedHeaders`). Their
        // packages, for `make setup`: libcairo2-dev, libpoppler-glib-dev, librsvg2-dev.
        .target(
            name: "CQuireDelayLoad", dependencies: ["CGLib", "CFreeType"], cSettings: [.unsafeFlags(delayLoadedHeaders)]),

        // SHA-256 with the x86 SHA instructions (Swift can't reach them).
        .target(name: "CQuireSHA"),
        // Errors, limits, hashing, JSON.
        .target(name: "QuireCore", dependencies: ["CQuireSHA"]),
        // libxml2 → an immutable Swift tree, parsed with safe options.
        .target(name: "QuireXML", dependencies: ["QuireCore", "CLibXML2"]),
        // Zip (libzip), OCF, OPF, nav/NCX, encryption and font de-obfuscation.
        .target(name: "QuireContainer", dependencies: ["QuireCore", "QuireXML", "CZip", "CDeflate"]),
        // XHTML content documents: the tree with text offsets (the position model's coordinates).
        .target(name: "QuireDocument", dependencies: ["QuireCore", "QuireXML", "QuireContainer"]),
        // CSS: the computed-style record layout reads, the user-agent sheet, cascade and selectors.
        .target(name: "QuireStyle", dependencies: ["QuireCore", "QuireXML"], swiftSettings: hotPathSettings),
        // Fonts (FreeType, fontconfig), shaping (HarfBuzz), line breaking (ICU, Knuth–Plass), hyphenation, bidi.
        .target(
            name: "QuireText",
            dependencies: [
                "QuireCore", "QuireStyle", "CHarfBuzz", "CFreeType", "CFontconfig", "CFribidi", "CHyphen", "CQuireICU",
            ], swiftSettings: hotPathSettings),
        // Images: sizes from headers only, and decoding to a size budget (PNG, JPEG, GIF, WebP, SVG).
        .target(
            name: "QuireImages", dependencies: ["QuireCore", "CQuireImage", "CGLib", "CFreeType", "CCairo", "CQuireDelayLoad"]),
        // Bitmaps: page preparation (rotate, border-crop, split spreads), decode budgets, PNG files (libpng).
        .target(name: "QuirePreparation", dependencies: ["QuireCore", "CQuirePNG"]),
        // Boxes, lines, pages: styled documents to per-page display lists.
        .target(
            name: "QuireLayout",
            dependencies: ["QuireCore", "QuireXML", "QuireContainer", "QuireDocument", "QuireStyle", "QuireText", "QuireImages"],
            swiftSettings: hotPathSettings),
        // Display lists to pixels (cairo), themes, grey and dithering.
        .target(
            name: "QuirePaint",
            dependencies: ["QuireCore", "QuireText", "QuireImages", "QuirePreparation", "QuireLayout", "CCairo", "CFreeType", "CQuirePNG"]),
        // PDF documents (poppler): metadata, labels, outline, parallel rendering with page preparation.
        .target(
            name: "QuirePDF",
            dependencies: ["QuireCore", "QuireImages", "QuirePreparation", "CGLib", "CFreeType", "CCairo", "CQuireDelayLoad"]),
        // The position map: pages tied to semantic positions (spine item + text offset, or PDF page).
        .target(name: "QuirePositions", dependencies: ["QuireCore", "QuireContainer", "QuireDocument", "QuireLayout"]),
        // The public umbrella: `import Quire`.
        .target(
            name: "Quire",
            dependencies: [
                "QuireCore", "QuireXML", "QuireContainer", "QuireDocument", "QuireStyle", "QuireText", "QuireImages",
                "QuirePreparation", "QuireLayout", "QuirePaint", "QuirePDF", "QuirePositions",
            ]),
        // CLI only: argument parsing and wiring.
        // It imports QuireCore for plumbing only (files, the environment, number formatting).
        .executableTarget(name: "quire", dependencies: ["Quire", "QuireCore"]),

        .testTarget(
            name: "QuireTests",
            dependencies: [
                "Quire", "quire", "QuireCore", "QuireXML", "QuireContainer", "QuireDocument", "QuireStyle", "QuireText", "QuireImages",
                "QuirePreparation", "QuireLayout", "QuirePaint", "QuirePDF", "QuirePositions", "CLibXML2", "CFreeType", "CZip",
                "CQuireImage", "CQuirePNG",
            ],
            // Golden display lists are read from the source tree by path, not bundled.
            exclude: ["Golden"]),
    ],
    swiftLanguageModes: [.v6]
)
