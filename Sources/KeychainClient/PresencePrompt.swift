import POSIXSupport

/// What a front end tells the user when it asks for a proof of user presence
/// (`KeychainSession.presence`): which keychain, what the operation releases (how many
/// items, and which), and why.
public struct PresencePrompt: Sendable, Equatable {
    /// The keychain's path (its password is the proof).
    public let path: String
    /// Every protected item the operation releases, named (label, service or server, and
    /// account), in the order met; a name may repeat (a batch that reads an item twice).
    public let items: [String]
    /// The caller's reason: the query's `kSecUseOperationPrompt` (`kc --prompt TEXT`).
    public let reason: String?

    /// The most names a prompt lists; the rest are counted.
    static let namesShown = 5

    /// Creates a prompt's content.
    public init(path: String, items: [String], reason: String?) {
        self.path = path
        self.items = items
        self.reason = reason
    }

    /// A prompt for one item.
    public init(path: String, item: String, reason: String?) {
        self.init(path: path, items: [item], reason: reason)
    }

    /// The first protected item.
    public var item: String { items.first ?? "(unnamed item)" }

    /// The same prompt with another reason.
    public func with(reason: String?) -> PresencePrompt { PresencePrompt(path: path, items: items, reason: reason) }

    /// The distinct items, in the order met.
    public var distinctItems: [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }

    /// What the password releases: `the secret of "bank" (account "me")`, or
    /// `the secrets of 3 items: "a", "b", "c"` (at most `namesShown` names, then
    /// `and N more`).
    public var releases: String {
        let names = distinctItems
        guard names.count > 1 else { return "the secret of \(Self.plain(names.first ?? item))" }
        var listed = names.prefix(Self.namesShown).map { Self.plain($0) }.joined(separator: ", ")
        if names.count > Self.namesShown { listed += " and \(names.count - Self.namesShown) more" }
        return "the secrets of \(names.count) items: \(listed)"
    }

    /// One line for a terminal or a dialog: the reason (or what is read), what the password
    /// releases, then what to type.
    public var text: String {
        let why = reason.map { "\(Self.plain($0)) (this releases \(releases))." } ?? "Reading \(releases) requires your presence."
        return "\(why) Password for keychain \(path): "
    }

    /// At most 200 characters with every control character escaped (`TerminalSafe`: C0,
    /// DEL, C1, bidi formatting): a reason is the caller's text, an item's name comes from
    /// the keychain, possibly from an import, and both are shown on a terminal.
    static func plain(_ text: String) -> String {
        TerminalSafe.escaped(String(String.UnicodeScalarView(text.unicodeScalars.prefix(200))))
    }
}
