// swift-tools-version: 6.0
// An app's keychain code, written for Apple platforms, built on Linux against kc by adding
// kc as a dependency: Security is kc's module on Linux and Apple's framework elsewhere.
import PackageDescription

let package = Package(
    name: "apple-keychain-app",
    dependencies: [
        .package(name: "kc", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "apple-keychain-app",
            dependencies: [
                .product(name: "Security", package: "kc", condition: .when(platforms: [.linux])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
