import Testing
import KeychainCore
import KCTestSupport

@Suite struct VersionTests {
    @Test func versionNamesKcLibsodiumAndSQLite() throws {
        let out = try KCBinary.run(["--version"])
        #expect(out.status == 0)
        #expect(out.stdout == "kc 0.1.0 (libsodium \(LibraryVersions.sodium), SQLite \(LibraryVersions.sqlite))\n")
        #expect(out.stderr == "")
        #expect(LibraryVersions.sodium.hasPrefix("1."))
        #expect(LibraryVersions.sqlite.hasPrefix("3."))
    }
}
