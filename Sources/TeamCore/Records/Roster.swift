import KeychainCore

/// The members of a team keychain at one point of its log, ordered by member id. Only a
/// roster entry signed by an admin of the previous roster changes it, so a server cannot
/// add, hide or alter a member; every item entry names the roster it was written under.
package struct Roster: Equatable, Sendable {
    /// The members, ordered by id.
    package private(set) var members: [MemberRecord]

    /// A roster of these members (ordered here). - Throws: errSecParam for two members with
    /// one id or one name.
    package init(_ members: [MemberRecord]) throws {
        let sorted = members.sorted { $0.memberID.lexicographicallyPrecedes($1.memberID) }
        guard Set(sorted.map(\.memberID)).count == sorted.count else {
            throw KeychainError(errSecParam, "that device is already a member of the team keychain")
        }
        guard Set(sorted.map(\.name)).count == sorted.count else {
            throw KeychainError(errSecParam, "a member of the team keychain already has that name", hint: "choose another name")
        }
        self.members = sorted
    }

    /// The member with this id.
    package func member(_ id: [UInt8]) -> MemberRecord? { members.first { $0.memberID == id } }

    /// The member with this name.
    package func member(named name: String) -> MemberRecord? { members.first { $0.name == name } }

    /// The admins' signing keys valid at `time`.
    package func adminSignKeys(at time: UInt64) -> [[UInt8]] {
        members.filter { $0.role == .admin && $0.isValid(at: time) }.map(\.signPublicKey)
    }

    /// BLAKE2b-256 over the encoded members: what item entries carry.
    package var digest: [UInt8] {
        var w = ByteWriter(capacity: 64 + 160 * members.count)
        w.label("kc team roster v1")
        encode(into: &w)
        return Hashing.blake2b(w.bytes)
    }

    func encode(into w: inout ByteWriter) {
        w.u32(UInt32(members.count))
        for m in members { m.encode(into: &w) }
    }

    static func decode(from r: inout ByteReader) throws -> Roster {
        guard let n = r.u32(), n <= 100_000 else { throw KeychainError(errSecDecode, "a roster of the team keychain is malformed") }
        var members: [MemberRecord] = []
        for _ in 0..<n { members.append(try MemberRecord.decode(from: &r)) }
        let roster = try Roster(members)
        guard roster.members == members else { throw KeychainError(errSecDecode, "a roster of the team keychain is not in order") }
        return roster
    }
}
