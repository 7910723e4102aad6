#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc-vault-token-helper`: Vault's (and OpenBao's) external token helper
/// (`token_helper = "…"` in `~/.vault`, `~/.bao`). Vault runs `$SHELL -c "PATH OP"` with
/// its own environment: `get` prints the token (nothing, exit 0, when there is none),
/// `store` reads it on stdin, `erase` removes it. One generic password per server:
/// service `vault:ADDRESS` (the normalised `VAULT_ADDR`), account `token`.
enum VaultTokenHelper {
    static let program = "kc-vault-token-helper"
    static let account = "token"
    static let label = "Vault token"
    /// Vault's own default server, when neither `VAULT_ADDR` nor `BAO_ADDR` is set.
    static let defaultAddress = "https://127.0.0.1:8200"

    /// Vault's DefaultTokenHelper runs the helper with `VAULT_ADDR` as its only variable
    /// (OpenBao's with `BAO_ADDR` too): no HOME, no XDG_RUNTIME_DIR. Without HOME, the home
    /// is the password database's; without KC_AGENT_DIR or XDG_RUNTIME_DIR, the agent is
    /// looked for in `/run/user/UID/kc` when that folder is there and ours (a login
    /// session's agent). Called before the configuration file is read.
    static func recoverEnvironment() {
        if (Environment.get("HOME") ?? "").isEmpty, let entry = getpwuid(geteuid()), let home = entry.pointee.pw_dir {
            setenv("HOME", home, 1)
        }
        if getenv("KC_AGENT_DIR") == nil && getenv("XDG_RUNTIME_DIR") == nil {
            let runtime = "/run/user/\(geteuid())"
            var info = stat()
            if lstat(runtime + "/kc", &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() {
                setenv("XDG_RUNTIME_DIR", runtime, 1)
            }
        }
    }

    /// The helper's own usage: what Vault runs it with. On stdout for `--help` (exit 0), on
    /// stderr with exit 2 when the operation is missing or unknown.
    static let usage = """
        usage: \(program) [-k KEYCHAIN] get|store|erase

        Vault's and OpenBao's token helper (token_helper = "/usr/local/bin/\(program)"
        in ~/.vault or ~/.bao). Vault runs it with one operation, for the server
        VAULT_ADDR (else BAO_ADDR, else https://127.0.0.1:8200) names:
          get    print the token on stdout, as stored (nothing when there is none)
          store  keep the token read on stdin
          erase  remove the token
        Tokens are generic passwords, service vault:ADDRESS, account token.
        Exit 2 for a missing or unknown operation; docs/integrations.md, "Vault and OpenBao".

        """

    /// Runs one operation; returns the exit status (nonzero with one line on stderr).
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        do {
            let (choice, rest) = try HelperInput.options(arguments)
            if rest == ["--help"] || rest == ["-h"] {
                Report.out(usage)
                return 0
            }
            guard rest.count == 1, let operation = rest.first, ["get", "store", "erase"].contains(operation) else {
                Report.err(usage)
                return 2
            }
            let service = "vault:" + (try address())
            var token: [UInt8] = []
            defer { for i in token.indices { token[i] = 0 } }
            if operation == "store" {
                token = try HelperInput.readStdin(limit: 64 << 10, stopAtEmptyLine: false)
                // Vault writes the token alone; a shell's `echo` adds a line break.
                while let last = token.last, last == 0x0A || last == 0x0D { token.removeLast() }
                guard !token.isEmpty else { throw KeychainError(errSecParam, "no token on stdin") }
                guard !token.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                    throw KeychainError(errSecParam, "the token has a control character")
                }
            }
            let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
            let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: account]
            switch operation {
            case "get": try get(query, keychain)
            case "store": try store(query, token, keychain)
            default:
                do { _ = try keychain.delete(query) } catch let e as KeychainError where e.status == errSecItemNotFound {}
            }
            return 0
        } catch let error as KeychainError {
            // One line: Vault quotes the helper's stderr in its own error.
            Report.note("\(error.message)\(error.hint.map { " (\(program): \($0))" } ?? "")")
            return exitCode(for: error.status)
        } catch {
            Report.note("\(error)")
            return 1
        }
    }

    /// The server the token belongs to: `VAULT_ADDR`, else `BAO_ADDR` (OpenBao's name),
    /// else Vault's default; normalised. Both set to different servers is refused: the
    /// helper cannot tell which program called it, and a token must never reach the wrong server.
    static func address() throws -> String {
        let vault = Environment.get("VAULT_ADDR").flatMap { $0.isEmpty ? nil : normalised($0) }
        let bao = Environment.get("BAO_ADDR").flatMap { $0.isEmpty ? nil : normalised($0) }
        if let vault, let bao, vault != bao {
            throw KeychainError(errSecParam, "VAULT_ADDR and BAO_ADDR name different servers; unset the one this program does not use")
        }
        return vault ?? bao ?? defaultAddress
    }

    /// An address as a key: spaces around dropped, scheme and host in lower case, the
    /// scheme's default port (https 443, http 80) and trailing slashes dropped. An address
    /// without `://` is kept as it is (Vault cannot use it either).
    static func normalised(_ raw: String) -> String {
        let text = raw.trimmingSpaces
        guard let separator = text.firstRange(of: "://") else { return text }
        let scheme = text[..<separator.lowerBound].lowercased()
        let rest = text[separator.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = String(rest[..<end])
        var tail = String(rest[end...])
        // The host in lower case; user information, if any, as it is.
        if let at = authority.lastIndex(of: "@") {
            authority = String(authority[...at]) + authority[authority.index(after: at)...].lowercased()
        } else {
            authority = authority.lowercased()
        }
        for (s, port) in [("https", ":443"), ("http", ":80")] where scheme == s && authority.hasSuffix(port) {
            authority.removeLast(port.count)
        }
        if authority.hasSuffix(":") { authority.removeLast() }
        while tail.hasSuffix("/") { tail.removeLast() }
        return scheme + "://" + authority + tail
    }

    static func get(_ query: [String: Any], _ keychain: KeychainSession) throws {
        var q = query
        q[kSecReturnData] = true
        q[kSecMatchLimit] = kSecMatchLimitOne
        let found: Any?
        do { found = try keychain.copyMatching(q) } catch let e as KeychainError where e.status == errSecItemNotFound { return }
        guard let data = found as? Data else { return }
        var bytes = [UInt8](data)
        defer { for i in bytes.indices { bytes[i] = 0 } }
        // As it is: Vault sends whatever it reads as the token.
        guard Report.writeAll(1, bytes) else { throw KeychainError(errSecIO, "cannot write the token to stdout") }
    }

    static func store(_ query: [String: Any], _ token: [UInt8], _ keychain: KeychainSession) throws {
        let secret = Data(token)
        var add = query
        add[kSecAttrLabel] = label
        add[kSecValueData] = secret
        do {
            _ = try keychain.add(add)
        } catch let error as KeychainError where error.status == errSecDuplicateItem {
            _ = try keychain.update(query, [kSecValueData: secret])
        }
    }
}
