// swift-tools-version:6.0
// A program that uses Quire as a library, the way another project would: a dependency by path.
import PackageDescription

let package = Package(
    name: "reader",
    dependencies: [.package(name: "Quire", path: "../..")],
    targets: [
        .executableTarget(name: "reader", dependencies: [.product(name: "Quire", package: "Quire")])
    ],
    swiftLanguageModes: [.v6]
)
