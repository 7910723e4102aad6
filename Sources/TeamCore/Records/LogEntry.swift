import KeychainCore

/// One entry of a team keychain's log (`docs/team.md`, "The log"). Each write appends one,
/// signed by a member allowed to make it, linked to the entry before by its hash:
/// - `items`: rows changed by a writer (or admin);
/// - `roster`: a new member list and key generation, signed by an admin of the previous
///   roster; `rekeyed` when every row was re-sealed under a new master key;
/// - `heartbeat`: nothing changed; a writer says the head is still the head at `time`.
///
/// Every entry carries the set hash and item count after it and the digest of the roster
/// it was written under, so a reader that applies the entries since its checkpoint ends
/// with the view the last signer saw, or knows the server changed something.
package struct LogEntry: Equatable, Sendable {
    /// What an entry does.
    package enum Kind: UInt8, Sendable {
        case items = 0, roster = 1, heartbeat = 2
    }

    package var kind: Kind
    /// The team format of the writer (a reader refuses an entry older than the keychain's).
    package var format: UInt32
    /// Its place: one more than the entry before.
    package var generation: UInt64
    /// The hash of the entry before (`hash`); the keychain id for generation 1.
    package var previous: [UInt8]
    /// The key generation the writer wrote under.
    package var keyGeneration: UInt32
    /// The signer's member id.
    package var signer: [UInt8]
    /// Unix time of writing, as the signer's clock had it.
    package var time: UInt64
    /// The rows changed (items entries).
    package var changes: [RowChange]
    /// The new member list (roster entries).
    package var roster: Roster?
    /// The new key generation's commitment to its master key (roster entries).
    package var masterKeyCommitment: [UInt8]
    /// Whether every row was re-sealed (a roster entry that removed a member).
    package var rekeyed: Bool
    /// The hash of the previous roster entry (roster entries; the keychain id for the first):
    /// the chain of rosters, checked along the walk of the whole log a first open does.
    package var previousRoster: [UInt8]
    /// The set hash digest (`LtHash.digest`) and item count after this entry.
    package var setDigest: [UInt8]
    package var count: UInt64
    /// The digest of the roster in force after this entry.
    package var rosterDigest: [UInt8]
    /// Ed25519 by the signer over `signedBytes(keychainID:)`.
    package var signature: [UInt8]

    /// An unsigned entry of these values.
    package init(
        kind: Kind, generation: UInt64, previous: [UInt8], keyGeneration: UInt32, signer: [UInt8], time: UInt64,
        changes: [RowChange] = [], roster: Roster? = nil, masterKeyCommitment: [UInt8] = [], rekeyed: Bool = false,
        previousRoster: [UInt8] = [], setDigest: [UInt8], count: UInt64, rosterDigest: [UInt8]
    ) {
        self.kind = kind
        format = TeamFormat.version
        self.generation = generation
        self.previous = previous
        self.keyGeneration = keyGeneration
        self.signer = signer
        self.time = time
        self.changes = changes
        self.roster = roster
        self.masterKeyCommitment = masterKeyCommitment
        self.rekeyed = rekeyed
        self.previousRoster = previousRoster
        self.setDigest = setDigest
        self.count = count
        self.rosterDigest = rosterDigest
        signature = []
    }

    private func encodeBody(into w: inout ByteWriter) {
        w.u8(kind.rawValue)
        w.u32(format)
        w.u64(generation)
        w.lengthPrefixed(previous)
        w.u32(keyGeneration)
        w.lengthPrefixed(signer)
        w.u64(time)
        w.u32(UInt32(changes.count))
        for c in changes { c.encode(into: &w) }
        if let roster {
            w.u8(1)
            roster.encode(into: &w)
        } else {
            w.u8(0)
        }
        w.lengthPrefixed(masterKeyCommitment)
        w.u8(rekeyed ? 1 : 0)
        w.lengthPrefixed(previousRoster)
        w.lengthPrefixed(setDigest)
        w.u64(count)
        w.lengthPrefixed(rosterDigest)
    }

    /// What the signer signs: a label, the keychain id (an entry of one keychain is no
    /// entry of another) and every field but the signature.
    package func signedBytes(keychainID: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 256 + 120 * changes.count)
        w.label("kc team log entry v1")
        w.lengthPrefixed(keychainID)
        encodeBody(into: &w)
        return w.bytes
    }

    /// Signs the entry as `keys`' member.
    package mutating func sign(keychainID: [UInt8], with keys: MemberKeys) {
        signer = keys.memberID
        signature = keys.sign(signedBytes(keychainID: keychainID))
    }

    /// Whether `signature` is the signature of `publicKey` over the entry.
    package func isSigned(keychainID: [UInt8], by publicKey: [UInt8]) -> Bool {
        MemberKeys.verify(signature: signature, message: signedBytes(keychainID: keychainID), publicKey: publicKey)
    }

    /// Its bytes, as `kc_log.entry` stores them.
    package var encoded: [UInt8] {
        var w = ByteWriter(capacity: 256 + 120 * changes.count)
        encodeBody(into: &w)
        w.lengthPrefixed(signature)
        return w.bytes
    }

    /// BLAKE2b-256 of the stored bytes: what the next entry links to and the head names.
    package var hash: [UInt8] { Self.hash(encoded: encoded) }

    /// `hash` from the stored bytes themselves, without decoding and encoding the entry
    /// again (a first open hashes every entry of the log). Every entry a writer stored is
    /// its `encoded`, so the two agree; bytes that decode to an entry but are not its
    /// encoding hash differently here, and so break the chain rather than pass for it.
    package static func hash(encoded bytes: [UInt8]) -> [UInt8] { Hashing.blake2b([0x6b, 0x63, 0x6c, 0x31] + bytes) }

    /// Reads an entry. - Throws: errSecDecode when malformed (at generation `at`, for the message).
    package init(encoded bytes: [UInt8], at generation: UInt64) throws {
        // The error is made when thrown: a first open decodes every entry of the log.
        func bad() -> KeychainError {
            KeychainError(errSecDecode, "entry \(generation) of the team keychain's log is malformed: the server altered it")
        }
        var r = ByteReader(bytes)
        guard let kindByte = r.u8(), let kind = Kind(rawValue: kindByte), let format = r.u32(), let gen = r.u64(),
            let previous = r.lengthPrefixed(max: 32), let keyGen = r.u32(), let signer = r.lengthPrefixed(max: 16),
            let time = r.u64(), let n = r.u32(), Int(n) <= r.remaining / 40
        else { throw bad() }
        var changes: [RowChange] = []
        changes.reserveCapacity(Int(n))
        for _ in 0..<n { changes.append(try RowChange.decode(from: &r)) }
        guard let hasRoster = r.u8(), hasRoster <= 1 else { throw bad() }
        let roster = hasRoster == 1 ? try Roster.decode(from: &r) : nil
        guard let commitment = r.lengthPrefixed(max: 32), let rekeyed = r.u8(), rekeyed <= 1,
            let previousRoster = r.lengthPrefixed(max: 32), let setDigest = r.lengthPrefixed(max: 32), let count = r.u64(),
            let rosterDigest = r.lengthPrefixed(max: 32), let signature = r.lengthPrefixed(max: 64), r.isAtEnd,
            previous.count == 32, signer.count == 16, setDigest.count == 32, rosterDigest.count == 32, signature.count == 64,
            (kind == .roster) == (roster != nil), kind == .roster || (commitment.isEmpty && rekeyed == 0 && previousRoster.isEmpty),
            kind != .roster || (commitment.count == 32 && previousRoster.count == 32), kind == .items || changes.isEmpty
        else { throw bad() }
        self.init(
            kind: kind, generation: gen, previous: previous, keyGeneration: keyGen, signer: signer, time: time, changes: changes,
            roster: roster, masterKeyCommitment: commitment, rekeyed: rekeyed == 1, previousRoster: previousRoster,
            setDigest: setDigest, count: count, rosterDigest: rosterDigest)
        self.format = format
        self.signature = signature
    }
}
