import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// tpm2-tss is linked into kc-tpm only: the kc that scripts call loads no TPM stack
/// (docs/design.md, "Targets and layers"; docs/tpm.md).
@Suite struct TPMLinkTests {
    /// What `ldd` lists for `binary` (a static binary lists nothing: "not a dynamic executable").
    static func libraries(_ binary: String) throws -> String {
        let out = try Spawn.run(["/usr/bin/ldd", binary], environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"], timeout: 30)
        return out.stdout + out.stderr
    }

    @Test func kcLinksNoTPMStack() throws {
        #expect(FileManager.default.isExecutableFile(atPath: KCBinary.path))
        let listed = try Self.libraries(KCBinary.path)
        #expect(!listed.contains("libtss2"), "\(listed)")
        #expect(listed.contains("libc.so") || listed.contains("not a dynamic executable"), "ldd answered: \(listed)")
    }

    @Test func kcTPMLinksESAPI() throws {
        #expect(FileManager.default.isExecutableFile(atPath: KCTPM.path))
        let listed = try Self.libraries(KCTPM.path)
        #expect(listed.contains("libtss2-esys.so") && listed.contains("libtss2-tctildr.so"), "\(listed)")
    }
}
