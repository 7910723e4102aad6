/// The one error type of kc: an `OSStatus` with a message for the user and, when it helps,
/// a hint saying what to do next.
///
///     throw KeychainError(errSecAuthFailed, "wrong password for ~/.local/share/kc/login.keychain-db")
///
/// The command line prints `kc: <message>` and `kc: hint: <hint>` and exits with
/// `exitCode(for: status)`.
public struct KeychainError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The Apple result code.
    public var status: OSStatus
    /// What went wrong, for a person; never contains a secret.
    public var message: String
    /// The next step, if there is one.
    public var hint: String?

    /// Creates an error; the message defaults to Apple's message for the status.
    public init(_ status: OSStatus, _ message: String? = nil, hint: String? = nil) {
        self.status = status
        self.message = message ?? SecCopyErrorMessageString(status, nil) ?? "OSStatus \(status)"
        self.hint = hint
    }

    /// `message (status)`.
    public var description: String { "\(message) (\(status))" }
}
