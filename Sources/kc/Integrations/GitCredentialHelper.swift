#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import KeychainCore
import KeychainClient
import KeychainFormats
#if canImport(Glibc)
import Glibc
#endif

/// `git-credential-kc` (or `kc git-credential`): git's credential helper protocol
/// (git-credential(1), gitcredentials(7)) on kc internet passwords, stored the way git's
/// macOS helper stores them in Apple's keychain (`docs/integrations.md`):
/// server = host (`:port` split off into port), port, path only when git sends one,
/// account = username, protocol as Apple's code (`htps`…), authentication type default.
/// The secret is the password, followed by `\npassword_expiry_utc=…` and
/// `\noauth_refresh_token=…` lines when git gave them.
enum GitCredentialHelper {
    /// What git sent: a credential description.
    struct Request {
        var protocolCode: String?
        var protocolKnown = true
        var host: String?
        var port: Int?
        var path: String?
        var username: String?
        var password: [UInt8]?
        var expiry: [UInt8]?
        var refreshToken: [UInt8]?
        var capabilities: [String] = []
        var states: [String] = []
        var ephemeral = false

        /// Parses `key=value` lines; lines and keys it does not know are ignored.
        init(_ bytes: [UInt8]) {
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
                guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = String(decoding: line[line.startIndex..<eq], as: UTF8.self)
                let raw = Array(line[(eq + 1)...])
                let value = String(decoding: raw, as: UTF8.self)
                switch key {
                case "protocol":
                    protocolCode = FourCC.protocols[value.lowercased()]
                    protocolKnown = protocolCode != nil
                case "host":
                    if let colon = value.lastIndex(of: ":"), let p = Int(value[value.index(after: colon)...]), (0...65535).contains(p) {
                        host = String(value[..<colon])
                        port = p
                    } else {
                        host = value
                    }
                case "path": path = value
                case "username": username = value
                case "password": password = raw
                case "password_expiry_utc": expiry = raw
                case "oauth_refresh_token": refreshToken = raw
                case "capability[]": capabilities.append(value)
                case "state[]": states.append(value)
                case "ephemeral": ephemeral = value == "true" || value == "1"
                default: break
                }
            }
        }

        /// The query of the items this description names: attributes git did not send match anything.
        var query: [String: Any]? {
            guard let protocolCode, let host, !host.isEmpty else { return nil }
            var q: [String: Any] = [
                kSecClass: kSecClassInternetPassword, kSecAttrServer: host, kSecAttrProtocol: protocolCode,
                kSecAttrAuthenticationType: kSecAttrAuthenticationTypeDefault
            ]
            if let port { q[kSecAttrPort] = port }
            if let path { q[kSecAttrPath] = path }
            if let username { q[kSecAttrAccount] = username }
            return q
        }

