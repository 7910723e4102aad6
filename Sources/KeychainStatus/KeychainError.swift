/// The one error type of kc: an `OSStatus` with a message for the user and, when it helps,
/// a hint saying what to do next.
///
///     throw KeychainError(errSecAuthFailed, "wrong password for ~/.local/share/kc/login.keychain-db")
///
/// The command line prints `kc: <message>` and `kc: hint: <hint>` and exits with
/// `exitCode(for: status)`. An error that came from below (SQLite, a system call) keeps
/// that `cause` for diagnostics (`KC_DEBUG=1`); users see the same message either way.
public struct KeychainError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong underneath, as the layer below reported it.
    public enum Cause: Sendable, Equatable, CustomStringConvertible {
        /// An SQLite result code (extended) and SQLite's message.
        case sqlite(code: Int32, message: String)
        /// A system call's errno.
        case errno(Int32)

        /// `SQLite result code 1555: …` or `errno 28`.
        public var description: String {
            switch self {
            case .sqlite(let code, let message): "SQLite result code \(code): \(message)"
            case .errno(let e): "errno \(e)"
            }
        }
    }

    /// The Apple result code.
    public var status: OSStatus
    /// What went wrong, for a person; never contains a secret.
    public var message: String
    /// The next step, if there is one.
    public var hint: String?
    /// The underlying cause, for diagnostics; not part of equality.
    public var cause: Cause?

    /// Creates an error; the message defaults to Apple's message for the status.
    public init(_ status: OSStatus, _ message: String? = nil, hint: String? = nil, cause: Cause? = nil) {
        self.status = status
        self.message = message ?? SecCopyErrorMessageString(status, nil) ?? "OSStatus \(status)"
        self.hint = hint
        self.cause = cause
    }

    /// `message (status)`.
    public var description: String { "\(message) (\(status))" }

    /// Equal when status, message and hint are: what a user sees.
    public static func == (a: KeychainError, b: KeychainError) -> Bool {
        a.status == b.status && a.message == b.message && a.hint == b.hint
    }
}
