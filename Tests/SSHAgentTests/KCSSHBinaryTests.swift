import Foundation
import KCTestSupport
import Testing

/// kc-ssh is built beside kc and answers as a kc program: usage on stderr, exit 2.
@Suite struct KCSSHBinaryTests {
    static var path: String { URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().appendingPathComponent("kc-ssh").path }

    @Test func noArgumentsIsUsage() throws {
        let out = try Spawn.run([Self.path], environment: ["PATH": "/usr/bin:/bin"], timeout: 10)
        #expect(out.status == 2)
        #expect(out.stderr.contains("usage: kc ssh-agent"))
        #expect(out.stdout.isEmpty)
    }
}
