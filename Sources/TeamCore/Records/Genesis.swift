import KeychainCore

/// The first record of a team keychain: its format, name, a random nonce and the root
/// admin. `keychain_id` is its BLAKE2b-256 hash, and the join string pins that id, so a
/// joining member trusts no admin key on first use: the server cannot present another
/// genesis without changing the id.
package struct Genesis: Equatable, Sendable {
    /// The team format this genesis starts (`TeamFormat.version`).
    package var format: UInt32
    /// The team's name as its creator gave it.
    package var name: String
    /// 16 random bytes: two keychains of one name and admin get two ids.
    package var nonce: [UInt8]
    /// The root admin, the first signer of the roster.
    package var root: MemberRecord
    /// Unix time of creation.
    package var created: UInt64

    /// A genesis of these values.
    package init(format: UInt32 = TeamFormat.version, name: String, nonce: [UInt8] = Sodium.randomBytes(16), root: MemberRecord, created: UInt64) {
        self.format = format
        self.name = name
        self.nonce = nonce
        self.root = root
        self.created = created
    }

    /// Its bytes, as `kc_keychains.genesis` stores them.
    package var encoded: [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.label("kc team genesis v1")
        w.u32(format)
        w.lengthPrefixed(Array(name.utf8))
        w.lengthPrefixed(nonce)
        root.encode(into: &w)
        w.u64(created)
        return w.bytes
    }

    /// The keychain id: BLAKE2b-256 of `encoded`.
    package var keychainID: [UInt8] { Hashing.blake2b(encoded) }

    /// Reads a genesis, and checks that it is the one `keychainID` names.
    /// - Throws: errSecInvalidKeychain when it is not (the server presents another
    ///   keychain); errSecDecode when malformed; errSecWrongSecVersion when newer.
    package init(encoded bytes: [UInt8], expecting keychainID: [UInt8]) throws {
        guard Hashing.blake2b(bytes).count == 32, Sodium.constantTimeEqual(Hashing.blake2b(bytes), keychainID) else {
            throw KeychainError(
                errSecInvalidKeychain,
                "the server's team keychain is not the one the join string names (its genesis hashes to another id): the server substituted it")
        }
        var r = ByteReader(bytes)
        let bad = KeychainError(errSecDecode, "the genesis record of the team keychain is malformed")
        guard let labelLength = r.u8(), r.raw(Int(labelLength)) == Array("kc team genesis v1".utf8), let format = r.u32() else { throw bad }
        guard format <= TeamFormat.version else {
            throw KeychainError(errSecWrongSecVersion, "the team keychain has format \(format); this kc reads up to \(TeamFormat.version)", hint: "upgrade kc")
        }
        guard let name = r.lengthPrefixed(max: 256).flatMap({ String(validating: $0, as: UTF8.self) }),
            let nonce = r.lengthPrefixed(max: 64)
        else { throw bad }
        let root = try MemberRecord.decode(from: &r)
        guard let created = r.u64(), r.isAtEnd, root.role == .admin else { throw bad }
        self.init(format: format, name: name, nonce: nonce, root: root, created: created)
    }
}
