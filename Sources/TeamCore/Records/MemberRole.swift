import KeychainCore

/// What a member of a team keychain may do (`docs/team.md`): an admin changes membership
/// and re-keys, a writer signs writes, a reader only reads. Every member holds the master
/// key; the role is enforced by the signatures other members check (and, as defence in
/// depth, by PostgreSQL roles).
package enum MemberRole: UInt8, Sendable, CaseIterable {
    case admin = 1
    case writer = 2
    case reader = 3

    /// Its name on the command line and in `kc team members`.
    package var name: String {
        switch self {
        case .admin: "admin"
        case .writer: "writer"
        case .reader: "reader"
        }
    }

    /// The role named `name`. - Throws: errSecParam for any other word.
    package init(name: String) throws {
        guard let role = Self.allCases.first(where: { $0.name == name }) else {
            throw KeychainError(errSecParam, "\"\(name)\" is not a role: use admin, writer or reader")
        }
        self = role
    }

    /// Whether entries signed by a member of this role may change items.
    package var mayWrite: Bool { self != .reader }
}
