import POSIXSupport

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

    /// At most 200 characters with every control character escaped (`TerminalSafe`: C0,
    /// DEL, C1, bidi formatting): a reason is the caller's text, an item's name comes from
    /// the keychain, possibly from an import, and both are shown on a terminal.
    static func plain(_ text: String) -> String {
        TerminalSafe.escaped(String(String.UnicodeScalarView(text.unicodeScalars.prefix(200))))
    }
}
