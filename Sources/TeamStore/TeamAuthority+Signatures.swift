import KeychainCore
import TeamCore

/// Who may sign which entry (`docs/design.md`, "The roster lives in the log"): the one place
/// where an entry's format and signature are checked, for both walks of the log (a first
/// open's from the genesis, a catch-up's from the view). A roster entry must be signed by an
/// admin of the roster before it and follow the roster entry before it (`SignedRoster`,
/// which only `verifyRosterEntry` makes); an items or heartbeat entry by a member who may
/// write, under the roster and key generation in force (`checkWriter`).
extension TeamAuthority {
    /// Refuses an entry of a format this build does not read.
    func checkFormat(_ e: LogEntry) throws {
        guard e.format <= TeamFormat.version else {
            throw KeychainError(
                errSecWrongSecVersion, "\(label) has entries of format \(e.format); this kc reads up to \(TeamFormat.version)", hint: "upgrade kc")
        }
        guard e.format >= TeamFormat.version else {
            throw serverError("entry \(e.generation) claims the older format \(e.format): a downgrade")
        }
    }

    /// Checks an items or heartbeat entry: signed by a valid member who may write, under the
    /// key generation and roster in force. The signer chooses the time it signs, so an
    /// expiry is also checked against `previousTime`, the time of the entry before: once the
    /// log shows the expiry passed, a backdated entry of the expired member is refused.
    func checkWriter(_ e: LogEntry, roster: Roster, keyGeneration keyGen: UInt32, after previousTime: UInt64) throws {
        try checkFormat(e)
        guard let signer = roster.member(e.signer) else {
            throw serverError("entry \(e.generation) is signed by someone who is not a member: a forged write")
        }
        guard e.isSigned(keychainID: keychainID, by: signer.signPublicKey) else {
            throw serverError("entry \(e.generation) does not carry \(signer.name)'s signature: a forged or edited write")
        }
        guard signer.role.mayWrite else {
            throw serverError(
                "entry \(e.generation) is signed by \(signer.name), a reader, who may not write: a reader (or the server with a reader's key) forged a write")
        }
        guard signer.isValid(at: e.time), signer.isValid(at: previousTime) else {
            throw serverError("entry \(e.generation) is signed by \(signer.name) after its membership expired")
        }
        guard e.keyGeneration == keyGen, e.rosterDigest == roster.digest else {
            throw serverError("entry \(e.generation) was written under another roster or key generation: entries were hidden or reordered")
        }
    }

    /// Checks a roster entry the chain linked: it names the roster entry before it
    /// (`previousRoster`, the hash of the last one the walk took, the keychain id before
    /// the first), is of this format, is signed by an admin of `roster` (the roster before
    /// it) valid at its time, and carries the roster its digest names. An entry's kind is
    /// what its signed bytes say, never the `kind` column: a roster entry (a removal)
    /// relabelled or deleted breaks the roster chain here.
    /// - Returns: the new roster, vouched for.
    /// - Throws: errSecInvalidKeychain naming the forgery; errSecWrongSecVersion for a newer
    ///   format.
    func verifyRosterEntry(
        _ linked: ChainedEntry, under roster: Roster, following previousRoster: [UInt8],
        from origin: LogChain.Origin
    ) throws -> SignedRoster {
        let e = linked.entry, g = linked.generation
        guard e.previousRoster == previousRoster else {
            switch origin {
            case .genesis:
                throw serverError("the roster entry at generation \(g) does not follow the one before it: roster entries were hidden, replayed or edited")
            case .view: throw serverError("roster entry \(g) does not follow the roster before it")
            }
        }
        try checkFormat(e)
        guard let signer = roster.member(e.signer), signer.role == .admin, signer.isValid(at: e.time),
            e.isSigned(keychainID: keychainID, by: signer.signPublicKey)
        else {
            switch origin {
            case .genesis:
                throw serverError("the roster entry at generation \(g) is not signed by an admin of the roster before it: the member list was forged")
            case .view: throw serverError("roster entry \(g) is not signed by an admin: the member list was forged")
            }
        }
        guard let newRoster = e.roster, e.rosterDigest == newRoster.digest else {
            switch origin {
            case .genesis: throw serverError("the roster entry at generation \(g) is inconsistent")
            case .view: throw serverError("roster entry \(g) does not follow the roster before it")
            }
        }
        return SignedRoster(entry: linked, roster: newRoster)
    }
}

/// A roster entry `TeamAuthority.verifyRosterEntry` (the only maker) checked: linked to the
/// log and to the roster entry before it, signed by an admin of the roster before it.
struct SignedRoster {
    /// The entry, as the chain linked it.
    let entry: ChainedEntry
    /// The roster it carries.
    let roster: Roster

    fileprivate init(entry: ChainedEntry, roster: Roster) {
        self.entry = entry
        self.roster = roster
    }
}
