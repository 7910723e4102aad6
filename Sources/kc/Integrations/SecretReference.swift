import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A secret named in one string (`docs/integrations.md`, "References"):
///
///     kc://SERVICE/ACCOUNT[?class=internet&keychain=NAME&totp]
///
/// `totp` asks for the item's current one-time code instead of its secret (`OneTimeCode`:
/// the seed is looked for under `otpauth/SERVICE` first, then SERVICE).
///
/// SERVICE is the service of a generic password, or the server with `class=internet`;
/// ACCOUNT may be empty (`kc://deploy-key/`) and may be left out with its slash
/// (`kc://deploy-key`: any account, the first match as `kc find -w`). `%XX` escapes a `/`,
/// `?`, `&`, `=` or `%` inside a name.
struct SecretReference: Equatable {
    var service: String
    var account: String?
    var internet = false
    var keychain: String?
    /// `?totp`: the current one-time code of the seed it names, not the secret itself.
    var totp = false

    static let scheme = "kc://"

    /// Parses a reference. - Throws: errSecParam (exit 206) naming the reference and what is wrong.
    init(_ text: String) throws {
        func bad(_ why: String) -> KeychainError {
            KeychainError(
                errSecParam, "malformed kc reference \(JSON.string(text)): \(why)",
                hint: "write kc://SERVICE/ACCOUNT, with ?class=internet for a server (docs/integrations.md)")
        }
        guard text.hasPrefix(Self.scheme) else { throw bad("it does not start with kc://") }
        var rest = Substring(text.dropFirst(Self.scheme.count))
        var query: Substring = ""
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        let parts = rest.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw bad("more than SERVICE/ACCOUNT (escape a / in a name as %2F)") }
        guard let service = WebAddress.percentDecoded(parts[0]), !service.isEmpty else { throw bad("no service") }
        self.service = service
        if parts.count == 2 {
            guard let account = WebAddress.percentDecoded(parts[1]) else { throw bad("the account is not valid UTF-8") }
            self.account = account
        }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            if pair == "totp" {
                totp = true
                continue
            }
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, let value = WebAddress.percentDecoded(kv[1]) else { throw bad("\"\(pair)\" is not NAME=VALUE") }
            switch kv[0] {
            case "class":
                guard value == "internet" || value == "generic" else { throw bad("class is generic or internet") }
                internet = value == "internet"
            case "keychain":
                guard !value.isEmpty else { throw bad("keychain is empty") }
                keychain = value
            default:
                throw bad("unknown parameter \"\(kv[0])\"")
            }
        }
    }

    /// The SecItemCopyMatching queries that answer it: its secret, or with `totp` the
    /// searches for its seed (`OneTimeCode.candidates`).
    var queries: [[String: Any]] {
        guard totp else { return [query] }
        var q = query
        q[kSecReturnData] = nil
        return OneTimeCode.candidates(q)
    }

    /// The SecItemCopyMatching query for its secret.
    var query: [String: Any] {
        var q: [String: Any] = [
            kSecClass: internet ? kSecClassInternetPassword : kSecClassGenericPassword,
            internet ? kSecAttrServer : kSecAttrService: service, kSecReturnData: true
        ]
        if let account { q[kSecAttrAccount] = account }
        return q
    }

    /// The `kc find` arguments naming what it names (for a hint), quoted for a shell.
    var findArguments: [String] {
        var fields = ItemFields()
        fields.itemClass = internet ? .internet : .generic
        fields.service = service
        fields.account = account
        return fields.arguments
    }

    /// The keychain it names: its own `keychain=`, else the command's choice.
    func choice(_ base: KeychainChoice) -> KeychainChoice {
        var c = base
        if let keychain { c.keychain = keychain }
        return c
    }

    /// Whether a string is meant as a reference (and so must parse as one).
    static func isReference(_ s: String) -> Bool { s.hasPrefix(scheme) }
}
