import KeychainCore

/// This device's membership of one team keychain: `$XDG_DATA_HOME/kc/teams/NAME.team`
/// (else `~/.local/share/kc/teams`), 0600 in a 0700 folder (`docs/format.md` §9.5).
///
/// It holds the team's name, the keychain id the join string pinned, the DSN, this
/// device's member id and whether plain-text transport was allowed, all in the clear; and
/// the 32-byte member seed sealed (XChaCha20-Poly1305) under a key Argon2id derives from
/// the device's team password, with every other byte of the file as associated data, so
/// that editing any field makes the seed fail to open. A CI runner has no team file: its
/// seed comes in its token (`RunnerToken`) and goes straight to `MemberKeys(seed:)`.
///
///     try TeamFile.create(at: TeamFile.path(name: "infra"), teamName: "infra", keychainID: id,
///                         dsn: dsn, memberID: keys.memberID, insecureTransport: false,
///                         seed: keys.seed, password: password, profile: .moderate)
///     let file = try TeamFile.read(at: TeamFile.path(name: "infra"))
///     let keys = try MemberKeys(seed: try file.openSeed(password: password))
package struct TeamFile: Sendable, Equatable {
    /// The first four bytes of a team file.
    static let magic = Array("KCTM".utf8)
    /// The version this kc writes and reads.
    static let version: UInt32 = 1
    /// The label of the seed's associated data.
    static let seedLabel = "kc team seed v1"
    /// The longest DSN kept.
    static let maximumDSNBytes = 4096
    /// Flag bit: plain-text transport to a non-loopback server was allowed at join.
    static let insecureTransportFlag: UInt8 = 1

    /// The team keychain's name (`team:NAME`).
    package let teamName: String
    /// The keychain id (32 bytes): the hash of the genesis record the join string pinned.
    package let keychainID: [UInt8]
    /// The PostgreSQL connection string.
    package let dsn: String
    /// This device's member id (16 bytes).
    package let memberID: [UInt8]
    /// Whether `--insecure-transport` was given (a non-loopback DSN without verified TLS).
    package let insecureTransport: Bool
    /// The Argon2id parameters of the team password.
    let kdf: KDFParameters
    /// The sealed seed: `nonce ‖ ciphertext ‖ tag` (72 bytes).
    let sealedSeed: [UInt8]
    /// Every byte of the file before the sealed seed (part of its associated data).
    let header: [UInt8]

    /// The folder of team files: `$XDG_DATA_HOME/kc/teams`, else `~/.local/share/kc/teams`.
    package static var directory: String { KeychainLocation.directory + "/teams" }

    /// The team file of a team name.
    package static func path(name: String) -> String { directory + "/" + name + ".team" }

    // MARK: Create

    /// Writes a new team file (0600, created exclusively; its folder 0700 when missing).
    ///
    /// - Throws: `errSecDuplicateKeychain` if it exists; `errSecParam` for a bad team name,
    ///   id, DSN or seed; `errSecAllocate` when Argon2id cannot get memory; `errSecIO`,
    ///   `errSecReadOnly` or `errSecDiskFull` when it cannot be written.
    @discardableResult
    package static func create(
        at path: String, teamName: String, keychainID: [UInt8], dsn: String, memberID: [UInt8],
        insecureTransport: Bool, seed: borrowing SecureBytes, password: borrowing SecureBytes,
        profile: KDFProfile
    ) throws -> TeamFile {
        try TeamName.validate(teamName)
        guard keychainID.count == MasterKeyDelivery.keychainIDBytes else {
            throw KeychainError(errSecParam, "a keychain id has 32 bytes, not \(keychainID.count)")
        }
        guard memberID.count == MemberKeys.memberIDBytes else {
            throw KeychainError(errSecParam, "a member id has 16 bytes, not \(memberID.count)")
        }
        guard !dsn.isEmpty, dsn.utf8.count <= maximumDSNBytes else {
            throw KeychainError(errSecParam, "a DSN has 1 to \(maximumDSNBytes) bytes")
        }
        guard seed.count == MemberKeys.seedBytes else {
            throw KeychainError(errSecParam, "a member seed has 32 bytes, not \(seed.count)")
        }
        let kdf = KDFParameters(profile: profile)
        let header = encodeHeader(
            teamName: teamName, keychainID: keychainID, dsn: dsn, memberID: memberID,
            insecureTransport: insecureTransport, kdf: kdf)
        let kek = try kdf.deriveKey(password: password)
        let sealedSeed = AEAD.seal(seed, key: kek, ad: associatedData(header))
        var w = ByteWriter(capacity: header.count + 80)
        w.raw(header)
        w.lengthPrefixed(sealedSeed)
        try PrivateFiles.create(path, bytes: w.bytes)
        return TeamFile(
            teamName: teamName, keychainID: keychainID, dsn: dsn, memberID: memberID,
            insecureTransport: insecureTransport, kdf: kdf, sealedSeed: sealedSeed, header: header)
    }

    /// `magic ‖ u32 version ‖ u8 flags ‖ lp(name) ‖ lp(keychain_id) ‖ lp(dsn) ‖ lp(member_id)
    /// ‖ u32 kdf_algorithm ‖ u64 opslimit ‖ u64 memlimit ‖ lp(salt)`.
    private static func encodeHeader(
        teamName: String, keychainID: [UInt8], dsn: String, memberID: [UInt8],
        insecureTransport: Bool, kdf: KDFParameters
    ) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.raw(magic)
        w.u32(version)
        w.u8(insecureTransport ? insecureTransportFlag : 0)
        w.lengthPrefixed(Array(teamName.utf8))
        w.lengthPrefixed(keychainID)
        w.lengthPrefixed(Array(dsn.utf8))
        w.lengthPrefixed(memberID)
        w.u32(kdf.algorithm)
        w.u64(kdf.opslimit)
        w.u64(kdf.memlimit)
        w.lengthPrefixed(kdf.salt)
        return w.bytes
    }

    /// The sealed seed's associated data: `label("kc team seed v1") ‖ header`.
    private static func associatedData(_ header: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: header.count + 16)
        w.label(seedLabel)
        w.raw(header)
        return w.bytes
    }

    // MARK: Read

    /// Reads and parses a team file (the seed stays sealed).
    /// - Throws: `errSecNoSuchKeychain` when there is none; `errSecDecode` when it is not a
    ///   team file this kc reads; `errSecParam` for a link or a file others can read.
    package static func read(at path: String) throws -> TeamFile {
        guard let bytes = try PrivateFiles.read(path) else {
            throw KeychainError(
                errSecNoSuchKeychain, "no team file at \(path)",
                hint: "join the team first with `kc team join`")
        }
        return try decode(bytes, path: path)
    }

    /// Parses the bytes of a team file. - Throws: `errSecDecode`.
    static func decode(_ bytes: [UInt8], path: String) throws -> TeamFile {
        func malformed(_ what: String) -> KeychainError {
            KeychainError(errSecDecode, "\(path) is not a kc team file this kc can read: \(what)")
        }
        var r = ByteReader(bytes)
        guard r.raw(magic.count) == magic else { throw malformed("no team file header") }
        guard let version = r.u32() else { throw malformed("it is truncated") }
        guard version == Self.version else { throw malformed("format version \(version), this kc reads \(Self.version)") }
        guard let flags = r.u8(), flags & ~insecureTransportFlag == 0 else { throw malformed("unknown flags") }
        guard let nameBytes = r.lengthPrefixed(max: 64), let name = String(validating: nameBytes, as: UTF8.self),
            (try? TeamName.validate(name)) != nil
        else { throw malformed("a bad team name") }
        guard let keychainID = r.lengthPrefixed(max: 32), keychainID.count == 32 else { throw malformed("a bad keychain id") }
        guard let dsnBytes = r.lengthPrefixed(max: maximumDSNBytes), !dsnBytes.isEmpty,
            let dsn = String(validating: dsnBytes, as: UTF8.self)
        else { throw malformed("a bad DSN") }
        guard let memberID = r.lengthPrefixed(max: 16), memberID.count == 16 else { throw malformed("a bad member id") }
        guard let algorithm = r.u32(), let opslimit = r.u64(), let memlimit = r.u64(), let salt = r.lengthPrefixed(max: 64) else {
            throw malformed("it is truncated")
        }
        let kdf = KDFParameters(algorithm: algorithm, opslimit: opslimit, memlimit: memlimit, salt: salt)
        let header = Array(bytes[0..<r.offset])
        guard let sealedSeed = r.lengthPrefixed(max: 256),
            sealedSeed.count == AEAD.nonceBytes + MemberKeys.seedBytes + AEAD.tagBytes
        else { throw malformed("a bad sealed seed") }
        guard r.isAtEnd else { throw malformed("bytes after the sealed seed") }
        return TeamFile(
            teamName: name, keychainID: keychainID, dsn: dsn, memberID: memberID,
            insecureTransport: flags & insecureTransportFlag != 0, kdf: kdf, sealedSeed: sealedSeed, header: header)
    }

    // MARK: Seed

    /// Opens the member seed with the device's team password.
    ///
    /// - Returns: the 32-byte seed in scratch secure memory.
    /// - Throws: `errSecAuthFailed` for a wrong password (or an edited file: the two cannot be
    ///   told apart); `errSecDecode` for Argon2id parameters a tampered file could use to
    ///   downgrade or exhaust memory; `errSecAllocate` when Argon2id cannot get memory.
    package func openSeed(password: borrowing SecureBytes) throws -> SecureBytes {
        let kek = try kdf.deriveKey(password: password)
        do {
            return try AEAD.open(sealedSeed, key: kek, ad: Self.associatedData(header), what: "the member seed")
        } catch {
            throw KeychainError(errSecAuthFailed, "wrong team password for team \(teamName) (or its team file was altered)")
        }
    }
}
