import KeychainCore

/// How a PostgreSQL error becomes a `KeychainError` (`docs/errors.md`): by its SQLSTATE,
/// with the server's primary message and never a parameter value (the detail line, which
/// can quote a key's value, is not read).
package enum PostgresFailure {
    /// The SQLSTATE of a lost or refused connection (class 08), which callers use to tell
    /// "the server went away" from "the server said no".
    package static func isConnectionLoss(_ sqlState: String?) -> Bool {
        sqlState?.hasPrefix("08") ?? true
    }

    /// The error for SQLSTATE `sqlState` with the server's primary `message`.
    /// - 23505 unique violation: errSecDuplicateItem.
    /// - 42501 insufficient privilege, 25006 read-only transaction: errSecReadOnly.
    /// - class 08 (connection exception): errSecNotAvailable.
    /// - anything else: errSecIO.
    package static func error(sqlState: String, message: String, label: String) -> KeychainError {
        switch sqlState {
        case "23505":
            return KeychainError(errSecDuplicateItem, "the item already exists in \(label)")
        case "42501", "25006":
            return KeychainError(
                errSecReadOnly, "\(label) is read-only for this member: \(message)",
                hint: "ask an admin of the team for the writer role")
        case let s where s.hasPrefix("08"):
            return KeychainError(
                errSecNotAvailable, "lost the PostgreSQL server of \(label): \(message)",
                hint: "check that the server is up, then try again")
        default:
            return KeychainError(errSecIO, "the PostgreSQL server of \(label) refused a statement: \(message) (SQLSTATE \(sqlState))")
        }
    }
}
