import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// What `kc run` was asked, as a plain value: ArgumentParser's `Run` and the hand parser
/// for the common forms (`RunRequest.parse`) both produce one.
///
/// The hand parser stays because ArgumentParser's start-up is most of a `kc run`: 4.5 ms
/// against 1.4 ms for `kc run -k K -- /bin/true` (docs/performance.md). The names it knows
/// are one table, `Option`; FastPathDriftTests compares that table, with
/// `leftToArgumentParser`, against the names `Run` declares, and FastPathTests checks that
/// both parsers give the same request.
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

    /// The options and flags of `kc run` that `parse` takes.
    enum Option: CaseIterable {
        case keychain, allowKeychain, env, envFile, resolveEnv, noMasking, mask

        /// The names, as `Run`, `KeychainOptions` and `ReferenceOptions` declare them.
        var spellings: [String] {
            switch self {
            case .keychain: return ["-k", "--keychain"]
            case .allowKeychain: return ["--allow-keychain"]
            case .env: return ["--env"]
            case .envFile: return ["--env-file"]
            case .resolveEnv: return ["--resolve-env"]
            case .noMasking: return ["--no-masking"]
            case .mask: return ["--mask"]
            }
        }

        /// Whether the option takes the next word as its value.
        var takesValue: Bool {
            switch self {
            case .keychain, .allowKeychain, .env, .envFile: return true
            case .resolveEnv, .noMasking, .mask: return false
            }
        }

        /// The option `name` names, from the table.
        static func named(_ name: String) -> Option? {
            for option in allCases where option.spellings.contains(name) { return option }
            return nil
        }
    }

    /// Options of `kc run` that `parse` leaves to ArgumentParser on purpose (a password
    /// source means a prompt or a file read anyway), besides ArgumentParser's own
    /// `-h`/`--help`/`--version`.
    static let leftToArgumentParser = ["--password-stdin", "--password-file"]

    /// The plain forms — `-k K`, `--allow-keychain K`, `--env NAME=VALUE`, `--env-file F`,
    /// `--resolve-env`, `--mask`, `--no-masking`, then `--` and the command — without
    /// ArgumentParser's start-up cost; nil for anything else (help, errors, other spellings),
    /// which ArgumentParser then handles. An option's value is the next word whatever it
    /// looks like, as ArgumentParser's `.unconditional` takes it.
    static func parse(_ arguments: ArraySlice<String>) -> RunRequest? {
        var r = RunRequest()
        var i = arguments.startIndex
        while i < arguments.endIndex {
            let a = arguments[i]
            let next = arguments.index(after: i)
            if a == "--" {
                r.command = Array(arguments[next...])
                guard !r.command.isEmpty, !(r.noMasking && r.mask) else { return nil }
                return r
            }
            guard let option = Option.named(a) else { return nil }
            if option.takesValue {
                guard next < arguments.endIndex, !arguments[next].isEmpty else { return nil }
                let value = arguments[next]
                switch option {
                case .env:
                    guard let eq = value.firstIndex(of: "="), DotEnv.isName(String(value[..<eq])) else { return nil }
                    r.envPairs.append(value)
                case .envFile: r.envFiles.append(value)
                case .allowKeychain: r.allowedKeychains.append(value)
                default:
                    guard r.keychain.keychain == nil else { return nil }
                    r.keychain.keychain = value
                }
                i = next
            } else {
                switch option {
                case .mask: r.mask = true
                case .noMasking: r.noMasking = true
                default: r.resolveEnv = true
                }
            }
            i = arguments.index(after: i)
        }
        return nil
    }

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
            Report.note("not resolving the kc:// reference\(unresolved.count == 1 ? "" : "s") inherited in "
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
