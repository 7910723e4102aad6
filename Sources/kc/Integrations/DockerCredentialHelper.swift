import KeychainCore
import KeychainClient
import KeychainFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `docker-credential-kc` (or `kc docker-credential`): the docker-credential-helpers
/// protocol (`"credsStore": "kc"` in ~/.docker/config.json). Credentials are internet
/// passwords labelled `Docker Credentials`, as Docker's macOS helper stores them; `list`,
/// `get` and `erase` see only those. Errors go to stdout with exit 1, as Docker expects.
enum DockerCredentialHelper {
    static let label = "Docker Credentials"
    static let notFound = "credentials not found in native keychain"

    struct Failure: Error { let message: String }

    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        do {
            let (choice, rest) = try HelperInput.options(arguments)
            guard let operation = rest.first else { throw Failure(message: "usage: docker-credential-kc store|get|erase|list|version") }
            if operation == "version" {
                Report.out("docker-credential-kc (kc) \(KC.version)\n")
                return 0
            }
            guard ["store", "get", "erase", "list"].contains(operation) else {
                throw Failure(message: "unknown credential action `\(operation)`")
            }
            var input = try HelperInput.readStdin(stopAtEmptyLine: false)
            defer { for i in input.indices { input[i] = 0 } }
            let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
            switch operation {
            case "store": try store(input, keychain)
            case "get": try get(input, keychain)
            case "erase": try erase(input, keychain)
            default: try list(keychain)
            }
            return 0
        } catch let failure as Failure {
            Report.line(failure.message, to: 1)
            return 1
        } catch let error as KeychainError {
            Report.line("kc: \(error.message)\(error.hint.map { " (\($0))" } ?? "")", to: 1)
            return 1
        } catch {
            Report.line("kc: \(error)", to: 1)
            return 1
        }
    }

    /// The query attributes of a server URL (`https://` when it has no scheme).
    static func query(_ serverURL: String) throws -> [String: Any] {
        let text = serverURL.trimmingSpaces
        guard !text.isEmpty else { throw Failure(message: "no credentials server URL") }
        guard let address = WebAddress(text.contains("://") ? text : "https://" + text), let code = address.protocolCode else {
            throw Failure(message: "kc: cannot read the server URL \(text)")
        }
        // Exact: a registry on another port or path is another registry.
        return [
            kSecClass: kSecClassInternetPassword, kSecAttrServer: address.host, kSecAttrProtocol: code,
            kSecAttrPath: address.path, kSecAttrPort: address.port ?? 0, kSecAttrLabel: label
        ]
    }

    static func store(_ input: [UInt8], _ keychain: KeychainSession) throws {
        let document = try input.withUnsafeBytes { try JSONValue.parse($0) }
        let server = document["ServerURL"]?.text ?? ""
        guard !server.isEmpty else { throw Failure(message: "no credentials server URL") }
        let username = document["Username"]?.text ?? ""
        guard !username.isEmpty else { throw Failure(message: "no credentials username") }
        guard GitCredentialHelper.isLineSafe(username.utf8) else { throw Failure(message: "kc: the user name has a line break or a NUL") }
        let secret = Data((document["Secret"]?.text ?? "").utf8)
        var q = try query(server)
        q[kSecAttrAccount] = username
        q[kSecAttrAuthenticationType] = kSecAttrAuthenticationTypeDefault
        var add = q
        add[kSecValueData] = secret
        do {
            _ = try keychain.add(add)
        } catch let error as KeychainError where error.status == errSecDuplicateItem {
            // The item with this exact primary key (a git credential for the same registry
            // and user is the same credential): it becomes Docker's.
            var exact = q
            exact.removeValue(forKey: kSecAttrLabel)
            exact[kSecAttrSecurityDomain] = ""
            exact[kSecAttrAccessGroup] = ""
            try keychain.update(exact, [kSecValueData: secret, kSecAttrLabel: label])
        }
    }

    static func serverURL(_ input: [UInt8]) -> String {
        String(decoding: input, as: UTF8.self).trimmingSpaces
    }

    static func get(_ input: [UInt8], _ keychain: KeychainSession) throws {
        let server = serverURL(input)
        var q = try query(server)
        q[kSecReturnAttributes] = true
        q[kSecReturnData] = true
        q[kSecMatchLimit] = kSecMatchLimitOne
        let found: Any?
        do { found = try keychain.copyMatching(q) } catch let e as KeychainError where e.status == errSecItemNotFound {
            throw Failure(message: notFound)
        }
        guard let item = found as? [String: Any] else { throw Failure(message: notFound) }
        let secret = String(decoding: item[kSecValueData] as? Data ?? Data(), as: UTF8.self)
        Report.out(
            JSON.object([
                ("ServerURL", JSON.string(server)), ("Username", JSON.string(item[kSecAttrAccount] as? String ?? "")),
                ("Secret", JSON.string(secret))
            ]) + "\n")
    }

    static func erase(_ input: [UInt8], _ keychain: KeychainSession) throws {
        do {
            try keychain.delete(try query(serverURL(input)))
        } catch let e as KeychainError where e.status == errSecItemNotFound {
            throw Failure(message: notFound)
        }
    }

    static func list(_ keychain: KeychainSession) throws {
        let q: [String: Any] = [
            kSecClass: kSecClassInternetPassword, kSecAttrLabel: label, kSecMatchLimit: kSecMatchLimitAll,
            kSecReturnAttributes: true
        ]
        var pairs: [(String, String)] = []
        do {
            for item in try keychain.copyMatching(q) as? [[String: Any]] ?? [] {
                pairs.append((WebAddress.url(ofInternetPassword: item), JSON.string(item[kSecAttrAccount] as? String ?? "")))
            }
        } catch let e as KeychainError where e.status == errSecItemNotFound {}
        Report.out(JSON.object(pairs) + "\n")
    }
}
