import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// `kc run`: a command with secrets in its environment, resolved from kc:// references.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with kc:// references in its environment replaced by their secrets.",
        discussion: """
        Every variable whose value is a kc:// reference (inherited, from --env-file, or from
        --env) holds the secret in CMD's environment. All references are resolved before CMD
        starts, one agent round trip per keychain; if one fails, CMD does not start and the
        error names the variable. CMD runs with its exact arguments, no shell. KC_PASSWORD
        and KC_NEW_PASSWORD never reach it. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and
        SIGUSR2 sent to kc reach CMD; kc exits with CMD's status, 128+N if it died of signal N.
        When stdout or stderr is not a terminal (a CI log), each secret CMD prints there is
        replaced by <concealed by kc>; --no-masking and --mask override.
        Examples:
          kc run --env GITHUB_TOKEN=kc://github.com/ci -- gh release list
          DB_PASSWORD=kc://db/app kc run -- ./migrate --yes
          kc run --env-file .env.kc -- docker compose up
        """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(name: .customLong("env-file"), help: ArgumentHelp("A dotenv file of NAME=VALUE lines (repeatable).", valueName: "file"))
    var envFiles: [String] = []

    @Option(name: .customLong("env"), help: ArgumentHelp("NAME=VALUE, usually NAME=kc://SERVICE/ACCOUNT (repeatable).", valueName: "name=ref"))
    var envPairs: [String] = []

    @Flag(help: "Never mask the command's output.")
    var noMasking = false

    @Flag(help: "Mask the command's output even on a terminal.")
    var mask = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "cmd"))
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the command after --: kc run [options] -- CMD [ARGS...]") }
        if noMasking && mask { throw ValidationError("choose one of --mask and --no-masking") }
        for pair in envPairs where !pair.contains("=") || !DotEnv.isName(String(pair.split(separator: "=", maxSplits: 1)[0])) {
            throw ValidationError("--env takes NAME=VALUE, not \"\(pair)\"")
        }
    }

    func run() throws {
        var environment = Self.currentEnvironment()
        environment.removeAll { $0.0 == "KC_PASSWORD" || $0.0 == "KC_NEW_PASSWORD" }
        func set(_ name: String, _ value: String) {
            if let i = environment.firstIndex(where: { $0.0 == name }) { environment[i].1 = value } else { environment.append((name, value)) }
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
        // Resolve every reference before anything starts.
        let referenced = environment.indices.filter { SecretReference.isReference(environment[$0].1) }
        let references = try referenced.map { i -> SecretReference in
            do { return try SecretReference(environment[i].1) } catch let e as KeychainError {
                throw KeychainError(e.status, "\(environment[i].0): \(e.message)", hint: e.hint)
            }
        }
        let secrets = try ReferenceResolver.resolve(references, base: keychain.choice) { n in
            "\(environment[referenced[n]].0) (\(environment[referenced[n]].1))"
        }
        for (n, i) in referenced.enumerated() where secrets[n].bytes.contains(0) {
            throw KeychainError(errSecParam, "\(environment[i].0): its secret has a NUL byte, which an environment variable cannot hold")
        }
        let maskOut = !noMasking && !secrets.isEmpty && (mask || isatty(1) == 0)
        let maskErr = !noMasking && !secrets.isEmpty && (mask || isatty(2) == 0)
        var maskable: [[UInt8]] = []
        for (n, i) in referenced.enumerated() {
            if secrets[n].bytes.count < 4 {
                if maskOut || maskErr { Report.note("warning: the secret of \(environment[i].0) is shorter than 4 bytes; it is not masked") }
            } else {
                maskable.append(secrets[n].bytes)
            }
        }
        let status = try ChildProcess.run(command, environment: environment, secrets: Dictionary(uniqueKeysWithValues: zip(referenced, secrets.map(\.bytes))),
                                          mask: (maskOut, maskErr), maskable: maskable)
        Startup.exit(status)
    }

    /// This process's environment as (name, value) pairs, in order.
    static func currentEnvironment() -> [(String, String)] {
        var out: [(String, String)] = []
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { out.append((String(s[..<eq]), String(s[s.index(after: eq)...]))) }
            p += 1
        }
        return out
    }
}
