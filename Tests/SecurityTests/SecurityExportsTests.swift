import Foundation
import Security
import Testing

/// The Security module re-exports KeychainCore's Apple names one by one (Exports.swift), so
/// that KeychainCore's own types (ItemClass, Keychain, KeychainError…) do not collide with
/// a wrapper's types of the same names; a constant added to KeychainCore must be added there.
@Suite struct SecurityExportsTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// The names declared `public let` in a source file.
    private static func publicConstants(_ path: String) throws -> Set<String> {
        let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: "^public let (\\w+)", options: .anchorsMatchLines)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    @Test func everyPublicConstantOfKeychainCoreIsReExported() throws {
        let constants = try Self.publicConstants("Sources/KeychainCore/Constants.swift")
            .union(Self.publicConstants("Sources/KeychainCore/Status.swift"))
        #expect(constants.count > 100)
        let exports = try String(contentsOfFile: Self.root + "/Sources/Security/Exports.swift", encoding: .utf8)
        let missing = constants.filter { !exports.contains("@_exported import var KeychainCore.\($0)\n") }
        #expect(missing.isEmpty, "add to Sources/Security/Exports.swift: \(missing.sorted())")
    }
}