        mutating func wipe() {
            for i in (password ?? []).indices { password![i] = 0 }
            for i in (refreshToken ?? []).indices { refreshToken![i] = 0 }
        }
    }

    static let statePrefix = "kc:seen="

    /// Runs one operation; returns the exit status.
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        do {
            let (choice, rest) = try HelperInput.options(arguments)
            guard let operation = rest.first else {
                Report.err("usage: git-credential-kc [-k KEYCHAIN] get|store|erase\n")
                return 2
            }
            guard ["get", "store", "erase"].contains(operation) else { return 0 }   // unknown: ignored
            var input = try HelperInput.readStdin(stopAtEmptyLine: true)
            defer { for i in input.indices { input[i] = 0 } }
            var request = Request(input)
            defer { request.wipe() }
            guard request.protocolKnown, let query = request.query else { return 0 }
            let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
            switch operation {
            case "get": try get(request, query, keychain)
            case "store": try store(request, query, keychain)
            default: try erase(request, query, keychain)
            }
            return 0
        } catch let error as KeychainError {
            switch error.status {
            case errSecInteractionNotAllowed, errSecNoSuchKeychain, errSecAuthFailed, errSecRestrictedAPI:
                // git falls back to its own prompt; one line says why.
                Report.note("\(error.message) (git-credential-kc: \(error.hint ?? "run kc unlock"))")
                return 0
            default:
                Report.note(error.message)
                return exitCode(for: error.status)
            }
        } catch {
            Report.note("\(error)")
            return 1
        }
    }

    /// Splits stored data into the password and git's extra `key=value` lines.
    static func split(_ data: [UInt8]) -> (password: ArraySlice<UInt8>, extra: [(String, ArraySlice<UInt8>)]) {
        let lines = data.split(separator: 0x0A, maxSplits: Int.max, omittingEmptySubsequences: false)
        var extra: [(String, ArraySlice<UInt8>)] = []
        for line in lines.dropFirst() {
            guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: line[line.startIndex..<eq], as: UTF8.self)
            if key == "password_expiry_utc" || key == "oauth_refresh_token" { extra.append((key, line[(eq + 1)...])) }
        }
        return (lines.first ?? [], extra)
    }

    /// The `state[]` of a credential get returned: which item, in which version (its
    /// persistent reference and modification time). Nothing derived from the password: git
    /// prints it and hands it to other helpers.
    static func state(_ item: [String: Any]) -> String? {
        guard let ref = item[kSecValuePersistentRef] as? Data, let modified = item[kSecAttrModificationDate] as? Date else { return nil }
        return statePrefix + ItemPrinter.hex(Array(ref)) + "." + String(modified.timeIntervalSinceReferenceDate.bitPattern, radix: 16)
    }

    /// Whether bytes can go on a line of git's protocol: no line end, no NUL.
    static func isLineSafe<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        !bytes.contains(0x0A) && !bytes.contains(0x0D) && !bytes.contains(0)
    }

    static func get(_ request: Request, _ query: [String: Any], _ keychain: KeychainSession) throws {
        var q = query
        q[kSecMatchLimit] = kSecMatchLimitAll
        q[kSecReturnAttributes] = true
        q[kSecReturnData] = true
        q[kSecReturnPersistentRef] = true
        let found: Any?
        do { found = try keychain.copyMatching(q) } catch let e as KeychainError where e.status == errSecItemNotFound { return }
        let now = Int(Date().timeIntervalSince1970)
        for item in found as? [[String: Any]] ?? [] {
            var data = Array(item[kSecValueData] as? Data ?? Data())
            defer { for i in data.indices { data[i] = 0 } }
            let (password, extra) = split(data)
            if let expiry = extra.first(where: { $0.0 == "password_expiry_utc" }),
                let when = Int(String(decoding: expiry.1, as: UTF8.self)), when <= now
            {
                continue
            }   // expired: not returned
            let account = item[kSecAttrAccount] as? String ?? ""
            // An item whose values would add lines to git's protocol (a crafted import or
            // Docker store) is never written to git, which would take them as other
            // attributes (`host=`, `url=`…): one line on stderr, nothing on stdout, and git
            // goes on to its next helper or prompt (issue 15, item 11).
            guard isLineSafe(account.utf8), isLineSafe(password), extra.allSatisfy({ isLineSafe($0.1) }) else {
                let server = item[kSecAttrServer] as? String ?? request.host ?? ""
                Report.note(
                    "the item for \(server) (account \(JSON.string(account))) has a line break or a NUL in its user name or password; not given to git (fix it with kc update)"
                )
                return
            }
            var out: [UInt8] = []
            defer { for i in out.indices { out[i] = 0 } }
            let withState = request.capabilities.contains("state")
            if withState { out += Array("capability[]=state\n".utf8) }
            if request.username == nil { out += Array("username=\(account)\n".utf8) }
            out += Array("password=".utf8) + password + [0x0A]
            for (key, value) in extra { out += Array("\(key)=".utf8) + value + [0x0A] }
            if withState, let state = state(item) { out += Array("state[]=\(state)\n".utf8) }
            Report.writeAll(1, out)
            return
        }
    }

    static func store(_ request: Request, _ query: [String: Any], _ keychain: KeychainSession) throws {
        // Only complete credentials, never an ephemeral one.
        guard let username = request.username, var data = request.password, !request.ephemeral else { return }
        defer { for i in data.indices { data[i] = 0 } }
        if let expiry = request.expiry { data += Array("\npassword_expiry_utc=".utf8) + expiry }
        if let token = request.refreshToken { data += Array("\noauth_refresh_token=".utf8) + token }
        // The very item get returned, unchanged since, with this password: nothing to write.
        if let seen = request.states.first(where: { $0.hasPrefix(statePrefix) }), try unchanged(seen, data: data, username: username, keychain) {
            return
        }
        var add = query
        add[kSecValueData] = Data(data)
        do {
            _ = try keychain.add(add)
        } catch let error as KeychainError where error.status == errSecDuplicateItem {
            // Replace that one item: its whole primary key, absent attributes at their defaults
            // (a query without port or path would match every port and path).
            var exact = query
            exact[kSecAttrPort] = request.port ?? 0
            exact[kSecAttrPath] = request.path ?? ""
            exact[kSecAttrSecurityDomain] = ""
            exact[kSecAttrAccessGroup] = ""
            try keychain.update(exact, [kSecValueData: Data(data)])
        }
    }

    /// Whether `state` names an item that still has this version, account and data.
    static func unchanged(_ state: String, data: [UInt8], username: String, _ keychain: KeychainSession) throws -> Bool {
        let parts = state.dropFirst(statePrefix.count).split(separator: ".")
        guard parts.count == 2, parts[0].count == 40, let ref = hexBytes(parts[0]), let bits = UInt64(parts[1], radix: 16) else { return false }
        let found: Any?
        do {
            found = try keychain.copyMatching([
                kSecClass: kSecClassInternetPassword, kSecValuePersistentRef: Data(ref),
                kSecReturnAttributes: true, kSecReturnData: true
            ])
        } catch let e as KeychainError where e.status == errSecItemNotFound || e.status == errSecParam {
            return false
        }
        guard let item = found as? [String: Any], let modified = item[kSecAttrModificationDate] as? Date,
            modified.timeIntervalSinceReferenceDate.bitPattern == bits, item[kSecAttrAccount] as? String == username
        else { return false }
        var stored = Array(item[kSecValueData] as? Data ?? Data())
        defer { for i in stored.indices { stored[i] = 0 } }
        return stored == data
    }

    static func hexBytes<S: StringProtocol>(_ s: S) -> [UInt8]? {
        var out: [UInt8] = []
        var high: UInt8?
        for c in s.utf8 {
            guard let v = UInt8(String(UnicodeScalar(c)), radix: 16) else { return nil }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? out : nil
    }

    static func erase(_ request: Request, _ query: [String: Any], _ keychain: KeychainSession) throws {
        var q = query
        q[kSecMatchLimit] = kSecMatchLimitAll
        q[kSecReturnPersistentRef] = true
        q[kSecReturnData] = request.password != nil
        let found: Any?
        do { found = try keychain.copyMatching(q) } catch let e as KeychainError where e.status == errSecItemNotFound { return }
        let items: [[String: Any]]
        if let list = found as? [[String: Any]] {
            items = list
        } else if let refs = found as? [Data] {
            items = refs.map { [kSecValuePersistentRef: $0] }
        } else {
            items = []
        }
        for item in items {
            guard let ref = item[kSecValuePersistentRef] as? Data else { continue }
            if let wanted = request.password {
                // Only the items whose password matches (not the extra lines after it).
                var data = Array(item[kSecValueData] as? Data ?? Data())
                defer { for i in data.indices { data[i] = 0 } }
                guard split(data).password.elementsEqual(wanted) else { continue }
            }
            do {
                try keychain.delete([kSecClass: kSecClassInternetPassword, kSecValuePersistentRef: ref])
            } catch let e as KeychainError where e.status == errSecItemNotFound {}
        }
    }
}
