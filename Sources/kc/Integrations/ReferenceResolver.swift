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

/// Resolves references, one agent round trip per keychain, all before anything runs.
enum ReferenceResolver {
    /// The secret of each reference, in order.
    ///
    /// A reference whose `keychain=` names another keychain than `base` is refused unless
    /// that keychain is in `allowed` (`--allow-keychain`): a reference cannot pull from a
    /// keychain the command line did not name (DESIGN.md, amendments of 2026-11-23).
    /// - Throws: the first failure, naming `label(i)` (every reference to a keychain that
    ///   cannot be opened: locked, missing, wrong password); errSecParam (exit 206) for a
    ///   keychain not named on the command line, before any keychain is opened.
    static func resolve(
        _ references: [SecretReference], base: KeychainChoice, allowed: [String] = [],
        label: (Int) -> String
    ) throws -> [Secret] {
        try checkKeychains(references, base: base, allowed: allowed, label: label)
        var secrets = [Secret?](repeating: nil, count: references.count)
        var byKeychain: [String: [Int]] = [:]
        var order: [String] = []
        for (i, r) in references.enumerated() {
            let path = r.choice(base).path
            if byKeychain[path] == nil { order.append(path) }
            byKeychain[path, default: []].append(i)
        }
        // Every one-time code for the same moment (read once, only when one is asked for).
        let time = references.contains(where: \.totp) ? try OneTimeCode.now() : 0
        for path in order {
            let indexes = byKeychain[path] ?? []
            guard let first = indexes.first else { continue }
            // A keychain that is locked (or missing, or refuses the password) fails every
            // reference to it: the error names them, as a missing item does.
            let handle: KeychainSession
            let results: [Result<Any?, KeychainError>]
            // One batch per keychain: a reference's queries (one, or a seed's candidates) in turn.
            var ranges: [Range<Int>] = []
            var queries: [[String: Any]] = []
            // After a secret's query, the same query for attributes only, two at most: to say
            // so when the reference does not choose one item, as `kc find -w` does (no secret
            // of the second is read, so one that requires user presence asks nothing).
            var counted: [Int: Int] = [:]
            for i in indexes {
                let q = references[i].queries
                ranges.append(queries.count..<(queries.count + q.count))
                queries += q
                if !references[i].totp {
                    var two = references[i].query
                    two[kSecReturnData] = nil
                    two[kSecReturnAttributes] = true
                    two[kSecMatchLimit] = 2
                    counted[i] = queries.count
                    queries.append(two)
                }
            }
            do {
                handle = try Session.open(references[first].choice(base))
                results = try handle.copyMany(queries)
            } catch let error as KeychainError {
                throw KeychainError(
                    error.status, "\(indexes.map(label).joined(separator: ", ")): \(error.message)",
                    hint: error.hint, cause: error.cause)
            }
            for (n, i) in indexes.enumerated() {
                if references[i].totp {
                    let code = try OneTimeCode.code(results[ranges[n]], in: handle, label: label(i), at: time)
                    secrets[i] = Secret(Array(code.text.utf8))
                    continue
                }
                switch results[ranges[n].lowerBound] {
                case .success(let value):
                    guard let data = value as? Data else {
                        throw KeychainError(errSecItemNotFound, "\(label(i)): the item has no secret")
                    }
                    secrets[i] = Secret(Array(data))
                    if let n = counted[i], case .success(let found) = results[n], (found as? [Any])?.count ?? 0 > 1 {
                        Report.note("warning: more than one item matches \(label(i)); used the secret of the first")
                        Report.note("hint: `kc find \(references[i].findArguments.joined(separator: " ")) --all` lists them")
                    }
                case .failure(let error):
                    if error.status == errSecItemNotFound {
                        throw KeychainError(
                            errSecItemNotFound, "\(label(i)): no item matches it in \(handle.path)",
                            hint: "list what is there with `kc list`")
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
    static func checkKeychains(
        _ references: [SecretReference], base: KeychainChoice, allowed: [String],
        label: (Int) -> String
    ) throws {
        guard references.contains(where: { $0.keychain != nil }) else { return }
        let own = agentPath(base)
        let permitted = [own] + allowed.map { agentPath(KeychainChoice(keychain: $0)) }
        for (i, reference) in references.enumerated() {
            guard let named = reference.keychain else { continue }
            let path = agentPath(reference.choice(base))
            if permitted.contains(path) { continue }
            throw KeychainError(
                errSecParam, "\(label(i)): it names the keychain \(named), but this command was given \(own)",
                hint: "a reference may name only a keychain the command line names; if it is meant, add --allow-keychain \(named)")
        }
    }

    /// What the agent calls the keychain `choice` names (`KeychainAddress.agentPath`), to
    /// compare keychains before any is opened; a word that does not parse is compared as
    /// typed (opening it says why).
    private static func agentPath(_ choice: KeychainChoice) -> String {
        (try? choice.address())?.agentPath ?? choice.path
    }
}
