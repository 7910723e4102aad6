/// Operation 6, `backup`: a checked copy of the keychain at an absolute path.
public struct BackupRequest: Sendable, Equatable {
    /// Where the copy goes: an absolute path (the agent's working folder is not the client's).
    public var destination: String
    /// Whether an existing file there is replaced.
    public var replacing: Bool

    /// A backup to `destination` (absolute).
    public init(destination: String, replacing: Bool) {
        self.destination = destination
        self.replacing = replacing
    }
}
