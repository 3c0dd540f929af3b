// swift-tools-version:6.1
// A separate package that uses Parley's SDK exactly as an app would: through its library products.
// `scripts/test` builds it and runs it against a real server, so the products cannot break silently.
import PackageDescription

let package = Package(
    name: "EchoBot",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        // An app would write: .package(url: "https://…/parley.git", from: "1.0.0")
        .package(name: "parley", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "EchoBot",
            dependencies: [
                .product(name: "ParleySDK", package: "parley"),
                .product(name: "ParleyViewModels", package: "parley"),
            ]
        ),
    ]
)
