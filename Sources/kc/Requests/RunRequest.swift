import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// What `kc run` was asked, as a plain value: ArgumentParser's `Run` and the hand parser
/// for the common forms (`RunFastPath`) both produce one.
struct RunRequest: Equatable {
    var keychain = KeychainChoice()
    /// --allow-keychain: other keychains a reference may name.
    var allowedKeychains: [String] = []
    var envFiles: [String] = []
    var envPairs: [String] = []
    /// --resolve-env: references in the inherited environment are resolved too.
    var resolveEnv = false
    var noMasking = false
    var mask = false
    var command: [String] = []

    /// Resolves every reference, then runs the command and exits with its status.
    func run() throws {
        // Each variable with whether its value may be resolved: the command line's and the
        // env files' may; the inherited ones only with --resolve-env (issue 15, item 9).
        var environment = ChildEnvironment.inherited()
        var authored = [Bool](repeating: resolveEnv, count: environment.count)
        func set(_ name: String, _ value: String) {
            if let i = environment.firstIndex(where: { $0.0 == name }) {
                environment[i].1 = value
                authored[i] = true
            } else {
                environment.append((name, value))
                authored.append(true)
            }
        }
        for file in envFiles {
            let bytes = try Readers.readFile(file, limit: 1 << 20, what: "the env file")
            let text = try bytes.withUnsafeBytes { b -> String in
                guard let s = String(validating: b, as: UTF8.self) else { throw KeychainError(errSecParam, "\(file) is not UTF-8 text") }
                return s
            }
            for (name, value) in try DotEnv.parse(text, file: file) { set(name, value) }
        }
        for pair in envPairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            set(String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        let unresolved = environment.indices.filter { !authored[$0] && SecretReference.isReference(environment[$0].1) }
        if !unresolved.isEmpty {
            Report.note(
                "not resolving the kc:// reference\(unresolved.count == 1 ? "" : "s") inherited in "
                    + unresolved.map { environment[$0].0 }.joined(separator: ", ")
                    + ": pass it with --env NAME=kc://… or --env-file, or give --resolve-env")
        }
        // Resolve every reference before anything starts.
        let referenced = environment.indices.filter { authored[$0] && SecretReference.isReference(environment[$0].1) }
        let references = try referenced.map { i -> SecretReference in
            do { return try SecretReference(environment[i].1) } catch let e as KeychainError {
                throw KeychainError(e.status, "\(environment[i].0): \(e.message)", hint: e.hint)
            }
        }
        var secrets = try ReferenceResolver.resolve(references, base: keychain, allowed: allowedKeychains) { n in
            "\(environment[referenced[n]].0) (\(environment[referenced[n]].1))"
        }
        for (n, i) in referenced.enumerated() where secrets[n].bytes.contains(0) {
            throw KeychainError(errSecParam, "\(environment[i].0): its secret has a NUL byte, which an environment variable cannot hold")
        }
        let maskOut = !noMasking && !secrets.isEmpty && (mask || isatty(1) == 0)
        let maskErr = !noMasking && !secrets.isEmpty && (mask || isatty(2) == 0)
        var maskable: [[UInt8]] = []
        for (n, i) in referenced.enumerated() where maskOut || maskErr {
            if secrets[n].bytes.count < 4 {
                Report.note("warning: the secret of \(environment[i].0) is shorter than 4 bytes; it is not masked")
            } else {
                maskable.append(secrets[n].bytes)
            }
        }
        // The child's environment as NAME=VALUE bytes; then the secrets are let go (wiped,
        // unless masking still needs them), before the child runs for however long.
        var secretOf = [Int](repeating: -1, count: environment.count)
        for (n, i) in referenced.enumerated() { secretOf[i] = n }
        var entries: [[UInt8]] = environment.indices.map { i in
            Array(environment[i].0.utf8) + [UInt8(ascii: "=")] + (secretOf[i] >= 0 ? secrets[secretOf[i]].bytes : Array(environment[i].1.utf8))
        }
        secrets.removeAll()
        let status = try ChildProcess.run(command, environment: &entries, mask: (maskOut, maskErr), maskable: maskable)
        Startup.exit(status)
    }
}
