#!/bin/sh
# Builds the popular Swift keychain wrappers from local checkouts, unchanged, against kc's
# Security module, and runs their own XCTest suites against a throwaway keychain
# (docs/apple-compatibility.md, "Wrappers"). Fetches nothing and is not part of CI: their
# code never enters this repository.
#
#   scripts/apple-wrappers.sh DIR    # DIR holds clones named KeychainAccess, keychain-swift,
#                                    # SwiftKeychainWrapper (any of them may be missing)
#
# The scratch package and the keychain live in a temporary folder, removed at the end.
# Swift Package Manager resolves kc's own dependency (swift-argument-parser) as usual.
# KC names the kc binary that creates the keychain (default: .build/debug/kc).
# SwiftKeychainWrapper does not build unchanged (its wipeKeychain passes kSecClass…
# constants as AnyObject); it is left out unless WITH_SWIFTKEYCHAINWRAPPER=1.
set -eu
src=$(cd "${1:?usage: $0 DIR-with-checkouts}" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/kc-wrappers-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

targets=""
add() { # name library-path library-excludes tests-path tests-excludes
    [ -d "$src/$2" ] || { echo "skip $1: no $src/$2"; return; }
    ln -s "$src/$(echo "$2" | cut -d/ -f1)" "$(echo "$2" | cut -d/ -f1)" 2>/dev/null || true
    targets="$targets
        .target(name: \"$1\", dependencies: [security], path: \"$2\", exclude: [$3],
                swiftSettings: [.swiftLanguageMode(.v5)] + implicitSecurity),
        .testTarget(name: \"$1Tests\", dependencies: [\"$1\"], path: \"$4\", exclude: [$5],
                    swiftSettings: [.swiftLanguageMode(.v5)] + implicitSecurity),"
}
add KeychainAccess KeychainAccess/Lib/KeychainAccess '"Info.plist", "KeychainAccess.h"' \
    KeychainAccess/Lib/KeychainAccessTests '"Info.plist", "SharedCredentialTests.swift"'
add KeychainSwift keychain-swift/Sources '"Info.plist", "KeychainSwift.h", "PrivacyInfo.xcprivacy"' \
    keychain-swift/Tests/KeychainSwiftTests '"ClearTests.swift", "Info.plist", "KeychainSwiftTests-Bridging-Header.h", "macOS Tests"'
[ "${WITH_SWIFTKEYCHAINWRAPPER:-0}" = 1 ] && add SwiftKeychainWrapper SwiftKeychainWrapper/SwiftKeychainWrapper '"Info.plist", "SwiftKeychainWrapper.h"' \
    SwiftKeychainWrapper/SwiftKeychainWrapperTests '"Info.plist"'

cat > Package.swift <<SWIFT
// swift-tools-version: 6.0
import PackageDescription
let security: Target.Dependency = .product(name: "Security", package: "$(basename "$repo")")
// Foundation imports Security implicitly on Apple platforms; the wrappers rely on it.
let implicitSecurity: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "Security"])]
let package = Package(name: "Wrappers", dependencies: [.package(path: "$repo")], targets: [$targets
])
SWIFT

swift build --build-tests
export HOME="$work/home" XDG_DATA_HOME="$work/home/data" KC_AGENT_DIR="$work/home/agent"
export KC_KEYCHAIN="$work/home/wrappers.keychain-db" KC_PASSWORD="wrapper tests"
mkdir -m 700 -p "$HOME"
"${KC:-$repo/.build/debug/kc}" create --kdf interactive "$KC_KEYCHAIN"
.build/debug/WrappersPackageTests.xctest 2>&1 | tee tests.log | grep -E "^Test Case .*(passed|failed)|error:" || true
grep -E "Executed [0-9]+ tests" tests.log | tail -1
