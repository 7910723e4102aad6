/// What a front end tells the user when it asks for a proof of user presence
/// (`KeychainSession.presence`): which keychain, which item, and why.
public struct PresencePrompt: Sendable, Equatable {
    /// The keychain's path (its password is the proof).
    public let path: String
    /// The protected item, named (quoted label, service or server).
    public let item: String
    /// The caller's reason: the query's `kSecUseOperationPrompt` (`kc --prompt TEXT`).
    public let reason: String?

    /// Creates a prompt's content.
    public init(path: String, item: String, reason: String?) {
        self.path = path
        self.item = item
        self.reason = reason
    }

    /// One line for a terminal or a dialog: the reason (or what is read), then what to type.
    public var text: String {
        let why = reason.map { Self.plain($0) } ?? "Reading the secret of \(Self.plain(item)) requires your presence."
        return "\(why) Password for keychain \(path): "
    }

    /// Text without control characters, at most 200 characters (a reason is the caller's
    /// text, an item's name comes from the keychain, possibly from an import: both are shown
    /// on a terminal).
    static func plain(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(200).map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
