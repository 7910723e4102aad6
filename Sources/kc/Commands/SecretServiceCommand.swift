import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc secret-service`: execs the Secret Service provider, `kc-secret-service`, installed
/// beside kc. The provider is its own program so that kc links no D-Bus library and starts
/// as fast as before (docs/secret-service.md).
struct SecretServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "Serve kc's keychains as the freedesktop.org Secret Service (libsecret, keyring, ...).",
        discussion: """
            Examples:
              eval "$(kc secret-service --start)"   # a bus if needed, the provider
              secret-tool lookup service github.com account alice
              kc secret-service --replace           # foreground; takes the name over

            A collection is a kc keychain (the alias "default" is the default
            keychain); it is locked exactly when the keychain is. kc secret-service
            runs kc-secret-service, installed beside kc. docs/secret-service.md has
            the details.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "Options for kc-secret-service (--start, --replace, --address, --prompt-timeout).")
    var options: [String] = []

    /// The provider's path: beside this kc.
    static var providerPath: String { AgentClient.besideOwnExecutable("kc-secret-service") }

    func run() throws {
        // The options pass through to the provider, --help too: show kc's own help (what
        // the man page has) instead of the provider's usage.
        if options == ["--help"] || options == ["-h"] {
            Report.out(Self.helpMessage() + "\n")
            return
        }
        let path = Self.providerPath
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + options).map { strdup($0) } + [nil]
        execv(path, &argv)
        let reason = String(cString: strerror(errno))
        for p in argv { free(p) }
        throw KeychainError(
            errSecIO, "cannot run \(path): \(reason)",
            hint: "install it with `make install`, which puts kc-secret-service beside kc")
    }
}
