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
        .systemLibrary(
            name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(
            name: "CFreeType", path: "Sources/CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),

        // Errors, limits, hashing, JSON: no C dependencies.
        .target(name: "QuireCore"),
        // libxml2 → an immutable Swift tree, parsed with safe options.
        .target(name: "QuireXML", dependencies: ["QuireCore", "CLibXML2"]),
        // Zip (libzip), OCF, OPF, nav/NCX, encryption and font de-obfuscation.
        .target(name: "QuireContainer", dependencies: ["QuireCore", "QuireXML", "CZip"]),
        // CSS: the computed-style record layout reads, the user-agent sheet, cascade and selectors.
        .target(name: "QuireStyle", dependencies: ["QuireCore", "QuireXML"]),
        // The public umbrella: `import Quire`.
        .target(name: "Quire", dependencies: ["QuireCore", "QuireXML", "QuireContainer", "QuireStyle"]),
        // CLI only: argument parsing and wiring.
        .executableTarget(name: "quire", dependencies: ["Quire"]),

        .testTarget(
            name: "QuireTests",
            dependencies: ["Quire", "quire", "CLibXML2", "CFreeType", "CZip"]),
    ],
    swiftLanguageModes: [.v6]
)
