// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "kc",
    products: [
        .executable(name: "kc", targets: ["kc"]),
        .library(name: "KeychainCore", targets: ["KeychainCore"]),
        // Apple's SecItem API with Apple's signatures, for code written for Apple platforms
        // (Linux only: depend on it with `condition: .when(platforms: [.linux])`).
        .library(name: "Security", targets: ["Security"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "KeychainCore",
            dependencies: ["CSodium", "CSQLite"]
        ),
        .target(
            name: "Security",
            dependencies: ["KeychainCore"]
        ),
        .executableTarget(
            name: "kc",
            dependencies: [
                "KeychainCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A load generator for the concurrency tests and `make stress`; not installed.
        .executableTarget(
            name: "kc-loadgen",
            dependencies: ["KeychainCore"]
        ),
        // The in-process half of `make bench` (bench/bench.sh); not installed.
        .executableTarget(
            name: "kc-bench",
            dependencies: ["KeychainCore"]
        ),
        .testTarget(
            name: "KeychainCoreTests",
            dependencies: ["KeychainCore", "kc-loadgen", "KCTestSupport"]
        ),
        // Test helpers: running the real kc binary, a seeded generator (shared by the test targets).
        .target(
            name: "KCTestSupport",
            dependencies: ["KeychainCore"],
            path: "Tests/KCTestSupport"
        ),
        .testTarget(
            name: "kcTests",
            dependencies: ["KeychainCore", "kc", "KCTestSupport"],
            exclude: ["pty_session.py", "git_http_server.py", "Fixtures"]
        ),
        // Keychain code written for Apple platforms, built against the Security module.
        .testTarget(
            name: "SecurityTests",
            dependencies: ["Security", "kc", "KCTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
