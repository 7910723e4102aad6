import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// libpq is linked into kc-team only: the kc that scripts call loads no PostgreSQL client
/// (`docs/design.md`, "The PostgreSQL client").
@Suite struct LinkTests {
    /// What `ldd` lists for `binary` (a static binary lists nothing: "not a dynamic executable").
    static func libraries(_ binary: String) throws -> String {
        let out = try Spawn.run(["/usr/bin/ldd", binary], environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"], timeout: 30)
        return out.stdout + out.stderr
    }

    @Test func kcLinksNoLibpq() throws {
        #expect(FileManager.default.isExecutableFile(atPath: KCBinary.path))
        let listed = try Self.libraries(KCBinary.path)
        #expect(!listed.contains("libpq"), "\(listed)")
        #expect(listed.contains("libc.so") || listed.contains("not a dynamic executable"), "ldd answered: \(listed)")
    }

    @Test func kcTeamLinksLibpq() throws {
        let team = URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().appendingPathComponent("kc-team").path
        #expect(FileManager.default.isExecutableFile(atPath: team))
        let listed = try Self.libraries(team)
        #expect(listed.contains("libpq.so"), "\(listed)")
    }
}
