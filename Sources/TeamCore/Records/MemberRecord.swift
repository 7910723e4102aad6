import KeychainCore

/// One member of a team keychain as the roster lists it: a device or a CI runner, never a
/// person. The record is public material; admins sign whole rosters that contain it.
package struct MemberRecord: Equatable, Sendable {
    /// BLAKE2b-128 of its public keys (`MemberKeys.memberID`).
    package var memberID: [UInt8]
    /// A name for people (`bob-laptop`, `ci-prod`), unique in the roster.
    package var name: String
    /// What it may do.
    package var role: MemberRole
    /// Its X25519 key: the master key is sealed to it.
    package var boxPublicKey: [UInt8]
    /// Its Ed25519 key: it signs log entries (and rosters, for an admin) with it.
    package var signPublicKey: [UInt8]
    /// Unix time after which its signatures are no longer accepted; 0 for never.
    package var expires: UInt64
    /// Whether it is a CI runner (its seed lives in a token, not on a device).
    package var isRunner: Bool

    /// A record of these values; the id is computed from the keys.
    package init(name: String, role: MemberRole, boxPublicKey: [UInt8], signPublicKey: [UInt8], expires: UInt64 = 0, isRunner: Bool = false) {
        self.memberID = MemberKeys.memberID(boxPublicKey: boxPublicKey, signPublicKey: signPublicKey)
        self.name = name
        self.role = role
        self.boxPublicKey = boxPublicKey
        self.signPublicKey = signPublicKey
        self.expires = expires
        self.isRunner = isRunner
    }

    /// The fingerprint its device printed (`MemberKeys.fingerprint`).
    package var fingerprint: String { MemberKeys.fingerprint(boxPublicKey: boxPublicKey, signPublicKey: signPublicKey) }

    /// Whether the record is still valid at `time` (Unix seconds).
    package func isValid(at time: UInt64) -> Bool { expires == 0 || time < expires }

    /// lp(id) ‖ lp(name) ‖ u8 role ‖ lp(box pk) ‖ lp(sign pk) ‖ u64 expires ‖ u8 runner.
    func encode(into w: inout ByteWriter) {
        w.lengthPrefixed(memberID)
        w.lengthPrefixed(Array(name.utf8))
        w.u8(role.rawValue)
        w.lengthPrefixed(boxPublicKey)
        w.lengthPrefixed(signPublicKey)
        w.u64(expires)
        w.u8(isRunner ? 1 : 0)
    }

    /// Reads a record written by `encode`, checking that its id is its keys' id.
    /// - Throws: errSecDecode.
    static func decode(from r: inout ByteReader) throws -> MemberRecord {
        let bad = KeychainError(errSecDecode, "a member record of the team keychain is malformed")
        guard let id = r.lengthPrefixed(max: 64), let nameBytes = r.lengthPrefixed(max: 256), let roleByte = r.u8(),
            let role = MemberRole(rawValue: roleByte), let box = r.lengthPrefixed(max: 64), let sign = r.lengthPrefixed(max: 64),
            let expires = r.u64(), let runner = r.u8(), runner <= 1, box.count == 32, sign.count == 32,
            let name = String(validating: nameBytes, as: UTF8.self)
        else { throw bad }
        let record = MemberRecord(name: name, role: role, boxPublicKey: box, signPublicKey: sign, expires: expires, isRunner: runner == 1)
        guard record.memberID == id else { throw bad }
        return record
    }

    /// The record alone, as `kc_members` stores it for lookups.
    package var encoded: [UInt8] {
        var w = ByteWriter(capacity: 160)
        encode(into: &w)
        return w.bytes
    }

    /// A record from `encoded`. - Throws: errSecDecode.
    package init(encoded: [UInt8]) throws {
        var r = ByteReader(encoded)
        self = try Self.decode(from: &r)
        guard r.isAtEnd else { throw KeychainError(errSecDecode, "a member record of the team keychain is malformed") }
    }
}
