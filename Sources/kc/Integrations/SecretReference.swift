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
///     kc://SERVICE/ACCOUNT[?class=internet&keychain=NAME]
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

    static let scheme = "kc://"

    /// Parses a reference. - Throws: errSecParam (exit 206) naming the reference and what is wrong.
    init(_ text: String) throws {
        func bad(_ why: String) -> KeychainError {
            KeychainError(errSecParam, "malformed kc reference \(JSON.string(text)): \(why)",
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

    /// The SecItemCopyMatching query for its secret.
    var query: [String: Any] {
        var q: [String: Any] = [kSecClass: internet ? kSecClassInternetPassword : kSecClassGenericPassword,
                                internet ? kSecAttrServer : kSecAttrService: service, kSecReturnData: true]
        if let account { q[kSecAttrAccount] = account }
        return q
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

/// Resolves references, one agent round trip per keychain, all before anything runs.
enum ReferenceResolver {
    /// The secret of each reference, in order.
    ///
    /// A reference whose `keychain=` names another keychain than `base` is refused unless
    /// that keychain is in `allowed` (`--allow-keychain`): a reference cannot pull from a
    /// keychain the command line did not name (DESIGN.md, amendments of 2026-11-23).
    /// - Throws: the first failure, naming `label(i)`; errSecParam (exit 206) for a keychain
    ///   not named on the command line, before any keychain is opened.
    static func resolve(_ references: [SecretReference], base: KeychainChoice, allowed: [String] = [],
                        label: (Int) -> String) throws -> [Secret] {
        try checkKeychains(references, base: base, allowed: allowed, label: label)
        var secrets = [Secret?](repeating: nil, count: references.count)
        var byKeychain: [String: [Int]] = [:]
        var order: [String] = []
        for (i, r) in references.enumerated() {
            let path = r.choice(base).path
            if byKeychain[path] == nil { order.append(path) }
            byKeychain[path, default: []].append(i)
        }
        for path in order {
            let indexes = byKeychain[path] ?? []
            guard let first = indexes.first else { continue }
            let handle = try Session.open(references[first].choice(base))
            let results = try handle.copyMany(indexes.map { references[$0].query })
            for (n, i) in indexes.enumerated() {
                switch results[n] {
                case .success(let value):
                    guard let data = value as? Data else {
                        throw KeychainError(errSecItemNotFound, "\(label(i)): the item has no secret")
                    }
                    secrets[i] = Secret(Array(data))
                case .failure(let error):
                    if error.status == errSecItemNotFound {
                        throw KeychainError(errSecItemNotFound, "\(label(i)): no item matches it in \(handle.path)",
                                            hint: "list what is there with `kc find --all`")
                    }
                    throw KeychainError(error.status, "\(label(i)): \(error.message)", hint: error.hint)
                }
            }
        }
        return secrets.compactMap { $0 }
    }

    /// Refuses a reference that names a keychain other than the command's own and those
    /// given with `--allow-keychain`. Keychains are compared by real path (a name, a
    /// relative path and a path through a symbolic link to the same folder are one keychain).
    static func checkKeychains(_ references: [SecretReference], base: KeychainChoice, allowed: [String],
                               label: (Int) -> String) throws {
        guard references.contains(where: { $0.keychain != nil }) else { return }
        let own = KeychainLocation.realPath(base.path)
        let permitted = [own] + allowed.map { KeychainLocation.realPath(KeychainLocation.resolve($0)) }
        for (i, reference) in references.enumerated() {
            guard let named = reference.keychain else { continue }
            let path = KeychainLocation.realPath(reference.choice(base).path)
            if permitted.contains(path) { continue }
            throw KeychainError(errSecParam, "\(label(i)): it names the keychain \(named), but this command was given \(own)",
                                hint: "a reference may name only a keychain the command line names; if it is meant, add --allow-keychain \(named)")
        }
    }
}

/// A resolved secret's bytes, wiped when the last reference goes.
final class Secret {
    private(set) var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    deinit {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } }
    }
}
