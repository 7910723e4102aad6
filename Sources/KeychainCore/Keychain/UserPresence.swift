/// The proof that the user is there, for one operation (`docs/security.md`, "User
/// presence"): the keychain's password, typed for this operation, which the keychain checks
/// by deriving its key-encryption key again and opening the master-key wrap, even while it
/// is unlocked. One proof covers one operation, however many protected items it reads.
///
///     let presence = UserPresence(password: typed)          // or UserPresence() for none
///     let secret = try keychain.copyMatching(query, presence: presence)
///
/// Without a proof, an operation that reads the secret of an item whose access-control
/// flags require user presence throws `UserPresenceRequired`; the caller asks the user
/// and performs the operation again with one. The password is wiped once checked.
public final class UserPresence {
    /// The password offered; taken (and wiped on release) when it is checked.
    private var proof: SecureBytes?
    /// Whether the proof was checked and found right.
    package private(set) var confirmed = false

    /// No proof: protected items fail the operation with `UserPresenceRequired` (or are
    /// left out, or fail with errSecInteractionNotAllowed, as the query's
    /// `kSecUseAuthenticationUI` says).
    public init() {}

    /// A proof: the keychain's password, typed by the user for this operation.
    public init(password: consuming SecureBytes) {
        proof = .some(password)
    }

    /// Whether a proof was offered (checked or not).
    public var isOffered: Bool { confirmed || proof != nil }

    /// Runs `body` with the offered password's bytes (to send it to the agent, which checks
    /// it); nil when none is offered or it was already checked here.
    public func withOfferedProof<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let password = proof.take() else { return nil }
        let result = Result { try password.withUnsafeBytes(body) }
        proof = .some(password)
        return try result.get()
    }

    /// Checks an offered proof against `keychain` once, before the operation reads a row.
    /// - Throws: errSecAuthFailed for a wrong password.
    func check(on keychain: Keychain) throws {
        guard !confirmed, let password = proof.take() else { return }
        try keychain.checkPresenceProof(password)
        confirmed = true
    }

    /// Lets `item`'s secret be read when its flags ask for presence; false to leave it out.
    /// - Throws: `UserPresenceRequired` with no proof (Allow); errSecInteractionNotAllowed
    ///   when the query said not to ask (Fail).
    func admits(_ item: DecodedItem, ui: AuthenticationUI) throws -> Bool {
        guard AccessControlFlags(stored: item.attributes[kcAttrAccessControlFlags]).requiresUserPresence, !confirmed else { return true }
        let name = UserPresenceRequired.name(of: item)
        switch ui {
        case .skip: return false
        case .fail:
            throw KeychainError(errSecInteractionNotAllowed, "the item \(name) " + UserPresenceRequired.refusedWithoutAsking)
        case .allow:
            throw UserPresenceRequired(item: name)
        }
    }
}

/// Thrown by an operation that would read the secret of an item protected by user presence
/// without a proof (`UserPresence`): the caller asks the user for the keychain's password
/// and tries again with it, or, when nobody can answer, reports `error`.
public struct UserPresenceRequired: Error, Sendable, Equatable {
    /// The first protected item met, named for a prompt (its label, else service or server).
    public let item: String

    /// Creates the signal for the item named `item`.
    public init(item: String) {
        self.item = item
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
        KeychainError(errSecInteractionNotAllowed,
                      "the item \(item) requires user presence (its keychain password typed for each read), and \(why)",
                      hint: "read it from a terminal, where kc asks for the password; a password from KC_PASSWORD, --password-stdin or --password-file does not count")
    }

    /// How an item is named in messages and prompts: its label, service or server, quoted.
    static func name(of item: DecodedItem) -> String {
        for key in [kSecAttrLabel, kSecAttrService, kSecAttrServer, kSecAttrAccount] {
            if case .string(let s)? = item.attributes[key], !s.isEmpty { return "\"\(s)\"" }
        }
        return "(unnamed \(item.itemClass.rawValue) item)"
    }
}
