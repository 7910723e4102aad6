/// The proof that the user is there, for one operation (`docs/security.md`, "User
/// presence"): the keychain's password, typed for this operation, checked in the process
/// that holds the keys, even while the keychain is unlocked. One proof covers one
/// operation, however many protected items it reads.
///
///     let presence = UserPresence(password: typed)          // or UserPresence() for none
///     let secret = try keychain.copyMatching(query, presence: presence)
///
/// Without a proof, an operation that reads the secret of an item whose access-control
/// flags require user presence throws `UserPresenceRequired`, naming every protected item
/// it would release; the caller asks the user and performs the operation again with one.
/// The password is wiped once checked. A proof never crosses the agent's socket: a client
/// performs a protected operation in its own process (`KeychainSession`).
public final class UserPresence {
    /// The password offered; taken (and wiped on release) when it is checked.
    private var proof: SecureBytes?
    /// Whether the proof was checked and found right.
    package private(set) var confirmed = false
    /// The names of the protected items the user was told about, when a proof was given
    /// for them (`expecting`): an item not among them is not released.
    private var expected: [String: Int]?
    /// Protected items met without a proof (under kSecUseAuthenticationUIAllow), named.
    private var deferred: [String] = []

    /// No proof: protected items fail the operation with `UserPresenceRequired` (or are
    /// left out, or fail with errSecInteractionNotAllowed, as the query's
    /// `kSecUseAuthenticationUI` says).
    public init() {}

    /// A proof: the keychain's password, typed by the user for this operation, checked
    /// against the keychain's keys before the operation reads a row.
    /// - Parameter expecting: the items the user was told the operation releases (the
    ///   names `UserPresenceRequired.items` gave); nil for no such limit.
    public init(password: consuming SecureBytes, expecting: [String]? = nil) {
        proof = .some(password)
        expected = expecting.map(Self.multiset)
    }

    /// A proof already given: the keychain was opened in this very process with the
    /// password the user typed for this operation (`Keychain.open` derived the key from
    /// it), so no second derivation is needed.
    /// - Parameter expecting: as for `init(password:expecting:)`.
    public static func openedWithTypedPassword(expecting: [String]?) -> UserPresence {
        let presence = UserPresence()
        presence.confirmed = true
        presence.expected = expecting.map(multiset)
        return presence
    }

    private static func multiset(_ names: [String]) -> [String: Int] {
        names.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    /// Whether a proof was offered (checked or not).
    public var isOffered: Bool { confirmed || proof != nil }

    /// Checks an offered proof against `keychain` once, before the operation reads a row.
    /// - Throws: errSecAuthFailed for a wrong password.
    func check(on keychain: Keychain) throws {
        guard !confirmed, let password = proof.take() else { return }
        try keychain.checkPresenceProof(password)
        confirmed = true
    }

    /// Lets `item`'s secret be read when its flags ask for presence; false to leave it out.
    /// Without a proof (Allow) the item is left out and named: the operation then ends with
    /// `throwIfDeferred`, so the prompt can name every item it releases.
    /// - Throws: errSecInteractionNotAllowed when the query said not to ask (Fail);
    ///   errSecAuthFailed when a proof was given for other items than this one.
    func admits(_ item: DecodedItem, ui: AuthenticationUI) throws -> Bool {
        guard AccessControlFlags(stored: item.attributes[kcAttrAccessControlFlags]).requiresUserPresence else { return true }
        let name = UserPresenceRequired.name(of: item)
        if confirmed {
            guard expected != nil else { return true }
            guard let left = expected?[name], left > 0 else {
                throw KeychainError(
                    errSecAuthFailed,
                    "the item \(name) requires user presence, and the prompt answered did not name it: nothing was read",
                    hint: "run the command again; if this repeats, a process of your user may be posing as the kc agent (docs/security.md)")
            }
            expected?[name] = left - 1
            return true
        }
        switch ui {
        case .skip: return false
        case .fail:
            throw KeychainError(errSecInteractionNotAllowed, "the item \(name) " + UserPresenceRequired.refusedWithoutAsking)
        case .allow:
            deferred.append(name)
            return false
        }
    }

    /// The number of protected items left out so far for want of a proof (they count
    /// against a match limit as if found, so a limit-one search stops at the first).
    var deferredCount: Int { deferred.count }

    /// Starts an attempt at the operation afresh (a team keychain's read may run twice).
    func forgetDeferred() { deferred = [] }

    /// Ends an operation that met protected items without a proof.
    /// - Throws: `UserPresenceRequired` naming them.
    func throwIfDeferred() throws {
        guard !deferred.isEmpty else { return }
        let items = deferred
        deferred = []
        throw UserPresenceRequired(items: items)
    }
}

/// Thrown by an operation that would read the secret of items protected by user presence
/// without a proof (`UserPresence`): the caller asks the user for the keychain's password,
/// naming the items, and tries again with it, or, when nobody can answer, reports `error`.
public struct UserPresenceRequired: Error, Sendable, Equatable {
    /// Every protected item the operation would release, named for a prompt (label, else
    /// service, server or account, quoted), in the order met; never empty.
    public let items: [String]

    /// The first protected item met.
    public var item: String { items.first ?? "(unnamed item)" }

    /// Creates the signal for the items named `items` (one at least).
    public init(items: [String]) {
        self.items = items.isEmpty ? ["(unnamed item)"] : items
    }

    /// Creates the signal for one item named `item`.
    public init(item: String) {
        self.init(items: [item])
    }

    /// The end of the message of errSecInteractionNotAllowed for an item that requires user
    /// presence under kSecUseAuthenticationUIFail (see `isRefusedWithoutAsking`).
    static let refusedWithoutAsking = "requires user presence and the query says not to ask (kSecUseAuthenticationUIFail)"

    /// Whether `error` is that refusal, and not another errSecInteractionNotAllowed (a locked
    /// keychain, one re-keyed elsewhere): a front end that asked with Fail may then ask again
    /// with Allow (`kc find -w`).
    public static func isRefusedWithoutAsking(_ error: KeychainError) -> Bool {
        error.status == errSecInteractionNotAllowed && error.message.hasSuffix(refusedWithoutAsking)
    }

    /// The error to report when nobody can give the proof (no terminal, no pinentry, or a
    /// password from a script, which proves nothing about a person).
    public func error(why: String) -> KeychainError {
        let what = items.count == 1 ? "the item \(item) requires" : "\(items.count) items (\(item) first) require"
        return KeychainError(
            errSecInteractionNotAllowed,
            "\(what) user presence (its keychain password typed for each read), and \(why)",
            hint: "read it from a terminal, where kc asks for the password; a password from KC_PASSWORD, --password-stdin or --password-file does not count")
    }

    /// How an item is named in messages and prompts: its label, service or server, quoted,
    /// and its account when it has one (`"bank" (account "me")`). Shown on a terminal only
    /// through the front end's escaping (`PresencePrompt`).
    static func name(of item: DecodedItem) -> String {
        func text(_ key: String) -> String? {
            if case .string(let s)? = item.attributes[key], !s.isEmpty { return s }
            return nil
        }
        let account = text(kSecAttrAccount)
        for key in [kSecAttrLabel, kSecAttrService, kSecAttrServer] {
            guard let s = text(key) else { continue }
            return account.map { "\"\(s)\" (account \"\($0)\")" } ?? "\"\(s)\""
        }
        return account.map { "(account \"\($0)\")" } ?? "(unnamed \(item.itemClass.rawValue) item)"
    }
}
