import Foundation
import KCTestSupport
import KeychainCore

/// Runs the built kc-tpm (beside the kc the tests run) as kc will: the secret or blob on
/// stdin, the PIN on descriptor 3 from a file in the test's own folder (Spawn hands a child
/// its three standard streams only, so a shell opens it), with a deadline.
enum KCTPM {
    static var path: String { URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().appendingPathComponent("kc-tpm").path }

    static func run(_ arguments: [String], tcti: String, stdin: [UInt8], pin: String? = nil, timeout: Double = 60) throws -> KCBinary.Output {
        let environment = ["PATH": "/usr/bin:/bin", "KC_TPM_TCTI": tcti]
        guard let pin else { return try Spawn.run([path] + arguments, environment: environment, stdin: Data(stdin), timeout: timeout) }
        let folder = NSTemporaryDirectory() + "/kc-tpm-pin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(pin.utf8).write(to: URL(fileURLWithPath: folder + "/pin"))
        return try Spawn.run(
            ["/bin/sh", "-c", "exec \"$0\" \"$@\" --pin-fd 3 3<\"$KC_TEST_PIN_FILE\"", path] + arguments,
            environment: environment.merging(["KC_TEST_PIN_FILE": folder + "/pin"]) { a, _ in a }, stdin: Data(stdin), timeout: timeout)
    }

    /// 32 random bytes.
    static func secret() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }
}
